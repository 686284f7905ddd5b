#include "pkg/framework/plugins/dynamicresources/allocator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "pkg/api/selector.h"

namespace ksched::framework::plugins::dynamicresources {
namespace {

constexpr int kMaxResults = static_cast<int>(api::kAllocationResultsMaxSize);
// upstream FirstAvailableDeviceRequestMaxSize, the base of the firstAvailable score.
constexpr int64_t kFirstAvailableScoreBase = 8;

std::string ClaimRef(const api::ResourceClaim& c) { return c.metadata.namespace_ + "/" + c.metadata.name; }

// upstream lookupAttribute: the fully qualified name first, then the bare id when the
// domain is the device's driver.
const api::DeviceAttribute* LookupAttribute(const api::Device& device, std::string_view driver,
                                            std::string_view qualified) {
  if (auto it = device.attributes.find(qualified); it != device.attributes.end()) return &it->second;
  size_t slash = qualified.find('/');
  if (slash == std::string_view::npos || qualified.substr(0, slash) != driver) return nullptr;
  if (auto it = device.attributes.find(qualified.substr(slash + 1)); it != device.attributes.end())
    return &it->second;
  return nullptr;
}

// upstream taintPreventsAllocation: an untolerated NoSchedule or NoExecute taint.
bool TaintPreventsAllocation(const api::Device& device, const std::vector<api::DeviceToleration>& tolerations) {
  for (const api::DeviceTaint& t : device.taints) {
    if (t.effect != api::TaintEffect::kNoSchedule && t.effect != api::TaintEffect::kNoExecute) continue;
    api::Taint taint{t.key, t.value, t.effect};
    bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const api::DeviceToleration& tol) { return api::ToleratesTaint(tol, taint); });
    if (!tolerated) return true;
  }
  return false;
}

// A claim's matchAttribute or distinctAttribute constraint while devices are added and
// removed (upstream matchAttributeConstraint; distinct as the incubating allocator's).
struct Constraint {
  std::vector<std::string> requests;  // empty: every request
  std::string attribute;
  bool distinct = false;
  std::vector<const api::DeviceAttribute*> values;  // of the devices added so far

  bool Applies(const std::string& request, const std::string& full) const {
    if (requests.empty()) return true;
    return std::find(requests.begin(), requests.end(), request) != requests.end() ||
           (full != request && std::find(requests.begin(), requests.end(), full) != requests.end());
  }
  bool Add(const std::string& request, const std::string& full, const api::Device& device, std::string_view driver) {
    if (!Applies(request, full)) return true;
    const api::DeviceAttribute* attr = LookupAttribute(device, driver, attribute);
    if (!attr) return false;
    if (distinct) {
      for (const api::DeviceAttribute* v : values)
        if (*v == *attr) return false;
    } else if (!values.empty() && !(*values.front() == *attr)) {
      return false;
    }
    values.push_back(attr);
    return true;
  }
  void Remove(const std::string& request, const std::string& full) {
    if (!Applies(request, full)) return;
    values.pop_back();
  }
};

struct Candidate {
  const api::Device* device = nullptr;
  const api::ResourceSlice* slice = nullptr;
  const Pool* pool = nullptr;
  const api::DeviceId* id = nullptr;
  uint32_t slot = 0;  // the device's slot in the slice index (one per device)
};

std::string RequestKey(const api::DeviceSubRequest& r) {
  std::string key = r.device_class_name;
  for (const api::DeviceSelector& s : r.selectors) {
    key += '\x1f';
    key += s.cel_expression;
  }
  return key;
}

}  // namespace

Allocator::Allocator(std::vector<api::ResourceClaimPtr> claims, AllocatorInputs inputs)
    : claims_(std::move(claims)), inputs_(std::move(inputs)) {
  data_.resize(claims_.size());
  for (size_t c = 0; c < claims_.size(); ++c) {
    const api::ResourceClaim& claim = *claims_[c];
    for (const api::DeviceRequest& req : claim.spec.requests) {
      std::vector<RequestData> entries;
      auto build = [&](const api::DeviceSubRequest& r, const api::DeviceRequest* parent) {
        RequestData d;
        d.parent = parent;
        d.request = &r;
        d.name = parent ? r.name : req.name;
        d.full_name = parent ? req.name + "/" + r.name : req.name;
        if (r.device_class_name.empty()) {
          d.error = InvalidArgument("claim " + ClaimRef(claim) + ", request " + d.name +
                                    ": missing device class name (unsupported request type?)");
        } else {
          d.device_class = inputs_.classes ? inputs_.classes(r.device_class_name) : nullptr;
          if (!d.device_class) {
            d.error = NotFound("claim " + ClaimRef(claim) + ", request " + d.name + ": could not retrieve device class " +
                               r.device_class_name + ": deviceclass.resource.k8s.io \"" + r.device_class_name +
                               "\" not found");
          }
        }
        std::string memo_key = RequestKey(r);
        if (d.device_class) {
          memo_key += '\x1e' + d.device_class->metadata.name + '\x1e' + d.device_class->metadata.resource_version;
          for (size_t i = 0; i < d.device_class->selectors.size(); ++i) {
            auto compiled = inputs_.selectors->Get(d.device_class->selectors[i].cel_expression);
            d.class_selectors.push_back(compiled.ok() ? *compiled : nullptr);
          }
        }
        for (const api::DeviceSelector& s : r.selectors) {
          auto compiled = inputs_.selectors->Get(s.cel_expression);
          d.request_selectors.push_back(compiled.ok() ? *compiled : nullptr);
        }
        if (inputs_.slices) d.memo = inputs_.slices->Memo(memo_key);
        entries.push_back(std::move(d));
      };
      if (!req.first_available.empty()) {
        has_first_available_ = true;
        for (const api::DeviceSubRequest& sub : req.first_available) build(sub, &req);
      } else if (req.exactly) {
        build(*req.exactly, nullptr);
      } else {
        // Neither form: a request kind this build does not know.
        RequestData d;
        d.name = d.full_name = req.name;
        d.error = InvalidArgument("claim " + ClaimRef(claim) + ", request " + req.name +
                                  ": missing device class name (unsupported request type?)");
        entries.push_back(std::move(d));
      }
      data_[c].requests.push_back(std::move(entries));
    }
  }
}

struct PerRequest {
  int num_devices = 0;
  std::vector<Candidate> all;  // allocationMode All: the devices, decided up front
};

// The per-call vectors of a search, kept per thread so that the thousands of Filter
// calls of a scheduling cycle reuse their capacity instead of allocating anew.
struct SearchScratch {
  std::vector<std::vector<std::vector<PerRequest>>> per;  // [claim][request][subrequest]
  std::vector<std::vector<size_t>> selected;              // [claim][request]: the subrequest taken
  std::vector<std::vector<Constraint>> constraints;
  std::vector<std::vector<ChosenDevice>> results;
  // Devices taken in this search: (slot, claim index). A handful at most, so a vector.
  std::vector<std::pair<uint32_t, size_t>> allocating;

  // Sized for `data`, emptied, capacity kept.
  void Reset(const std::vector<Allocator::ClaimData>& data) {
    const size_t n = data.size();
    per.resize(n);
    selected.resize(n);
    constraints.resize(n);
    results.resize(n);
    allocating.clear();
    for (size_t c = 0; c < n; ++c) {
      const auto& requests = data[c].requests;
      per[c].resize(requests.size());
      for (size_t r = 0; r < requests.size(); ++r) {
        per[c][r].resize(requests[r].size());
        for (PerRequest& p : per[c][r]) {
          p.num_devices = 0;
          p.all.clear();
        }
      }
      selected[c].assign(requests.size(), 0);
      constraints[c].clear();
      results[c].clear();
    }
  }
};

SearchScratch& ThreadScratch() {
  thread_local SearchScratch scratch;
  return scratch;
}

// One Allocate call: the search state upstream keeps in its allocator struct.
class Search {
 public:
  Search(const Allocator& a, const api::Node& node, const std::vector<Pool>& pools, const std::atomic<bool>* stop,
         std::optional<std::chrono::steady_clock::time_point> deadline)
      : a_(a), node_(node), pools_(pools), stop_(stop), deadline_(deadline) {
    if (a.inputs_.slot_use && a.inputs_.slot_use->index == a.inputs_.slices) slot_use_ = a.inputs_.slot_use.get();
  }

  AllocateOutcome Run(Want want);
  std::string WhyNot();

 private:
  enum class Step { kDone, kNo, kTooMany, kError };

  ksched::Status Validate(size_t c, size_t r, size_t s, PerRequest& out);
  StatusOr<bool> Selectable(const Allocator::RequestData& rd, const Candidate& cand, size_t claim_index);
  Step AllocateOne(size_t c, size_t r, size_t s, int device_index, bool in_subrequest);
  // Tries to take `cand` for the request; on success the caller must call Release.
  StatusOr<bool> Take(size_t c, const Allocator::RequestData& rd, const Candidate& cand, bool must);
  void Release(size_t c, const Allocator::RequestData& rd, const Candidate& cand);
  bool InUse(const Candidate& cand) const;
  bool AllocatingForClaim(const Candidate& cand, size_t c) const;
  Candidate At(const Pool& pool, size_t slice_index, size_t device_index) const {
    const api::ResourceSlice* slice = pool.slices[slice_index];
    const uint32_t slot = pool.bases[slice_index] + static_cast<uint32_t>(device_index);
    return Candidate{&slice->devices[device_index], slice, &pool, &a_.inputs_.slices->Id(slot), slot};
  }
  bool CountersFit(const Candidate& cand);
  void ReturnCounters(const Candidate& cand);

  const Allocator& a_;
  const api::Node& node_;
  const std::vector<Pool>& pools_;
  const std::atomic<bool>* stop_;
  const SlotUse* slot_use_ = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool timed_out_ = false;
  uint32_t steps_ = 0;
  ksched::Status error_;

  SearchScratch& scratch_ = ThreadScratch();
  std::vector<std::vector<std::vector<PerRequest>>>& per_ = scratch_.per;
  std::vector<std::vector<size_t>>& selected_ = scratch_.selected;
  std::vector<std::vector<Constraint>>& constraints_ = scratch_.constraints;
  std::vector<std::vector<ChosenDevice>>& results_ = scratch_.results;
  std::vector<std::pair<uint32_t, size_t>>& allocating_ = scratch_.allocating;
  // Per pool: counters left after the allocated devices, and what this search consumes.
  using Counters = std::map<std::string, std::map<std::string, api::Quantity::Milli, std::less<>>, std::less<>>;
  std::map<const Pool*, Counters> available_, consumed_;
};

bool Search::InUse(const Candidate& cand) const {
  for (const auto& [slot, claim] : allocating_)
    if (slot == cand.slot) return true;
  if (slot_use_) return slot_use_->InUse(cand.slot);
  return a_.inputs_.in_use && a_.inputs_.in_use->Contains(*cand.id);
}

bool Search::AllocatingForClaim(const Candidate& cand, size_t c) const {
  for (const auto& [slot, claim] : allocating_)
    if (slot == cand.slot && claim == c) return true;
  return false;
}

StatusOr<bool> Search::Selectable(const Allocator::RequestData& rd, const Candidate& cand, size_t claim_index) {
  const api::ResourceClaim& claim = *a_.claims_[claim_index];
  const uint32_t slot = cand.slot;
  std::optional<bool> memo = rd.memo ? rd.memo->Get(slot) : std::nullopt;
  if (!memo) {
    // upstream selectorsMatch: the class's selectors, then the request's, each in order.
    auto run = [&](const std::vector<std::shared_ptr<const cel::DeviceSelector>>& compiled,
                   const std::vector<api::DeviceSelector>& source, const std::string& who) -> StatusOr<bool> {
      for (size_t i = 0; i < compiled.size(); ++i) {
        if (!compiled[i]) {
          auto again = a_.inputs_.selectors->Get(source[i].cel_expression);
          return InvalidArgument(who + ": selector #" + std::to_string(i) + ": CEL compile error: " +
                                 std::string(again.status().message()));
        }
        auto m = compiled[i]->Matches(cand.id->driver, *cand.device);
        if (!m.ok()) {
          return InvalidArgument(who + ": selector #" + std::to_string(i) + " on device " + cand.id->String() +
                                 ": CEL runtime error: " + std::string(m.status().message()));
        }
        if (!*m) return false;
      }
      return true;
    };
    bool matches = true;
    if (rd.device_class) {
      auto m = run(rd.class_selectors, rd.device_class->selectors, "class " + rd.device_class->metadata.name);
      if (!m.ok()) return m.status();
      matches = *m;
    }
    if (matches) {
      auto m = run(rd.request_selectors, rd.request->selectors, "claim " + ClaimRef(claim));
      if (!m.ok()) return m.status();
      matches = *m;
    }
    if (rd.memo) rd.memo->Set(slot, matches);
    memo = matches;
  }
  if (!*memo) return false;
  if (cand.slice->per_device_node_selection && !SliceIndex::DeviceReaches(*cand.device, node_)) return false;
  return true;
}

ksched::Status Search::Validate(size_t c, size_t r, size_t s, PerRequest& out) {
  const api::ResourceClaim& claim = *a_.claims_[c];
  const Allocator::RequestData& rd = a_.data_[c].requests[r][s];
  // upstream validateDeviceRequest: selectors first, then the class.
  if (rd.request) {
    for (size_t i = 0; i < rd.request->selectors.size(); ++i) {
      if (rd.request->selectors[i].cel_expression.empty()) {
        return InvalidArgument("claim " + ClaimRef(claim) + ", request " + rd.name + ", selector #" + std::to_string(i) +
                               ": CEL expression empty (unsupported selector type?)");
      }
    }
  }
  if (!rd.error.ok()) return rd.error;
  const api::DeviceSubRequest& req = *rd.request;
  if (req.allocation_mode == api::kAllocationModeExactCount) {
    out.num_devices = static_cast<int>(std::min<int64_t>(req.count, 1 << 30));
    return {};
  }
  if (req.allocation_mode != api::kAllocationModeAll) {
    return InvalidArgument("claim " + ClaimRef(claim) + ", request " + rd.name + ": unsupported count mode " +
                           req.allocation_mode);
  }
  for (const Pool& pool : pools_) {
    if (pool.incomplete) {
      return InvalidArgument("claim " + ClaimRef(claim) + ", request " + rd.name +
                             ": asks for all devices, but resource pool " + pool.Id() + " is currently being updated");
    }
    if (pool.invalid) {
      return InvalidArgument("claim " + ClaimRef(claim) + ", request " + rd.name +
                             ": asks for all devices, but resource pool " + pool.Id() + " is currently invalid");
    }
    for (size_t si = 0; si < pool.slices.size(); ++si) {
      for (size_t di = 0; di < pool.slices[si]->devices.size(); ++di) {
        Candidate cand = At(pool, si, di);
        auto ok = Selectable(rd, cand, c);
        if (!ok.ok()) return ok.status();
        if (*ok) out.all.push_back(cand);
      }
    }
  }
  out.num_devices = static_cast<int>(out.all.size());
  return {};
}

AllocateOutcome Search::Run(Want want) {
  AllocateOutcome outcome;
  const size_t n = a_.claims_.size();
  scratch_.Reset(a_.data_);
  for (size_t c = 0; c < n; ++c) {
    const api::ResourceClaim& claim = *a_.claims_[c];
    int min_devices = 0;
    for (size_t r = 0; r < a_.data_[c].requests.size(); ++r) {
      const auto& entries = a_.data_[c].requests[r];
      int min_request = std::numeric_limits<int>::max();
      for (size_t s = 0; s < entries.size(); ++s) {
        if (auto st = Validate(c, r, s, per_[c][r][s]); !st.ok()) {
          outcome.error = st;
          return outcome;
        }
        min_request = std::min(min_request, per_[c][r][s].num_devices);
      }
      min_devices += entries.empty() ? 0 : min_request;
    }
    if (min_devices > kMaxResults) {
      outcome.error = InvalidArgument("claim " + ClaimRef(claim) + ": number of requested devices " +
                                      std::to_string(min_devices) + " exceeds the claim limit of " +
                                      std::to_string(kMaxResults));
      return outcome;
    }
    for (size_t i = 0; i < claim.spec.constraints.size(); ++i) {
      const api::DeviceConstraint& dc = claim.spec.constraints[i];
      Constraint con;
      con.requests = dc.requests;
      if (!dc.match_attribute.empty()) {
        con.attribute = dc.match_attribute;
      } else if (!dc.distinct_attribute.empty()) {
        con.attribute = dc.distinct_attribute;
        con.distinct = true;
      } else {
        outcome.error = InvalidArgument("claim " + ClaimRef(claim) + ", constraint #" + std::to_string(i) +
                                        ": empty constraint (unsupported constraint type?)");
        return outcome;
      }
      constraints_[c].push_back(std::move(con));
    }
  }
  Step step = AllocateOne(0, 0, 0, 0, false);
  if (step == Step::kError) {
    outcome.error = error_;
    outcome.timed_out = timed_out_;
    return outcome;
  }
  if (step != Step::kDone) {
    for (const Pool& pool : pools_) {
      if (pool.invalid) {
        outcome.error = InvalidArgument("invalid resource pools were encountered");
        outcome.node_only = true;
        break;
      }
    }
    return outcome;
  }
  outcome.fits = true;
  if (want == Want::kVerdict) return outcome;
  outcome.solution = Solution{results_, selected_};
  if (want == Want::kSolution) return outcome;
  auto results = a_.Materialize(*outcome.solution);
  if (!results.ok()) {
    outcome.error = results.status();
    outcome.solution.reset();
    outcome.fits = false;
    return outcome;
  }
  outcome.results = std::move(*results);
  return outcome;
}

Search::Step Search::AllocateOne(size_t c, size_t r, size_t s, int device_index, bool in_subrequest) {
  if (stop_ && stop_->load(std::memory_order_relaxed)) {
    error_ = ksched::Status(StatusCode::kCancelled, "filter operation aborted");
    return Step::kError;
  }
  // The clock is read every 64 steps: a step costs far less than a clock read, and
  // most searches end within their first 64.
  if (deadline_ && (++steps_ & 63) == 0 && std::chrono::steady_clock::now() > *deadline_) {
    timed_out_ = true;
    error_ = ksched::Status(StatusCode::kDeadlineExceeded, "timed out trying to allocate devices");
    return Step::kError;
  }
  if (c >= a_.claims_.size()) return Step::kDone;
  const auto& requests = a_.data_[c].requests;
  if (r >= requests.size()) {
    Step next = AllocateOne(c + 1, 0, 0, 0, false);
    // A later claim over its limit: a different choice here may help a firstAvailable
    // request there, so this is not final.
    return next == Step::kTooMany ? Step::kNo : next;
  }
  const auto& entries = requests[r];
  if (!in_subrequest && entries.size() > 0 && entries[0].parent != nullptr) {
    bool all_too_many = true;
    for (size_t sub = 0; sub < entries.size(); ++sub) {
      Step step = AllocateOne(c, r, sub, 0, true);
      if (step == Step::kTooMany) continue;
      all_too_many = false;
      if (step == Step::kError) return step;
      if (step == Step::kDone) {
        selected_[c][r] = sub;
        return step;
      }
    }
    return all_too_many ? Step::kTooMany : Step::kNo;
  }
  const Allocator::RequestData& rd = entries[s];
  PerRequest& pr = per_[c][r][s];
  const bool all = rd.request->allocation_mode == api::kAllocationModeAll;
  if (all && pr.all.empty()) return Step::kNo;
  if (device_index >= pr.num_devices) return AllocateOne(c, r + 1, 0, 0, false);
  int after = static_cast<int>(results_[c].size()) + pr.num_devices - device_index;
  if (after > kMaxResults) return Step::kTooMany;

  if (all) {
    const Candidate& cand = pr.all[static_cast<size_t>(device_index)];
    auto took = Take(c, rd, cand, true);
    if (!took.ok()) {
      error_ = took.status();
      return Step::kError;
    }
    if (!*took) return Step::kNo;
    Step step = AllocateOne(c, r, s, device_index + 1, in_subrequest);
    if (step != Step::kDone) Release(c, rd, cand);
    return step;
  }

  const bool admin = rd.request->admin_access;
  for (const Pool& pool : pools_) {
    if (pool.incomplete || pool.invalid) continue;
    for (size_t si = 0; si < pool.slices.size(); ++si) {
      for (size_t di = 0; di < pool.slices[si]->devices.size(); ++di) {
        const Candidate cand = At(pool, si, di);
        if (admin ? AllocatingForClaim(cand, c) : InUse(cand)) continue;
        auto selectable = Selectable(rd, cand, c);
        if (!selectable.ok()) {
          error_ = selectable.status();
          return Step::kError;
        }
        if (!*selectable) continue;
        auto took = Take(c, rd, cand, false);
        if (!took.ok()) {
          error_ = took.status();
          return Step::kError;
        }
        if (!*took) continue;
        Step step = AllocateOne(c, r, s, device_index + 1, in_subrequest);
        if (step == Step::kDone) return step;
        Release(c, rd, cand);
        if (step != Step::kNo) return step;
      }
    }
  }
  return Step::kNo;
}

StatusOr<bool> Search::Take(size_t c, const Allocator::RequestData& rd, const Candidate& cand, bool must) {
  const bool admin = rd.request->admin_access;
  if (admin ? AllocatingForClaim(cand, c) : InUse(cand)) return false;
  if (!cand.device->consumes_counters.empty() && !CountersFit(cand)) return false;
  if (TaintPreventsAllocation(*cand.device, rd.request->tolerations)) {
    if (!cand.device->consumes_counters.empty()) ReturnCounters(cand);
    return false;
  }
  const std::string& base = rd.parent ? rd.parent->name : rd.name;
  auto& cons = constraints_[c];
  for (size_t i = 0; i < cons.size(); ++i) {
    if (cons[i].Add(base, rd.full_name, *cand.device, cand.id->driver)) continue;
    for (size_t e = 0; e < i; ++e) cons[e].Remove(base, rd.full_name);
    if (!cand.device->consumes_counters.empty()) ReturnCounters(cand);
    if (must) {
      return InvalidArgument("claim " + ClaimRef(*a_.claims_[c]) + ", request " + rd.name + ": cannot add device " +
                             cand.id->String() + " because a claim constraint would not be satisfied");
    }
    return false;
  }
  allocating_.emplace_back(cand.slot, c);
  results_[c].push_back(ChosenDevice{&rd, cand.device, cand.slice, cand.id});
  return true;
}

void Search::Release(size_t c, const Allocator::RequestData& rd, const Candidate& cand) {
  const std::string& base = rd.parent ? rd.parent->name : rd.name;
  for (Constraint& con : constraints_[c]) con.Remove(base, rd.full_name);
  for (auto it = allocating_.rbegin(); it != allocating_.rend(); ++it) {
    if (it->first == cand.slot && it->second == c) {
      allocating_.erase(std::next(it).base());
      break;
    }
  }
  if (!cand.device->consumes_counters.empty()) ReturnCounters(cand);
  results_[c].pop_back();
}

bool Search::CountersFit(const Candidate& cand) {
  // upstream checkAvailableCounters: the pool's shared counters less what allocated
  // devices consume, computed once per pool; then what this search has taken so far.
  auto [it, fresh] = available_.try_emplace(cand.pool);
  Counters& available = it->second;
  if (fresh) {
    for (const api::ResourceSlice* s : cand.pool->slices)
      for (const api::CounterSet& set : s->shared_counters)
        for (const auto& [name, q] : set.counters) available[set.name][name] = q.ExactMilli();
    // Devices of the pool's slices that do not reach this node consume counters too.
    for (const auto* list : {&cand.pool->slices, &cand.pool->other_slices}) {
      for (const api::ResourceSlice* s : *list) {
        for (const api::Device& d : s->devices) {
          if (d.consumes_counters.empty()) continue;
          if (!a_.inputs_.in_use || !a_.inputs_.in_use->Contains(api::DeviceId{s->driver, s->pool.name, d.name}))
            continue;
          for (const api::DeviceCounterConsumption& use : d.consumes_counters) {
            auto set = available.find(use.counter_set);
            if (set == available.end()) continue;
            for (const auto& [name, q] : use.counters) {
              auto counter = set->second.find(name);
              if (counter != set->second.end()) counter->second -= q.ExactMilli();
            }
          }
        }
      }
    }
  }
  Counters& consumed = consumed_[cand.pool];
  for (const api::DeviceCounterConsumption& use : cand.device->consumes_counters)
    for (const auto& [name, q] : use.counters) consumed[use.counter_set][name] += q.ExactMilli();
  for (const auto& [set_name, counters] : available) {
    auto used_set = consumed.find(set_name);
    if (used_set == consumed.end()) continue;
    for (const auto& [name, left] : counters) {
      auto used = used_set->second.find(name);
      if (used != used_set->second.end() && left < used->second) {
        ReturnCounters(cand);
        return false;
      }
    }
  }
  return true;
}

void Search::ReturnCounters(const Candidate& cand) {
  Counters& consumed = consumed_[cand.pool];
  for (const api::DeviceCounterConsumption& use : cand.device->consumes_counters)
    for (const auto& [name, q] : use.counters) consumed[use.counter_set][name] -= q.ExactMilli();
}

StatusOr<std::vector<api::AllocationResult>> Allocator::Materialize(const Solution& solution) const {
  std::vector<api::AllocationResult> out;
  out.reserve(claims_.size());
  for (size_t c = 0; c < claims_.size(); ++c) {
    auto result = Result(c, solution.devices[c], solution.selected[c]);
    if (!result.ok()) return result.status();
    out.push_back(std::move(*result));
  }
  return out;
}

int64_t Allocator::Score(const Solution& solution) const {
  if (!has_first_available_) return 0;
  int64_t score = 0;
  for (size_t c = 0; c < data_.size(); ++c) {
    for (size_t r = 0; r < data_[c].requests.size(); ++r) {
      const auto& entries = data_[c].requests[r];
      if (entries.empty() || entries[0].parent == nullptr) continue;
      score += kFirstAvailableScoreBase - static_cast<int64_t>(solution.selected[c][r]);
    }
  }
  return score;
}

StatusOr<api::AllocationResult> Allocator::Result(size_t c, const std::vector<ChosenDevice>& devices,
                                                  const std::vector<size_t>& selected) const {
  const api::ResourceClaim& claim = *claims_[c];
  api::AllocationResult out;
  out.results.reserve(devices.size());
  for (const ChosenDevice& d : devices) {
    const auto* rd = static_cast<const RequestData*>(d.request);
    api::DeviceRequestAllocationResult r;
    r.request = rd->full_name;
    r.driver = d.id->driver;
    r.pool = d.id->pool;
    r.device = d.id->device;
    r.admin_access = rd->request->admin_access;
    r.tolerations = rd->request->tolerations;
    out.results.push_back(std::move(r));
  }
  // Configuration: each class's once (FromClass), naming the requests that use it, then
  // the claim's (FromClaim) that apply to an allocated request or subrequest.
  std::map<std::string, std::pair<size_t, size_t>, std::less<>> class_configs;
  const auto& requests = data_[c].requests;
  for (size_t r = 0; r < requests.size(); ++r) {
    if (requests[r].empty()) continue;
    const Allocator::RequestData& rd = requests[r][requests[r][0].parent ? selected[r] : 0];
    if (!rd.device_class) continue;
    if (auto it = class_configs.find(rd.device_class->metadata.name); it != class_configs.end()) {
      for (size_t i = it->second.first; i < it->second.second; ++i) out.config[i].requests.push_back(rd.full_name);
      continue;
    }
    size_t start = out.config.size();
    for (const api::OpaqueDeviceConfig& cfg : rd.device_class->config)
      out.config.push_back(api::DeviceAllocationConfiguration{"FromClass", {rd.full_name}, cfg});
    class_configs[rd.device_class->metadata.name] = {start, out.config.size()};
  }
  for (const api::DeviceClaimConfiguration& cfg : claim.spec.config) {
    if (cfg.requests.empty()) {
      out.config.push_back(api::DeviceAllocationConfiguration{"FromClaim", {}, cfg.opaque});
      continue;
    }
    for (size_t r = 0; r < claim.spec.requests.size(); ++r) {
      const api::DeviceRequest& req = claim.spec.requests[r];
      auto names = [&](const std::string& n) { return std::find(cfg.requests.begin(), cfg.requests.end(), n) != cfg.requests.end(); };
      if (names(req.name)) {
        out.config.push_back(api::DeviceAllocationConfiguration{"FromClaim", cfg.requests, cfg.opaque});
        continue;
      }
      if (req.first_available.empty()) continue;
      const api::DeviceSubRequest& sub = req.first_available[selected[r]];
      if (names(req.name + "/" + sub.name))
        out.config.push_back(api::DeviceAllocationConfiguration{"FromClaim", cfg.requests, cfg.opaque});
    }
  }
  for (api::DeviceAllocationConfiguration& cfg : out.config)
    if (cfg.requests.size() == claim.spec.requests.size()) cfg.requests.clear();

  // upstream createNodeSelector: a node-local device pins the claim to its node;
  // node selectors of the devices' slices are merged into one term; devices reachable
  // from every node add nothing.
  api::NodeSelectorTerm term;
  auto add_unique = [](const std::vector<api::LabelSelectorRequirement>& from,
                       std::vector<api::LabelSelectorRequirement>& to) {
    for (const auto& req : from) {
      bool present = std::any_of(to.begin(), to.end(), [&](const api::LabelSelectorRequirement& have) {
        if (have.key != req.key || have.op != req.op) return false;
        std::vector<std::string> a = have.values, b = req.values;
        std::sort(a.begin(), a.end());
        a.erase(std::unique(a.begin(), a.end()), a.end());
        std::sort(b.begin(), b.end());
        b.erase(std::unique(b.begin(), b.end()), b.end());
        return a == b;
      });
      if (!present) to.push_back(req);
    }
  };
  for (const ChosenDevice& d : devices) {
    const api::DeviceNodeSelection* sel = &d.slice->nodes;
    api::DeviceNodeSelection none;
    if (d.slice->per_device_node_selection) sel = d.device->node_selection ? &*d.device->node_selection : &none;
    if (!sel->node_name.empty()) {
      api::NodeSelectorTerm pinned;
      pinned.match_fields.push_back(
          api::LabelSelectorRequirement{"metadata.name", api::SelectorOperator::kIn, {sel->node_name}});
      out.node_selector = std::vector<api::NodeSelectorTerm>{std::move(pinned)};
      return out;
    }
    if (!sel->node_selector) continue;
    if (sel->node_selector->size() > 1) {
      return InvalidArgument("create NodeSelector for claim " + claim.metadata.name +
                             ": unsupported ResourceSlice.NodeSelector with " +
                             std::to_string(sel->node_selector->size()) + " terms");
    }
    if (sel->node_selector->size() == 1) {
      add_unique(sel->node_selector->front().match_fields, term.match_fields);
      add_unique(sel->node_selector->front().match_expressions, term.match_expressions);
    }
  }
  if (!term.match_fields.empty() || !term.match_expressions.empty())
    out.node_selector = std::vector<api::NodeSelectorTerm>{std::move(term)};
  return out;
}

std::string Search::WhyNot() {
  scratch_.Reset(a_.data_);
  auto plural = [](size_t n, std::string_view what) {
    return std::to_string(n) + " " + std::string(what) + (n == 1 ? "" : "s");
  };
  for (size_t c = 0; c < a_.claims_.size(); ++c) {
    const api::ResourceClaim& claim = *a_.claims_[c];
    const auto& requests = a_.data_[c].requests;
    for (size_t r = 0; r < requests.size(); ++r) {
      // A request with alternatives fails only when every alternative does: report the
      // first one's numbers.
      std::string first;
      bool some_alternative_fits = false;
      for (size_t s = 0; s < requests[r].size(); ++s) {
        const Allocator::RequestData& rd = requests[r][s];
        if (!rd.error.ok() || rd.request == nullptr) continue;
        size_t match = 0, free = 0;
        for (const Pool& pool : pools_) {
          if (pool.incomplete || pool.invalid) continue;
          for (size_t si = 0; si < pool.slices.size(); ++si) {
            for (size_t di = 0; di < pool.slices[si]->devices.size(); ++di) {
              const Candidate cand = At(pool, si, di);
              auto selectable = Selectable(rd, cand, c);
              if (!selectable.ok() || !*selectable) continue;
              ++match;
              if ((rd.request->admin_access || !InUse(cand)) &&
                  !TaintPreventsAllocation(*cand.device, rd.request->tolerations))
                ++free;
            }
          }
        }
        const bool all = rd.request->allocation_mode == api::kAllocationModeAll;
        const size_t needed = all ? std::max<size_t>(match, 1) : static_cast<size_t>(std::max<int64_t>(rd.request->count, 0));
        if (free >= needed) {
          some_alternative_fits = true;
          break;
        }
        if (first.empty()) {
          first = "claim " + ClaimRef(claim) + ", request " + rd.full_name + ": " + plural(match, "device") +
                  " on the node " + (match == 1 ? "matches" : "match") + " its selectors, " + std::to_string(free) +
                  " available, " + (all ? "all" : std::to_string(needed)) + " needed";
        }
      }
      if (!some_alternative_fits && !first.empty()) return first;
    }
  }
  if (a_.claims_.size() == 1)
    return "claim " + ClaimRef(*a_.claims_[0]) +
           ": each request finds devices on the node, but not all of them together (constraints, or devices several "
           "requests want)";
  return "each request finds devices on the node, but the claims' requests do not fit together (constraints, or "
         "devices several requests want)";
}

std::string Allocator::WhyNot(const api::NodePtr& node) const {
  if (!inputs_.slices) return "";
  auto pools = inputs_.slices->PoolsFor(node);
  if (!pools.ok()) return "";
  Search search(*this, *node, **pools, nullptr, std::nullopt);
  return search.WhyNot();
}

AllocateOutcome Allocator::Allocate(const api::NodePtr& node, const std::atomic<bool>* stop,
                                    std::optional<std::chrono::steady_clock::time_point> deadline,
                                    Want want) const {
  AllocateOutcome outcome;
  if (!inputs_.slices) {
    outcome.error = Internal("no resource slices");
    return outcome;
  }
  auto pools = inputs_.slices->PoolsFor(node);
  if (!pools.ok()) {
    outcome.error = InvalidArgument("gather pool information: " + std::string(pools.status().message()));
    return outcome;
  }
  Search search(*this, *node, **pools, stop, deadline);
  return search.Run(want);
}

}  // namespace ksched::framework::plugins::dynamicresources
