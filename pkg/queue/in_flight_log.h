// InFlightLog: the pods the queue has handed out (popped and not yet back or done) and
// the cluster events that arrived meanwhile, so that a pod whose attempt fails can be
// judged against everything it missed (upstream scheduling_queue.go: inFlightPods and
// inFlightEvents, read by determineSchedulingHintForInFlightPod).
//
// Events get consecutive sequence numbers; a popped pod remembers the first sequence
// number after its pop, so its events are exactly those from there on. Events older than
// every in-flight pod's start are dropped, and nothing is recorded while no pod is in
// flight, so the log stays as short as the longest attempt.
//
// Not thread-safe: PriorityQueue keeps it under its own mutex.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_event.h"
#include "pkg/util/clock.h"

namespace ksched::queue {

// An event received while some pod was in flight.
struct InFlightEvent {
  framework::ClusterEvent event;
  std::shared_ptr<const void> old_obj, new_obj;
  std::string target;           // set: concerns only this pod (its own update, Activate)
  bool force_activate = false;  // Activate() of the target: requeue it immediately
};

// A popped pod until it is done or back in the queue; also what /debug/pods shows for
// it.
struct InFlightPod {
  uint64_t start = 0;  // sequence number of the first event it must see; set by Start()
  api::PodPtr pod;
  int attempts = 0;
  Clock::time_point initial_attempt_timestamp{};
  Clock::time_point popped_at{};
};

class InFlightLog {
 public:
  // Starts tracking a popped pod by id (UID, or namespace/name without one). A stale
  // tracking of the same id is ended first: its older start would shadow this attempt's
  // events.
  void Start(std::string id, InFlightPod pod);
  // Ends the tracking of `id` (no-op if not tracked) and drops the events no remaining
  // in-flight pod needs.
  void End(const std::string& id);
  bool Tracking(const std::string& id) const { return pods_.contains(id); }

  // Records an event for the pods in flight now. Dropped if none is, or if `target` is
  // set and that pod is not in flight: no attempt would ever read it.
  void Record(const framework::ClusterEvent& event, std::shared_ptr<const void> old_obj,
              std::shared_ptr<const void> new_obj, std::string target, bool force_activate);

  // Walks one pod's events; see EventsOf.
  class EventIterator {
   public:
    const InFlightEvent& operator*() const { return log_->events_[seq_ - log_->first_seq_]; }
    EventIterator& operator++() {
      ++seq_;
      SkipOthers();
      return *this;
    }
    bool operator==(const EventIterator& o) const { return seq_ == o.seq_; }

   private:
    friend class InFlightLog;
    EventIterator(const InFlightLog* log, const std::string* id, uint64_t seq) : log_(log), id_(id), seq_(seq) {
      SkipOthers();
    }
    // Steps over events targeted at another pod.
    void SkipOthers() {
      while (seq_ < log_->NextSeq()) {
        const std::string& target = (**this).target;
        if (target.empty() || target == *id_) return;
        ++seq_;
      }
    }
    const InFlightLog* log_;
    const std::string* id_;
    uint64_t seq_;
  };
  struct EventRange {
    EventIterator first, last;
    EventIterator begin() const { return first; }
    EventIterator end() const { return last; }
  };
  // The events recorded since `id` was started that concern it (untargeted, or targeted
  // at it), oldest first: `for (const InFlightEvent& e : log.EventsOf(id))`. Empty if
  // `id` is not tracked. A range rather than a callback so the caller's loop body stays
  // under its own lock annotations. `id` must outlive the range, and the log must not
  // change while it is walked.
  EventRange EventsOf(const std::string& id) const {
    auto it = pods_.find(id);
    uint64_t from = it == pods_.end() ? NextSeq() : std::max(it->second.start, first_seq_);
    return EventRange{EventIterator(this, &id, from), EventIterator(this, &id, NextSeq())};
  }
  // A temporary id would dangle before the loop starts (C++20 range-for).
  EventRange EventsOf(std::string&& id) const = delete;

  // In-flight pods by id.
  const std::unordered_map<std::string, InFlightPod>& pods() const { return pods_; }
  size_t EventCount() const { return events_.size(); }

 private:
  uint64_t NextSeq() const { return first_seq_ + events_.size(); }

  std::deque<InFlightEvent> events_;
  uint64_t first_seq_ = 0;  // sequence number of events_.front()
  std::unordered_map<std::string, InFlightPod> pods_;
  // Start sequence -> number of in-flight pods with that start (begin() is the oldest).
  std::map<uint64_t, size_t> starts_;
};

}  // namespace ksched::queue
