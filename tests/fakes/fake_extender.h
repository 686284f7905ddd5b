// A scripted framework::Extender for tests of the code that calls extenders (the
// scheduling algorithm, DefaultPreemption, the binding cycle): each verb's answer comes
// from a function the test sets, and every call is counted.
//
//   FakeExtender ext("http://ext");
//   ext.filter = [](const api::Pod&, std::span<const cache::NodeInfoPtr> nodes) { ... };
//   ext.scores = {{"node-3", 10}};
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "pkg/framework/extender.h"

namespace ksched::testing {

class FakeExtender final : public framework::Extender {
 public:
  using FilterFn = std::function<StatusOr<framework::ExtenderFilterResult>(const api::Pod&,
                                                                           std::span<const cache::NodeInfoPtr>)>;
  using PreemptFn = std::function<StatusOr<framework::NodeVictims>(const api::Pod&, const framework::NodeVictims&)>;

  explicit FakeExtender(std::string name) : name_(std::move(name)) {}

  // Verbs offered: a null function (or, for scores, !prioritizer) means none.
  FilterFn filter;
  bool prioritizer = false;
  std::map<std::string, int64_t> scores;  // node -> score; prioritize answers these
  Status prioritize_error;                // when set, prioritize fails with it
  std::function<Status(const api::Pod&, const std::string&)> bind;
  PreemptFn preempt;
  int64_t weight = 1;
  bool ignorable = false;
  std::set<std::string> interested_in;  // pod names; empty: every pod

  std::atomic<int> filter_calls{0}, prioritize_calls{0}, bind_calls{0}, preempt_calls{0};

  // Rejects the named nodes with `reason`; `unresolvable` ones as UnschedulableAndUnresolvable.
  static FilterFn Rejecting(std::set<std::string> failed, std::set<std::string> unresolvable = {},
                            std::string reason = "rejected by the extender") {
    return [=](const api::Pod&, std::span<const cache::NodeInfoPtr> nodes) -> StatusOr<framework::ExtenderFilterResult> {
      framework::ExtenderFilterResult r;
      for (const cache::NodeInfoPtr& n : nodes) {
        if (failed.contains(n->name())) {
          r.failed[n->name()] = reason;
        } else if (unresolvable.contains(n->name())) {
          r.failed_and_unresolvable[n->name()] = reason;
        } else {
          r.passed.push_back(n->name());
        }
      }
      return r;
    };
  }

  const std::string& Name() const override { return name_; }
  bool IsInterested(const api::Pod& pod) const override {
    return interested_in.empty() || interested_in.contains(pod.metadata.name);
  }
  bool IsFilter() const override { return static_cast<bool>(filter); }
  bool IsPrioritizer() const override { return prioritizer; }
  bool IsBinder() const override { return static_cast<bool>(bind); }
  bool SupportsPreemption() const override { return static_cast<bool>(preempt); }
  bool IsIgnorable() const override { return ignorable; }
  int64_t Weight() const override { return weight; }

  StatusOr<framework::ExtenderFilterResult> Filter(const api::Pod& pod,
                                                   std::span<const cache::NodeInfoPtr> nodes) override {
    ++filter_calls;
    return filter(pod, nodes);
  }
  std::future<StatusOr<std::vector<framework::HostPriority>>> Prioritize(
      const api::Pod&, std::span<const cache::NodeInfoPtr> nodes) override {
    ++prioritize_calls;
    std::promise<StatusOr<std::vector<framework::HostPriority>>> p;
    if (!prioritize_error.ok()) {
      p.set_value(prioritize_error);
    } else {
      std::vector<framework::HostPriority> out;
      for (const cache::NodeInfoPtr& n : nodes) {
        auto it = scores.find(n->name());
        if (it != scores.end()) out.push_back({n->name(), it->second});
      }
      p.set_value(std::move(out));
    }
    return p.get_future();
  }
  Status Bind(const api::Pod& pod, const std::string& node) override {
    ++bind_calls;
    return bind(pod, node);
  }
  StatusOr<framework::NodeVictims> ProcessPreemption(const api::Pod& pod, const framework::NodeVictims& candidates,
                                                     const cache::Snapshot&) override {
    ++preempt_calls;
    return preempt(pod, candidates);
  }

 private:
  std::string name_;
};

}  // namespace ksched::testing
