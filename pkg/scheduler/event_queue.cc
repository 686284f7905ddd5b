#include "pkg/scheduler/event_queue.h"

#include <atomic>
#include <cstdio>
#include <optional>
#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/time_format.h"
#include "pkg/util/log.h"

namespace ksched::scheduler {
namespace {

constexpr size_t kNoteLengthLimit = 1024;  // upstream's validation NoteLengthLimit

std::atomic<uint64_t> event_counter{0};

}  // namespace

PendingEvent::PendingEvent(const api::Pod& regarding, const api::Pod* related, std::string_view scheduler_name,
                           bool warning, std::string_view reason, std::string_view action, std::string_view note,
                           Clock::wall_time time)
    : time_(time),
      sequence_(static_cast<uint16_t>(event_counter.fetch_add(1, std::memory_order_relaxed) & 0xfff)),
      warning_(warning),
      has_related_(related != nullptr) {
  const bool truncate = note.size() > kNoteLengthLimit;
  if (truncate) note = note.substr(0, kNoteLengthLimit - 4);
  const std::string_view fields[kNumFields] = {
      scheduler_name,
      reason,
      action,
      note,
      regarding.metadata.namespace_,
      regarding.metadata.name,
      regarding.metadata.uid,
      regarding.metadata.resource_version,
      related ? std::string_view(related->metadata.namespace_) : std::string_view(),
      related ? std::string_view(related->metadata.name) : std::string_view(),
      related ? std::string_view(related->metadata.uid) : std::string_view(),
  };
  size_t size = truncate ? 4 : 0;
  for (std::string_view f : fields) size += f.size();
  text_.reserve(size);
  for (int i = 0; i < kNumFields; ++i) {
    text_.append(fields[i]);
    if (i == kNote && truncate) text_.append(" ...");
    end_[i] = static_cast<uint32_t>(text_.size());
  }
}

std::string PendingEvent::Path() const {
  return "/apis/events.k8s.io/v1/namespaces/" + std::string(Get(kNamespace)) + "/events";
}

std::string PendingEvent::PodKey() const {
  std::string key(Get(kNamespace));
  key += '/';
  key += Get(kName);
  return key;
}

std::string PendingEvent::Body(std::string_view hostname) const {
  char suffix[48];
  std::snprintf(suffix, sizeof(suffix), ".%llx%llx", static_cast<unsigned long long>(time_.time_since_epoch().count()),
                static_cast<unsigned long long>(sequence_));
  std::string name(Get(kName));
  name += suffix;
  std::string instance(Get(kSchedulerName));
  instance += '-';
  instance += hostname;
  const std::string event_time = api::FormatMicroTime(time_);
  api::PodEvent e{.name = name,
                  .event_time = event_time,
                  .reporting_controller = Get(kSchedulerName),
                  .reporting_instance = instance,
                  .action = Get(kAction),
                  .reason = Get(kReason),
                  .note = Get(kNote),
                  .warning = warning_,
                  .regarding = {Get(kNamespace), Get(kName), Get(kUid), Get(kResourceVersion)}};
  if (has_related_) e.related = api::PodReference{Get(kRelatedNamespace), Get(kRelatedName), Get(kRelatedUid), {}};
  return api::EncodePodEvent(e);
}

struct EventQueue::State {
  explicit State(EventQueueOptions o) : options(std::move(o)) {}
  const EventQueueOptions options;
  mutable Mutex mu;
  std::deque<PendingEvent> waiting GUARDED_BY(mu);
  size_t sending GUARDED_BY(mu) = 0;
  bool pumping GUARDED_BY(mu) = false;
  int64_t dropped GUARDED_BY(mu) = 0;
  int64_t holds GUARDED_BY(mu) = 0;  // Hold() calls not yet Released
};

EventQueue::EventQueue(EventQueueOptions options) : state_(std::make_shared<State>(std::move(options))) {}

void EventQueue::Add(PendingEvent e) {
  {
    MutexLock l(state_->mu);
    if (state_->waiting.size() >= state_->options.max_waiting) {
      const PendingEvent& oldest = state_->waiting.front();
      if (++state_->dropped % 1000 == 1)
        KLOG(WARNING) << "events: " << state_->dropped << " event(s) dropped so far, queue full ("
                      << state_->options.max_waiting << "), e.g. " << oldest.reason() << " for pod "
                      << oldest.PodKey();
      state_->waiting.pop_front();
    }
    state_->waiting.push_back(std::move(e));
  }
  Pump(state_);
}

std::shared_ptr<const void> EventQueue::Hold() {
  {
    MutexLock l(state_->mu);
    ++state_->holds;
  }
  // Any non-null pointer: what matters is the deleter, which runs with the last copy.
  return std::shared_ptr<const void>(state_.get(), [s = state_](const void*) { Release(s); });
}

// The count changes under the mutex Pump checks it under, so a pass that saw a hold
// either ends before this runs (and this Pump starts another) or sees it gone.
void EventQueue::Release(const std::shared_ptr<State>& s) {
  {
    MutexLock l(s->mu);
    if (--s->holds > 0 || s->waiting.empty()) return;
  }
  Pump(s);
}

size_t EventQueue::Waiting() const {
  MutexLock l(state_->mu);
  return state_->waiting.size();
}

void EventQueue::Pump(const std::shared_ptr<State>& s) {
  {
    MutexLock l(s->mu);
    if (s->pumping) return;
    s->pumping = true;
  }
  for (;;) {
    std::optional<PendingEvent> next;
    {
      MutexLock l(s->mu);
      if (s->waiting.empty() || s->sending >= s->options.max_sending ||
          (s->holds > 0 &&
           s->options.clock->WallNow() - s->waiting.front().time() < s->options.max_hold)) {
        s->pumping = false;
        return;
      }
      next.emplace(std::move(s->waiting.front()));
      s->waiting.pop_front();
      ++s->sending;
    }
    Send(s, *next);
  }
}

void EventQueue::Send(const std::shared_ptr<State>& s, const PendingEvent& e) {
  s->options.client->Send(
      {.verb = client::Verb::kPost,
       .path = e.Path(),
       .body = e.Body(s->options.hostname),
       // Kept through an apiserver restart, as upstream's event sink retries a failed
       // write (12 tries); a repeat that did land the first time is an AlreadyExists.
       .background = true,
       .retry_connection_errors = true},
      [s, key = e.PodKey()](StatusOr<client::Response> r) {
        if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists)
          KLOG_V(2) << "could not record event for pod " << key << ": " << r.status().ToString();
        {
          MutexLock l(s->mu);
          --s->sending;
        }
        Pump(s);
      });
}

}  // namespace ksched::scheduler
