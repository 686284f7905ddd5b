#include "pkg/cache/node_info.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "pkg/util/mutex.h"
#include "pkg/util/string_index.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::cache {
namespace {

constexpr std::string_view kCpu = "cpu";
constexpr std::string_view kMemory = "memory";
constexpr std::string_view kEphemeralStorage = "ephemeral-storage";
constexpr std::string_view kPods = "pods";
constexpr std::string_view kBindAllHostIp = "0.0.0.0";

std::atomic<int64_t> g_generation{0};

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

bool AtBound(int64_t v) {
  return v == std::numeric_limits<int64_t>::max() || v == std::numeric_limits<int64_t>::min();
}

// A sum that hit a bound no longer knows its true value, so subtracting from it would be
// wrong; such a node's totals are recomputed from its pods instead.
bool Saturated(const Resource& r) {
  if (AtBound(r.milli_cpu) || AtBound(r.memory) || AtBound(r.ephemeral_storage) || AtBound(r.allowed_pod_number)) {
    return true;
  }
  return std::any_of(r.scalar.begin(), r.scalar.end(), [](const auto& e) { return AtBound(e.second); });
}

// Resource amounts in milli-units by name. Requests are summed and maxed as quantities
// and converted to Value() only at the end, as upstream does with ResourceLists, so
// fractional amounts round once per pod rather than once per container.
class MilliList {
 public:
  using Milli = api::Quantity::Milli;
  void Add(const MilliList& other) {
    for (const auto& [name, v] : other.entries_) At(name) = Sum(At(name), v);
  }
  void Add(const api::ResourceList& list) {
    for (const auto& [name, q] : list) At(name) = Sum(At(name), q.ExactMilli());
  }
  void Max(const MilliList& other) {
    for (const auto& [name, v] : other.entries_) {
      Milli& mine = At(name);
      mine = std::max(mine, v);
    }
  }
  // Fills cpu and memory when the list lacks them (upstream NonMissingContainerRequests:
  // an explicit 0 is kept).
  void DefaultMissing(int64_t milli_cpu, int64_t memory_bytes) {
    if (!Has(kCpu)) At(kCpu) = milli_cpu;
    if (!Has(kMemory)) At(kMemory) = static_cast<Milli>(memory_bytes) * 1000;
  }
  // Takes `list` off (upstream subtractResourceList: only names already here).
  void Subtract(const api::ResourceList& list) {
    for (const auto& [name, q] : list) {
      for (auto& [n, v] : entries_) {
        if (n == name) v = Sum(v, -q.ExactMilli());
      }
    }
  }
  void Set(std::string_view name, Milli value) { At(name) = value; }
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [n, v] : entries_) f(n, v);
  }
  Milli Get(std::string_view name) const {
    for (const auto& [n, v] : entries_) {
      if (n == name) return v;
    }
    return 0;
  }
  Resource ToResource() const {
    api::ResourceList list;
    list.reserve(entries_.size());
    for (const auto& [name, v] : entries_) list.emplace_back(std::string(name), api::Quantity::FromExactMilli(v));
    return Resource::FromList(list);
  }

 private:
  bool Has(std::string_view name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == name; });
  }
  Milli& At(std::string_view name) {
    for (auto& [n, v] : entries_) {
      if (n == name) return v;
    }
    return entries_.emplace_back(name, 0).second;
  }

  // Names point into the pod being measured, which outlives the computation.
  // Saturating at the 128-bit bounds: amounts past them ("1e100") are already saturated.
  static Milli Sum(Milli a, Milli b) {
    Milli out;
    if (__builtin_add_overflow(a, b, &out)) return b < 0 ? -kMaxMilli - 1 : kMaxMilli;
    return out;
  }
  static constexpr Milli kMaxMilli = static_cast<Milli>(~static_cast<unsigned __int128>(0) >> 1);

  std::vector<std::pair<std::string_view, Milli>> entries_;
};

MilliList ContainerRequests(const api::ResourceList* requests, bool non_zero) {
  MilliList l;
  if (requests) l.Add(*requests);
  if (non_zero) l.DefaultMissing(kDefaultMilliCpuRequest, kDefaultMemoryRequest);
  return l;
}

// Which of a container's lists is summed (upstream containerSpecRequests,
// containerAllocatedRequests and containerActuatedRequests).
enum class Source { kSpec, kAllocated, kActual };

const api::ResourceList* ContainerList(const api::Container& c, const api::PodStatus& status, Source source) {
  if (source == Source::kSpec) return &c.requests;
  const api::ContainerResourceStatus* cs = nullptr;
  for (const auto& s : status.container_resources) {
    if (s.name == c.name) {
      cs = &s;
      break;
    }
  }
  if (source == Source::kActual && cs && cs->actual) return &*cs->actual;
  if (cs && cs->allocated) return &*cs->allocated;
  return status.resize_infeasible ? nullptr : &c.requests;
}

// Upstream's aggregation over containers: regular containers and sidecars run together;
// each regular init container runs alongside the sidecars started before it; the pod
// needs the larger of the two.
MilliList AggregateContainers(const api::Pod& pod, bool non_zero, Source source) {
  MilliList reqs;
  for (const auto& c : pod.spec.containers) reqs.Add(ContainerRequests(ContainerList(c, pod.status, source), non_zero));
  MilliList sidecars;
  MilliList init_peak;
  for (const auto& ic : pod.spec.init_containers) {
    MilliList r = ContainerRequests(ContainerList(ic, pod.status, source), non_zero);
    if (ic.restart_policy_always) {
      reqs.Add(r);
      sidecars.Add(r);
      init_peak.Max(sidecars);
    } else {
      r.Add(sidecars);
      init_peak.Max(r);
    }
  }
  reqs.Max(init_peak);
  return reqs;
}

// Pod-level resources apply to cpu, memory and hugepages (upstream
// IsSupportedPodLevelResource).
bool IsPodLevelResource(std::string_view name) {
  return name == kCpu || name == kMemory || name.starts_with("hugepages-");
}

bool HasPodLevelRequests(const api::Pod& pod) {
  return std::any_of(pod.spec.pod_requests.begin(), pod.spec.pod_requests.end(),
                     [](const auto& e) { return IsPodLevelResource(e.first); });
}

// Upstream resourcehelper.PodRequests as kube-scheduler 1.36 calls it (in-place resize
// and pod-level resources on): per container, the larger of spec, allocated and actual
// requests (only allocated and actual while a resize is Infeasible); the pod-level
// status lists instead when the kubelet reports them; then pod-level requests replace
// the containers' cpu, memory and hugepages (the larger of them and the pod-level status,
// less overhead, during a resize); then the overhead.
MilliList PodRequests(const api::Pod& pod, bool non_zero) {
  const api::PodStatus& st = pod.status;
  MilliList reqs;
  if (st.container_resources.empty() && !st.pod_allocated && !st.pod_actual && !st.resize_infeasible) {
    reqs = AggregateContainers(pod, non_zero, Source::kSpec);  // nothing reported: spec is all
  } else {
    MilliList allocated, actual;
    if (st.pod_allocated && st.pod_actual) {
      allocated.Add(*st.pod_allocated);
      actual.Add(*st.pod_actual);
    } else {
      allocated = AggregateContainers(pod, non_zero, Source::kAllocated);
      actual = AggregateContainers(pod, non_zero, Source::kActual);
    }
    if (!st.resize_infeasible) reqs = AggregateContainers(pod, non_zero, Source::kSpec);
    reqs.Max(allocated);
    reqs.Max(actual);
  }
  if (HasPodLevelRequests(pod)) {
    MilliList effective;
    if (!st.resize_infeasible || (!st.pod_allocated && !st.pod_actual)) effective.Add(pod.spec.pod_requests);
    for (const auto* status_list : {&st.pod_allocated, &st.pod_actual}) {
      if (!*status_list) continue;
      MilliList l;
      l.Add(**status_list);
      l.Subtract(pod.spec.overhead);
      effective.Max(l);
    }
    effective.ForEach([&](std::string_view name, MilliList::Milli v) {
      if (IsPodLevelResource(name)) reqs.Set(name, v);
    });
  }
  reqs.Add(pod.spec.overhead);
  return reqs;
}

HostPort Sanitize(HostPort p) {
  if (p.ip.empty()) p.ip = kBindAllHostIp;
  if (p.protocol.empty()) p.protocol = "TCP";
  return p;
}

// Upstream validation.IsQualifiedName applied to "requests.<name>": an optional DNS
// subdomain prefix and "/", then 1-63 alphanumerics, '-', '_' or '.', alphanumeric at
// both ends.
bool IsQualifiedName(std::string_view s) {
  std::string_view name = s;
  if (auto slash = s.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
    }
    auto alnum_lower = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum_lower(prefix.front()) || !alnum_lower(prefix.back())) return false;
  }
  if (name.empty() || name.size() > 63) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return alnum(name.front()) && alnum(name.back());
}

}  // namespace

// ---- Resource ----------------------------------------------------------------------------

bool IsScalarResourceName(std::string_view name) {
  if (name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")) return true;
  // Prefixed native resources ("kubernetes.io/..." anywhere in the name) are scalar.
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  // Extended resources: outside the default namespace (so they contain '/'), not using
  // the quota "requests." prefix, and a qualified name once that prefix is added.
  if (name.find('/') == std::string_view::npos || name.starts_with("requests.")) return false;
  return IsQualifiedName(std::string("requests.").append(name));
}

Resource Resource::FromList(const api::ResourceList& list) {
  Resource r;
  for (const auto& [name, q] : list) {
    if (name == kCpu) {
      r.milli_cpu = SaturatingAdd(r.milli_cpu, q.MilliValue());
    } else if (name == kMemory) {
      r.memory = SaturatingAdd(r.memory, q.Value());
    } else if (name == kEphemeralStorage) {
      r.ephemeral_storage = SaturatingAdd(r.ephemeral_storage, q.Value());
    } else if (name == kPods) {
      r.allowed_pod_number = SaturatingAdd(r.allowed_pod_number, q.Value());
    } else if (IsScalarResourceName(name)) {
      r.AddScalar(name, q.Value());
    }
  }
  return r;
}

void Resource::Add(const Resource& other) {
  milli_cpu = SaturatingAdd(milli_cpu, other.milli_cpu);
  memory = SaturatingAdd(memory, other.memory);
  ephemeral_storage = SaturatingAdd(ephemeral_storage, other.ephemeral_storage);
  allowed_pod_number = SaturatingAdd(allowed_pod_number, other.allowed_pod_number);
  for (const auto& [name, v] : other.scalar) AddScalar(name, v);
}

void Resource::Sub(const Resource& other) {
  milli_cpu = SaturatingSub(milli_cpu, other.milli_cpu);
  memory = SaturatingSub(memory, other.memory);
  ephemeral_storage = SaturatingSub(ephemeral_storage, other.ephemeral_storage);
  allowed_pod_number = SaturatingSub(allowed_pod_number, other.allowed_pod_number);
  for (const auto& [name, v] : other.scalar) {
    AddScalar(name, v == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -v);
  }
}

void Resource::SetMax(const Resource& other) {
  milli_cpu = std::max(milli_cpu, other.milli_cpu);
  memory = std::max(memory, other.memory);
  ephemeral_storage = std::max(ephemeral_storage, other.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, other.allowed_pod_number);
  for (const auto& [name, v] : other.scalar) {
    int64_t mine = Scalar(name);
    if (v > mine) AddScalar(name, v - mine);
  }
}

int64_t Resource::Scalar(std::string_view name) const {
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return it != scalar.end() && it->first == name ? it->second : 0;
}

// `scalar` stays sorted by name and holds no zero entries, so equal amounts compare
// equal however they were reached.
void Resource::AddScalar(std::string_view name, int64_t value) {
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != scalar.end() && it->first == name) {
    it->second = SaturatingAdd(it->second, value);
    if (it->second == 0) scalar.erase(it);
  } else if (value != 0) {
    scalar.emplace(it, std::string(name), value);
  }
}

// ---- pod request -------------------------------------------------------------------------

PodRequest ComputePodRequest(const api::Pod& pod) {
  PodRequest out;
  out.request = PodRequests(pod, /*non_zero=*/false).ToResource();
  MilliList non_zero = PodRequests(pod, /*non_zero=*/true);
  out.non_zero_milli_cpu = api::Quantity::Int64Of(non_zero.Get(kCpu));
  out.non_zero_memory = api::Quantity::ValueOf(non_zero.Get(kMemory));
  return out;
}

// ---- host ports --------------------------------------------------------------------------

void HostPortInfo::Add(const HostPort& p) {
  if (p.port <= 0) return;
  ports_.insert(Sanitize(p));
}

void HostPortInfo::Remove(const HostPort& p) {
  if (p.port <= 0) return;
  // One instance only: two pods forced onto a node with the same port both hold it.
  if (auto it = ports_.find(Sanitize(p)); it != ports_.end()) ports_.erase(it);
}

bool HostPortInfo::CheckConflict(const HostPort& p) const {
  if (p.port <= 0) return false;
  HostPort want = Sanitize(p);
  if (want.ip == kBindAllHostIp) {
    return std::any_of(ports_.begin(), ports_.end(), [&](const HostPort& used) {
      return used.protocol == want.protocol && used.port == want.port;
    });
  }
  if (ports_.contains(want)) return true;
  want.ip = kBindAllHostIp;
  return ports_.contains(want);
}

// Regular containers and sidecars (restartPolicy: Always init containers) hold their
// host ports for the pod's whole life; other init containers are ignored, as upstream's
// GetHostPorts does.
std::vector<HostPort> PodHostPorts(const api::Pod& pod) {
  std::vector<HostPort> out;
  auto collect = [&](const api::Container& c) {
    for (const auto& p : c.ports) {
      if (p.host_port > 0) out.push_back(Sanitize(HostPort{p.host_ip, p.protocol, p.host_port}));
    }
  };
  for (const auto& c : pod.spec.init_containers) {
    if (c.restart_policy_always) collect(c);
  }
  for (const auto& c : pod.spec.containers) collect(c);
  return out;
}

// ---- NodeInfo ----------------------------------------------------------------------------

int64_t NextGeneration() { return g_generation.fetch_add(1, std::memory_order_relaxed) + 1; }

std::string PodCacheKey(const api::Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

bool SamePodKey(const api::Pod& a, const api::Pod& b) {
  const api::ObjectMeta& x = a.metadata;
  const api::ObjectMeta& y = b.metadata;
  if (!x.uid.empty()) return y.uid == x.uid;
  return y.uid.empty() && y.name == x.name && y.namespace_ == x.namespace_;
}

const ImageStates& NodeInfo::EmptyImageStates() {
  static const ImageStates kEmpty;
  return kEmpty;
}

void NodeInfo::SetNode(api::NodePtr node) {
  node_ = std::move(node);
  allocatable_ = node_ ? Resource::FromList(node_->status.allocatable) : Resource{};
  unschedulable_ = node_ && node_->spec.unschedulable;
  has_taints_ = node_ && !node_->spec.taints.empty();
  name_view_ = node_ ? std::string_view(node_->Name()) : std::string_view();
  hostname_label_ = node_ ? node_->metadata.labels.Get(kLabelHostname) : nullptr;
  zone_label_ = node_ ? node_->metadata.labels.Get(kLabelTopologyZone) : nullptr;
  zone_id_ = zone_label_ != nullptr ? ZoneId(*zone_label_) : -1;
  generation_ = NextGeneration();
}

void NodeInfo::RemoveNode() {
  node_.reset();
  unschedulable_ = has_taints_ = false;
  name_view_ = {};
  hostname_label_ = zone_label_ = nullptr;
  zone_id_ = -1;
  generation_ = NextGeneration();
}

int32_t ZoneId(std::string_view zone) {
  struct Ids {
    Mutex mu;
    StringIndex ids GUARDED_BY(mu);
  };
  static Ids* const ids = new Ids();  // never destroyed: NodeInfos may be built at exit
  MutexLock lock(ids->mu);
  return ids->ids.Intern(zone);
}

const std::string& NodeInfo::name() const {
  static const std::string kEmpty;
  return node_ ? node_->Name() : kEmpty;
}

PodEntry MakePodEntry(api::PodPtr pod) {
  PodEntry e;
  e.request = ComputePodRequest(*pod);
  e.has_affinity = api::HasPodAffinityTerms(*pod);
  e.has_required_anti_affinity = api::HasRequiredPodAntiAffinity(*pod);
  if (e.has_affinity) e.affinity_terms = api::ParsePodAffinityTerms(*pod);
  e.host_ports = PodHostPorts(*pod).empty() ? PodEntry::HostPorts::kNone : PodEntry::HostPorts::kSome;
  e.pod = std::move(pod);
  return e;
}

void NodeInfo::AddPod(api::PodPtr pod) { AddPodEntry(MakePodEntry(std::move(pod))); }

void NodeInfo::AddPodEntry(PodEntry e) {
  requested_.Add(e.request.request);
  non_zero_requested_.milli_cpu = SaturatingAdd(non_zero_requested_.milli_cpu, e.request.non_zero_milli_cpu);
  non_zero_requested_.memory = SaturatingAdd(non_zero_requested_.memory, e.request.non_zero_memory);
  if (e.host_ports != PodEntry::HostPorts::kNone) {
    for (const HostPort& p : PodHostPorts(*e.pod)) used_ports_.Add(p);
  }
  if (e.has_affinity) ++pods_with_affinity_;
  if (e.has_required_anti_affinity) ++pods_with_required_anti_affinity_;
  pods_.push_back(std::move(e));
  generation_ = NextGeneration();
}

bool NodeInfo::HasTerminatingPodBelow(int32_t priority) const {
  return std::any_of(pods_.begin(), pods_.end(), [&](const PodEntry& e) {
    return e.pod->Priority() < priority && e.pod->IsBeingDeleted();
  });
}

bool NodeInfo::RemovePod(const api::Pod& pod) {
  // The very object first (what-if runs remove the node's own entries): no key compares.
  auto it = std::find_if(pods_.begin(), pods_.end(), [&](const PodEntry& e) { return e.pod.get() == &pod; });
  if (it == pods_.end())
    it = std::find_if(pods_.begin(), pods_.end(), [&](const PodEntry& e) { return SamePodKey(pod, *e.pod); });
  if (it == pods_.end()) return false;
  RemoveAt(static_cast<size_t>(it - pods_.begin()));
  return true;
}

void NodeInfo::TruncatePods(size_t n) {
  while (pods_.size() > n) RemoveAt(pods_.size() - 1);
}

void NodeInfo::RemoveAt(size_t i) {
  const PodEntry& e = pods_[i];
  // Subtract what was added (the stored entry), not what the caller's copy would ask
  // for: an update may have changed the object since.
  const bool saturated = Saturated(requested_) || Saturated(non_zero_requested_);
  requested_.Sub(e.request.request);
  non_zero_requested_.milli_cpu = SaturatingSub(non_zero_requested_.milli_cpu, e.request.non_zero_milli_cpu);
  non_zero_requested_.memory = SaturatingSub(non_zero_requested_.memory, e.request.non_zero_memory);
  if (e.host_ports != PodEntry::HostPorts::kNone) {
    for (const HostPort& p : PodHostPorts(*e.pod)) used_ports_.Remove(p);
  }
  if (e.has_affinity) --pods_with_affinity_;
  if (e.has_required_anti_affinity) --pods_with_required_anti_affinity_;
  pods_.erase(pods_.begin() + static_cast<std::ptrdiff_t>(i));  // keeps the order pods arrived in
  if (saturated) {
    requested_ = Resource();
    non_zero_requested_ = Resource();
    for (const PodEntry& rest : pods_) {
      requested_.Add(rest.request.request);
      non_zero_requested_.milli_cpu = SaturatingAdd(non_zero_requested_.milli_cpu, rest.request.non_zero_milli_cpu);
      non_zero_requested_.memory = SaturatingAdd(non_zero_requested_.memory, rest.request.non_zero_memory);
    }
  }
  generation_ = NextGeneration();
}

}  // namespace ksched::cache
