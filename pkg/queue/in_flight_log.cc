#include "pkg/queue/in_flight_log.h"

#include <utility>

namespace ksched::queue {

void InFlightLog::Start(std::string id, InFlightPod pod) {
  End(id);
  pod.start = NextSeq();
  // Starts are non-decreasing, so the new one is always at the end of the map.
  starts_.emplace_hint(starts_.end(), pod.start, 0)->second++;
  pods_.insert_or_assign(std::move(id), std::move(pod));
}

void InFlightLog::End(const std::string& id) {
  auto it = pods_.find(id);
  if (it == pods_.end()) return;
  auto start = starts_.find(it->second.start);
  pods_.erase(it);
  if (--start->second > 0) return;
  starts_.erase(start);
  // Events older than the oldest in-flight pod's start can no longer matter to anyone.
  uint64_t keep_from = starts_.empty() ? NextSeq() : starts_.begin()->first;
  while (first_seq_ < keep_from && !events_.empty()) {
    events_.pop_front();
    ++first_seq_;
  }
}

void InFlightLog::Record(const framework::ClusterEvent& event, std::shared_ptr<const void> old_obj,
                         std::shared_ptr<const void> new_obj, std::string target, bool force_activate) {
  if (pods_.empty()) return;
  if (!target.empty() && !pods_.contains(target)) return;
  events_.push_back(InFlightEvent{.event = event,
                                  .old_obj = std::move(old_obj),
                                  .new_obj = std::move(new_obj),
                                  .target = std::move(target),
                                  .force_activate = force_activate});
}

}  // namespace ksched::queue
