#include "pkg/scheduler/preemptor.h"

#include <string>

#include "pkg/util/log.h"

namespace ksched::scheduler {

void Preemptor::PreemptVictim(const api::PodPtr& victim, const api::PodPtr& preemptor, std::string_view node,
                              std::function<void(ksched::Status)> done) {
  {
    MutexLock lock(mu_);
    ++in_flight_;
    if (record_victims_) victims_[preemptor->metadata.uid].push_back(victim->Key());
  }
  std::string note = "Preempted by " + preemptor->Key() + " on node " + std::string(node);
  writer_.EvictPod(*victim, preemptor->spec.scheduler_name,
                   [this, victim, preemptor, note = std::move(note), done = std::move(done)](ksched::Status s) {
                     if (s.ok()) {
                       KLOG_V(2) << "Preemptor Pod preempted victim Pod, preemptor=\"" << preemptor->Key()
                                 << "\" victim=\"" << victim->Key() << "\"";
                       // upstream PreemptPod: the event is on the victim, about the preemptor.
                       writer_.RecordEvent(*victim, preemptor->spec.scheduler_name, /*warning=*/false, "Preempted",
                                           "Preempting", note, preemptor.get());
                     }
                     done(s);
                     MutexLock lock(mu_);
                     if (--in_flight_ == 0) idle_.notify_all();
                   });
}

void Preemptor::ClearNomination(const api::PodPtr& pod) {
  if (queue_ != nullptr) queue_->nominator().DeleteNominatedPodIfExists(*pod);
  writer_.ClearNominatedNodeName(*pod);
}

void Preemptor::PreemptionFailed(const api::PodPtr& preemptor) {
  ClearNomination(preemptor);
  if (queue_ != nullptr) {
    api::PodPtr pods[] = {preemptor};
    queue_->Activate(pods);
  }
}

std::vector<std::string> Preemptor::TakeVictims(const std::string& preemptor_uid) {
  MutexLock lock(mu_);
  auto it = victims_.find(preemptor_uid);
  if (it == victims_.end()) return {};
  std::vector<std::string> out = std::move(it->second);
  victims_.erase(it);
  return out;
}

void Preemptor::WaitIdle() {
  MutexLock lock(mu_);
  idle_.wait(lock, [this]() NO_THREAD_SAFETY_ANALYSIS { return in_flight_ == 0; });
}

}  // namespace ksched::scheduler
