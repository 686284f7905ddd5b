#include "pkg/framework/plugins/coscheduling/coscheduling.h"

#include <algorithm>
#include <utility>

#include "pkg/api/workloads.h"
#include "pkg/framework/runtime/plugin_args.h"
#include "pkg/util/log.h"

namespace ksched::framework::plugins::coscheduling {
namespace {

// Upstream util.DefaultWaitTime: the wait when neither the group nor the args set one.
constexpr std::chrono::seconds kDefaultWaitTime{60};
// go-cache's default expiration in NewPodGroupManager, for a minResources pass when
// permitWaitingTimeSeconds is 0.
constexpr std::chrono::seconds kDefaultResourceCheckTtl{3};
// A group is not admitted this close to its members' timeout (see Permit).
constexpr std::chrono::milliseconds kAdmitMargin{500};
// Permits between two sweeps of the per-group state.
constexpr int kSweepEvery = 256;

std::string_view GroupLabel(const api::Pod& pod) {
  const std::string* v = pod.metadata.labels.Get(api::kPodGroupLabel);
  return v == nullptr ? std::string_view() : std::string_view(*v);
}

std::string PodGroupKey(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

// A pod's state in this plugin: set when its Permit made it the first member to wait.
struct PermitState final : StateData {
  std::unique_ptr<StateData> Clone() const override { return std::make_unique<PermitState>(*this); }
  bool activate = false;
};

// "map[cpu:2000m memory:1073741824]": the resources a cluster is short of, cpu in
// millicores and the rest in units, in the order cpu, memory, ephemeral-storage, pods,
// then the extended resources.
std::string FormatGap(const std::vector<std::pair<std::string, int64_t>>& gap) {
  std::string out = "map[";
  for (size_t i = 0; i < gap.size(); ++i) {
    if (i > 0) out += ' ';
    out += gap[i].first;
    out += ':';
    out += gap[i].first == "cpu" ? std::to_string(gap[i].second) + "m" : std::to_string(gap[i].second);
  }
  out += ']';
  return out;
}

}  // namespace

StatusOr<Args> DecodeArgs(const config::PluginArgs& raw) {
  Args a;
  runtime::PluginArgsReader r(Coscheduling::kName, raw);
  r.Optional("permitWaitingTimeSeconds", &a.permit_waiting_time_seconds)
      .Optional("podGroupBackoffSeconds", &a.pod_group_backoff_seconds)
      .Optional("podGroupRejectPercentage", &a.pod_group_reject_percentage);
  // scheduler-plugins apis/config/validation ValidateCoschedulingArgs.
  if (a.permit_waiting_time_seconds < 0)
    r.Invalid("permitWaitingTimeSeconds", a.permit_waiting_time_seconds, "must be greater than 0");
  if (a.pod_group_backoff_seconds < 0)
    r.Invalid("podGroupBackoffSeconds", a.pod_group_backoff_seconds, "must be greater than 0");
  if (a.pod_group_reject_percentage < 0 || a.pod_group_reject_percentage > 100)
    r.Invalid("podGroupRejectPercentage", a.pod_group_reject_percentage, "must be between 0 and 100");
  if (ksched::Status s = r.Done(); !s.ok()) return s;
  return a;
}

Coscheduling::Coscheduling(Args args, Handle& handle, Clock* clock)
    : args_(args),
      handle_(handle),
      clock_(*clock),
      steady_to_wall_(clock->WallNow().time_since_epoch() -
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          clock->Now().time_since_epoch())) {}

StatusOr<std::unique_ptr<Plugin>> Coscheduling::New(const config::PluginArgs& args, Handle& handle) {
  auto a = DecodeArgs(args);
  if (!a.ok()) return a.status();
  return std::unique_ptr<Plugin>(std::make_unique<Coscheduling>(*a, handle));
}

Coscheduling::GroupRef Coscheduling::GroupOf(const api::Pod& pod) const {
  GroupRef ref;
  ref.name = GroupLabel(pod);
  if (ref.name.empty()) return ref;
  ref.key = PodGroupKey(pod.metadata.namespace_, ref.name);
  ref.group = handle_.Lister().PodGroupNamed(pod.metadata.namespace_, ref.name);
  return ref;
}

std::function<bool(const api::Pod&)> Coscheduling::SameGroup(const api::Pod& pod, std::string_view group_name) {
  return [ns = pod.metadata.namespace_, name = std::string(group_name)](const api::Pod& other) {
    return other.metadata.namespace_ == ns && GroupLabel(other) == name;
  };
}

int Coscheduling::AssignedLocked(const GroupRef& ref, const std::vector<api::PodPtr>& members) const {
  auto it = permitted_.find(ref.key);
  int n = 0;
  for (const api::PodPtr& m : members) {
    if (!m->spec.node_name.empty() || (it != permitted_.end() && it->second.contains(m->metadata.uid))) ++n;
  }
  return n;
}

Coscheduling::GroupProgress Coscheduling::Progress(const api::Pod& pod) const {
  GroupRef ref = GroupOf(pod);
  if (ref.group == nullptr) return {};
  auto members = handle_.Lister().PodGroupMembers(pod.metadata.namespace_, ref.name);
  MutexLock lock(mu_);
  return {AssignedLocked(ref, members), ref.group->min_member};
}

// ---- QueueSort ---------------------------------------------------------------------------

std::chrono::system_clock::time_point Coscheduling::SortTime(const QueuedPodInfo& info) const {
  const auto own = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          info.initial_attempt_timestamp.time_since_epoch()) +
      steady_to_wall_);
  std::string_view name = GroupLabel(info.pod());
  if (name.empty()) return own;
  {
    MutexLock lock(mu_);
    auto it = last_failure_.find(PodGroupKey(info.pod().metadata.namespace_, name));
    if (it != last_failure_.end()) return it->second;
  }
  api::PodGroupPtr group = handle_.Lister().PodGroupNamed(info.pod().metadata.namespace_, name);
  if (group == nullptr || !group->creation_time) return own;
  return *group->creation_time;
}

bool Coscheduling::Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const int32_t pa = a.pod_info.priority;
  const int32_t pb = b.pod_info.priority;
  if (pa != pb) return pa > pb;
  const auto ta = SortTime(a);
  const auto tb = SortTime(b);
  if (ta == tb) return a.Key() < b.Key();
  return ta < tb;
}

// ---- PreFilter ---------------------------------------------------------------------------

Status Coscheduling::CheckClusterResource(const GroupRef& ref) const {
  // upstream core.go CheckClusterResource: the free resources of every node, the group's
  // own pods counted as free, pooled over the cluster against minResources plus
  // minMember pods. No per-node fit is checked.
  cache::Resource want = cache::Resource::FromList(ref.group->min_resources);
  want.allowed_pod_number = ref.group->min_member;
  std::vector<std::pair<std::string, int64_t>> left;  // name -> amount still wanted
  auto add = [&](std::string name, int64_t v) {
    if (v > 0) left.emplace_back(std::move(name), v);
  };
  add("cpu", want.milli_cpu);
  add("memory", want.memory);
  add("ephemeral-storage", want.ephemeral_storage);
  add("pods", want.allowed_pod_number);
  for (const auto& [name, v] : want.scalar) add(name, v);
  if (left.empty()) return Status();
  for (const cache::NodeInfoPtr& node : handle_.Snapshot().List()) {
    if (node == nullptr || node->node() == nullptr) continue;
    cache::Resource used = node->requested();
    int64_t pods = static_cast<int64_t>(node->pods().size());
    for (const cache::PodEntry& e : node->pods()) {
      if (e.pod->metadata.namespace_ != ref.group->metadata.namespace_ || GroupLabel(*e.pod) != ref.name) continue;
      used.Sub(e.request.request);
      --pods;
    }
    const cache::Resource& alloc = node->allocatable();
    for (auto& [name, amount] : left) {
      int64_t free = 0;
      if (name == "cpu") free = alloc.milli_cpu - used.milli_cpu;
      else if (name == "memory") free = alloc.memory - used.memory;
      else if (name == "ephemeral-storage") free = alloc.ephemeral_storage - used.ephemeral_storage;
      else if (name == "pods") free = alloc.allowed_pod_number - pods;
      else free = alloc.Scalar(name) - used.Scalar(name);
      amount -= free;
    }
    std::erase_if(left, [](const auto& e) { return e.second <= 0; });
    if (left.empty()) return Status();
  }
  return Status(Code::kUnschedulableAndUnresolvable, "resource gap: " + FormatGap(left));
}

Status Coscheduling::PreFilter(CycleState& state, const api::Pod& pod, PreFilterResult& result) {
  // upstream core.go PodGroupManager.PreFilter; any failure is UnschedulableAndUnresolvable
  // so preemption is not tried for it.
  GroupRef ref = GroupOf(pod);
  if (ref.group == nullptr) return Status();
  {
    MutexLock lock(mu_);
    auto it = backed_off_.find(ref.key);
    if (it != backed_off_.end()) {
      if (clock_.Now() < it->second)
        return Status(Code::kUnschedulableAndUnresolvable, "podGroup " + ref.key + " failed recently");
      backed_off_.erase(it);
    }
  }
  auto members = handle_.Lister().PodGroupMembers(pod.metadata.namespace_, ref.name);
  const int64_t count = static_cast<int64_t>(members.size());
  const int64_t min_member = ref.group->min_member;
  if (count < min_member) {
    return Status(Code::kUnschedulableAndUnresolvable,
                  "pre-filter pod " + pod.metadata.name + " cannot find enough sibling pods, current pods number: " +
                      std::to_string(count) + ", minMember of group: " + std::to_string(min_member));
  }
  int64_t gated = 0;
  for (const api::PodPtr& m : members) gated += m->spec.scheduling_gates.empty() ? 0 : 1;
  if (count - gated < min_member) {
    return Status(Code::kUnschedulableAndUnresolvable,
                  "pre-filter pod " + pod.metadata.name + " cannot proceed due to gated pods in the same PodGroup");
  }
  if (ref.group->min_resources.empty()) return Status();
  {
    MutexLock lock(mu_);
    auto it = resources_checked_.find(ref.key);
    if (it != resources_checked_.end()) {
      if (clock_.Now() < it->second) return Status();
      resources_checked_.erase(it);
    }
  }
  if (Status s = CheckClusterResource(ref); !s.IsSuccess()) return s;
  const auto ttl = args_.permit_waiting_time_seconds > 0 ? std::chrono::seconds(args_.permit_waiting_time_seconds)
                                                          : kDefaultResourceCheckTtl;
  MutexLock lock(mu_);
  resources_checked_.try_emplace(ref.key, clock_.Now() + ttl);  // an unexpired entry is kept
  return Status();
}

// ---- PostFilter --------------------------------------------------------------------------

Status Coscheduling::PostFilter(CycleState& state, const api::Pod& pod, const NodeToStatusMap& filtered,
                                PostFilterResult& result) {
  // upstream coscheduling.go PostFilter.
  GroupRef ref = GroupOf(pod);
  if (ref.group == nullptr) return Status(Code::kUnschedulable, "can not find pod group");
  auto members = handle_.Lister().PodGroupMembers(pod.metadata.namespace_, ref.name);
  const int min_member = ref.group->min_member;
  // Upstream's text, then which member brought the group down and why.
  const std::string why = "optimistic rejection in PostFilter (gang " + ref.key + ": pod " + pod.metadata.name +
                          " is unschedulable: " +
                          NodesAvailableMessage(static_cast<int>(handle_.Snapshot().NumNodes()), filtered) + ")";
  {
    // Counting, forgetting and rejecting under one lock: a Permit on the scheduling
    // thread never counts a member this rejects (it would admit a group in part).
    MutexLock lock(mu_);
    const int assigned = AssignedLocked(ref, members);
    if (assigned >= min_member) return Status(Code::kUnschedulable);
    // Few members missing: the group is not given up for one of them.
    const double not_assigned = min_member > 0 ? static_cast<double>(min_member - assigned) / min_member : 0;
    if (not_assigned <= args_.pod_group_reject_percentage / 100.0) return Status(Code::kUnschedulable);
    permitted_.erase(ref.key);
    RejectWaitingLocked(pod, ref, why);
    if (args_.pod_group_backoff_seconds > 0 && static_cast<int>(members.size()) >= min_member)
      backed_off_.try_emplace(ref.key, clock_.Now() + std::chrono::seconds(args_.pod_group_backoff_seconds));
    resources_checked_.erase(ref.key);
    last_failure_[ref.key] = clock_.WallNow();
    EndWaitLocked(ref.key, "member_unschedulable");
  }
  return Status(Code::kUnschedulable, "PodGroup " + ref.key + " gets rejected due to Pod " + pod.metadata.name +
                                          " is unschedulable even after PostFilter");
}

// ---- Permit ------------------------------------------------------------------------------

std::chrono::milliseconds Coscheduling::WaitTime(const api::PodGroup& group) const {
  // upstream util.GetWaitTimeDuration, with the plugin keeping its args' wait when the
  // group says 0.
  if (group.schedule_timeout_seconds && *group.schedule_timeout_seconds > 0)
    return std::chrono::seconds(*group.schedule_timeout_seconds);
  if (args_.permit_waiting_time_seconds > 0) return std::chrono::seconds(args_.permit_waiting_time_seconds);
  return kDefaultWaitTime;
}

Status Coscheduling::Permit(CycleState& state, const api::Pod& pod, std::string_view node_name,
                           std::chrono::milliseconds& timeout) {
  GroupRef ref = GroupOf(pod);
  if (ref.name.empty()) return Status();
  if (ref.group == nullptr) return Status(Code::kUnschedulable, "PodGroup not found");
  auto members = handle_.Lister().PodGroupMembers(pod.metadata.namespace_, ref.name);
  const int min_member = ref.group->min_member;
  int assigned = 0;
  bool first = false;
  Clock::time_point deadline{};
  {
    MutexLock lock(mu_);
    SweepLocked();
    auto& uids = permitted_[ref.key];
    uids.insert(pod.metadata.uid);
    // Drop members that are gone or bound (a bound one counts by its node), so the set
    // holds only assumed pods and never outgrows the group.
    std::erase_if(uids, [&](const std::string& uid) {
      if (uid == pod.metadata.uid) return false;
      auto m = std::find_if(members.begin(), members.end(), [&](const api::PodPtr& x) { return x->metadata.uid == uid; });
      return m == members.end() || !(*m)->spec.node_name.empty();
    });
    assigned = AssignedLocked(ref, members);
    // The pod itself counts even before the informer has it.
    if (std::none_of(members.begin(), members.end(),
                     [&](const api::PodPtr& m) { return m->metadata.uid == pod.metadata.uid; }))
      ++assigned;
    first = uids.size() == 1;
    const Clock::time_point now = clock_.Now();
    auto w = waiting_until_.find(ref.key);
    if (assigned >= min_member && w != waiting_until_.end() && now + kAdmitMargin >= w->second) {
      // The members waiting are about to time out: admitting now could race their
      // timeouts and bind the group in part. They time out and retry together.
      uids.erase(pod.metadata.uid);
      return Status(Code::kUnschedulable, "gang " + ref.key + ": the wait of its members at Permit is ending");
    }
    if (assigned >= min_member) {
      last_failure_.erase(ref.key);
      if (w != waiting_until_.end() || assigned == min_member) EndWaitLocked(ref.key, "");
      // Allowed under the lock, so no rejection of this group interleaves.
      const int allowed = handle_.AllowWaitingPods(SameGroup(pod, ref.name), kName);
      KLOG_V(3) << "Coscheduling: gang " << ref.key << " admitted (" << assigned << "/" << min_member
                << " assumed or bound, " << allowed << " released from Permit)";
      return Status();
    }
    // One deadline for the whole group, set by its first waiting member (as upstream's
    // GangScheduling keeps one per group): its members time out together.
    if (w == waiting_until_.end()) {
      w = waiting_until_.emplace(ref.key, now + WaitTime(*ref.group)).first;
      if (auto* m = handle_.Metrics()) m->AddPodGroupsWaiting(1);
    }
    deadline = w->second;
  }
  timeout = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.Now()),
                     std::chrono::milliseconds(1));
  if (first) {
    // upstream ActivateSiblings: members turned away earlier (too few siblings then, or
    // rejected with their group) are tried again now that one is waiting.
    std::vector<api::PodPtr> siblings;
    for (const api::PodPtr& m : members) {
      if (m->metadata.uid != pod.metadata.uid && m->spec.node_name.empty()) siblings.push_back(m);
    }
    auto st = std::make_unique<PermitState>();
    st->activate = true;
    state.Write(std::string(kPermitStateKey), std::move(st));
    if (!siblings.empty()) handle_.ActivatePods(siblings);
  }
  const int more = min_member - assigned;
  std::string waiting = "waiting for " + std::to_string(more) + " more member" + (more == 1 ? "" : "s") +
                        " of gang " + ref.key + " (" + std::to_string(assigned) + "/" + std::to_string(min_member) +
                        " assumed)";
  KLOG_V(3) << "Coscheduling: " << waiting << ", pod=\"" << pod.Key() << "\"";
  return Status(Code::kWait, std::move(waiting));
}

// ---- Unreserve ---------------------------------------------------------------------------

void Coscheduling::Unreserve(CycleState& state, const api::Pod& pod, std::string_view node_name) {
  // upstream coscheduling.go Unreserve: one member that fails takes its waiting siblings
  // back with it, so no partial group is bound. The bookkeeping is by the group's key: it
  // is done even when the PodGroup is gone.
  GroupRef ref = GroupOf(pod);
  if (ref.name.empty()) return;
  MutexLock lock(mu_);
  if (released_.erase(pod.metadata.uid) > 0) {
    // Released with its group by another member's failure: that member's cascade has
    // done the rest. Rejecting again would take down members that began to wait since.
    if (auto it = permitted_.find(ref.key); it != permitted_.end()) it->second.erase(pod.metadata.uid);
    return;
  }
  // Every member not bound is forgotten before its rejection, under the lock Permit
  // counts under: a member rejected here is never counted towards an admission.
  permitted_.erase(ref.key);
  resources_checked_.erase(ref.key);
  last_failure_[ref.key] = clock_.WallNow();
  auto w = waiting_until_.find(ref.key);
  if (w != waiting_until_.end()) EndWaitLocked(ref.key, clock_.Now() >= w->second ? "timeout" : "member_failed");
  RejectWaitingLocked(pod, ref,
                      "rejection in Unreserve (gang " + ref.key + ": pod " + pod.metadata.name +
                          " was rejected, timed out or failed to bind)");
}

void Coscheduling::RejectWaitingLocked(const api::Pod& pod, const GroupRef& ref, const std::string& message) {
  auto same_group = SameGroup(pod, ref.name);
  auto* released = &released_;  // the lock is held across the call
  handle_.RejectWaitingPods(
      [&](const api::Pod& other) {
        if (!same_group(other) || other.metadata.uid == pod.metadata.uid) return false;
        released->insert(other.metadata.uid);
        return true;
      },
      kName, message);
}

void Coscheduling::SweepLocked() {
  // Groups' entries outlive their groups unless swept: every kSweepEvery Permits, drop
  // what has expired and the groups that have no pod left.
  if (++permits_since_sweep_ < kSweepEvery) return;
  permits_since_sweep_ = 0;
  const Clock::time_point now = clock_.Now();
  std::erase_if(backed_off_, [&](const auto& e) { return e.second <= now; });
  std::erase_if(resources_checked_, [&](const auto& e) { return e.second <= now; });
  auto gone = [&](const std::string& key) {
    const size_t slash = key.find('/');
    return handle_.Lister()
        .PodGroupMembers(std::string_view(key).substr(0, slash), std::string_view(key).substr(slash + 1))
        .empty();
  };
  std::erase_if(permitted_, [&](const auto& e) { return gone(e.first); });
  if (released_.size() > 4096) released_.clear();  // entries whose Unreserve never came
  std::erase_if(last_failure_, [&](const auto& e) { return gone(e.first); });
  std::vector<std::string> ended;
  for (const auto& [key, until] : waiting_until_) {
    if (gone(key)) ended.push_back(key);
  }
  for (const std::string& key : ended) EndWaitLocked(key, "member_failed");
}

void Coscheduling::EndWaitLocked(const std::string& key, std::string_view rejection_reason) {
  const bool was_waiting = waiting_until_.erase(key) > 0;
  auto* m = handle_.Metrics();
  if (m == nullptr) return;
  if (was_waiting) m->AddPodGroupsWaiting(-1);
  if (rejection_reason.empty()) {
    m->ObservePodGroupAdmitted();
  } else if (was_waiting) {
    m->ObservePodGroupRejected(rejection_reason);
  }
}

// ---- queueing hints ----------------------------------------------------------------------

std::vector<ClusterEventWithHint> Coscheduling::EventsToRegister() const {
  // upstream registers Pod/Add and PodGroup Add|Update without hints. Here a pod add
  // (ksched reports assigned pods' adds) requeues only the members of the same group, and
  // a PodGroup change only its own members. A group short of minResources is also
  // retried when nodes are added or grow, or pods leave.
  auto sibling_added = [](const api::Pod& pod, const void*, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* added = ObjectAs<api::Pod>(new_obj);
    if (added == nullptr) return InvalidArgument("unexpected object in Coscheduling's pod hint");
    std::string_view mine = GroupLabel(pod);
    return !mine.empty() && added->metadata.namespace_ == pod.metadata.namespace_ && GroupLabel(*added) == mine
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  };
  auto own_group = [](const api::Pod& pod, const void*, const void* new_obj) -> StatusOr<QueueingHint> {
    const auto* group = ObjectAs<api::PodGroup>(new_obj);
    if (group == nullptr) return InvalidArgument("unexpected object in Coscheduling's PodGroup hint");
    return group->metadata.namespace_ == pod.metadata.namespace_ && GroupLabel(pod) == group->metadata.name
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  };
  auto wants_resources = [this](const api::Pod& pod, const void*, const void*) -> StatusOr<QueueingHint> {
    std::string_view name = GroupLabel(pod);
    if (name.empty()) return QueueingHint::kSkip;
    api::PodGroupPtr group = handle_.Lister().PodGroupNamed(pod.metadata.namespace_, name);
    return group != nullptr && !group->min_resources.empty() ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  return {
      {ClusterEvent{EventResource::kPod, kAdd, ""}, sibling_added},
      {ClusterEvent{EventResource::kPodGroup, kAdd | kUpdate, ""}, own_group},
      {ClusterEvent{EventResource::kPod, kDelete, ""}, wants_resources},
      {ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeAllocatable, ""}, wants_resources},
  };
}

}  // namespace ksched::framework::plugins::coscheduling
