// EventQueue: the scheduler's events on their way to the API server, as upstream's
// event broadcaster (client-go tools/events, eventBroadcasterImpl.recordToSink) sends
// every event it is given. The API client starts background requests only while no bind
// waits, so during a burst of binds events wait; they wait here, packed (about 300 bytes
// each instead of a queued request's 2 KB), and only a few at a time are handed to the
// client. A burst of 30,000 binds thus keeps its 30,000 Scheduled events in a few MB and
// sends them all once the binds are done, instead of dropping what overflows the
// client's queue.
// The client's rule sees only the requests waiting in it, and a scheduler that binds as
// fast as the server answers leaves that queue empty most of the time, so events went
// out between binds and cost the server about as much as the binds themselves. The
// writer therefore holds the queue (Hold) while its binds and evictions are in
// flight: events wait until the burst is over, or until the oldest has waited max_hold,
// so under a sustained load they still go out, late rather than never. (Upstream's
// recordToSink writes one event at a time and drops what its 1,000-slot queue cannot
// take, which also puts a burst's binds first.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "pkg/client/api_client.h"
#include "pkg/api/types.h"
#include "pkg/util/clock.h"
#include "pkg/util/mutex.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::scheduler {

// One events.k8s.io/v1 Event about a pod, its text packed into one buffer. The event's
// name ("<pod>.<hex wall nanos><hex counter>", unique as client-go's) and its JSON are
// made when it is sent.
class PendingEvent {
 public:
  // `note` is truncated to the API's 1 KiB limit with " ...". `related`: a second pod
  // the event is about (the preemptor, on a victim's Preempted event).
  PendingEvent(const api::Pod& regarding, const api::Pod* related, std::string_view scheduler_name, bool warning,
               std::string_view reason, std::string_view action, std::string_view note, Clock::wall_time time);

  // POST path and body, with `hostname` in reportingInstance ("<scheduler>-<hostname>").
  std::string Path() const;
  std::string Body(std::string_view hostname) const;
  std::string PodKey() const;  // "namespace/name", for logs
  std::string_view reason() const { return Get(kReason); }
  std::string_view note() const { return Get(kNote); }
  Clock::wall_time time() const { return time_; }

 private:
  enum Field : uint8_t {
    kSchedulerName,
    kReason,
    kAction,
    kNote,
    kNamespace,
    kName,
    kUid,
    kResourceVersion,
    kRelatedNamespace,
    kRelatedName,
    kRelatedUid,
    kNumFields
  };
  std::string_view Get(Field f) const {
    const uint32_t begin = f == 0 ? 0 : end_[f - 1];
    return std::string_view(text_).substr(begin, end_[f] - begin);
  }

  std::string text_;                       // the fields, one after another
  std::array<uint32_t, kNumFields> end_{};  // where each ends in text_
  Clock::wall_time time_;
  uint16_t sequence_ = 0;  // for the name
  bool warning_ = false;
  bool has_related_ = false;
};

struct EventQueueOptions {
  client::ApiClient* client = nullptr;  // background requests
  std::string hostname;
  // Events handed to the client and not yet answered.
  size_t max_sending = 32;
  // Events waiting here; past it the oldest is dropped with a warning, as upstream's
  // broadcaster drops what its queue cannot take.
  size_t max_waiting = 200000;
  // While a hold is on (Hold), events wait here until the oldest is this old.
  std::chrono::seconds max_hold{10};
  Clock* clock = &RealClock();  // the events' ages against their times
};

class EventQueue {
 public:
  explicit EventQueue(EventQueueOptions options);

  // Queues `e` and sends what the client may take now. Thread-safe; may be called from
  // the client's I/O thread.
  void Add(PendingEvent e);
  // Events waiting here (not yet handed to the client).
  size_t Waiting() const;

  // A hold: while any is alive, events wait here (up to max_hold) instead of taking the
  // API server's time from the writes that hold them; when the last one goes, what waits
  // is sent. Copyable, so a request's completion can carry it; it ends with its last
  // copy, also when the completion is dropped unrun. Thread-safe.
  std::shared_ptr<const void> Hold();

 private:
  struct State;
  // Hands waiting events to the client up to max_sending. One pass at a time: an answer
  // that arrives inside Send(), or on another thread, leaves the rest to the pass that
  // is running.
  static void Pump(const std::shared_ptr<State>& s);
  static void Send(const std::shared_ptr<State>& s, const PendingEvent& e);
  static void Release(const std::shared_ptr<State>& s);

  std::shared_ptr<State> state_;  // shared with the client's callbacks
};

}  // namespace ksched::scheduler
