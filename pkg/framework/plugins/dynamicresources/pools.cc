#include "pkg/framework/plugins/dynamicresources/pools.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace ksched::framework::plugins::dynamicresources {
namespace {

// upstream structured nodeMatches, for a selection already parsed.
bool SelectionReaches(const api::DeviceNodeSelection& sel, const api::NodeSelectorMatcher* parsed,
                      const api::Node& node) {
  if (!sel.node_name.empty()) return node.metadata.name == sel.node_name;
  if (sel.all_nodes) return true;
  if (parsed) return parsed->Matches(node);
  return false;
}

}  // namespace

SliceIndex::SliceIndex(std::vector<api::ResourceSlicePtr> slices) : slices_(std::move(slices)) {
  node_selectors_.resize(slices_.size());
  for (size_t i = 0; i < slices_.size(); ++i) {
    const api::ResourceSlice& s = *slices_[i];
    memo_base_[&s] = num_devices_;
    num_devices_ += static_cast<uint32_t>(s.devices.size());
    for (const api::Device& d : s.devices) {
      ids_.push_back(api::DeviceId{s.driver, s.pool.name, d.name});
      slot_of_.emplace(ids_.back(), static_cast<uint32_t>(ids_.size() - 1));
    }
    by_pool_[{s.driver, s.pool.name}].push_back(i);
    // Shared counters are needed wherever the pool's devices are (upstream GatherPools
    // adds such slices for every node).
    if (!s.nodes.node_name.empty() && s.shared_counters.empty()) {
      node_local_[s.nodes.node_name].push_back(i);
      continue;
    }
    if (s.nodes.node_selector) node_selectors_[i] = api::NodeSelectorMatcher::Parse(*s.nodes.node_selector);
    others_.push_back(i);
  }
}

bool SliceIndex::DeviceReaches(const api::Device& device, const api::Node& node) {
  if (!device.node_selection) return false;
  const api::DeviceNodeSelection& sel = *device.node_selection;
  if (!sel.node_name.empty() || sel.all_nodes) return SelectionReaches(sel, nullptr, node);
  if (!sel.node_selector) return false;
  // Per-device selectors are rare (partitionable devices spanning nodes): parsed per call.
  auto parsed = api::NodeSelectorMatcher::Parse(*sel.node_selector);
  return parsed.errors().empty() && parsed.Matches(node);
}

uint32_t SliceIndex::MemoSlot(const api::ResourceSlice* slice, size_t i) const {
  return memo_base_.at(slice) + static_cast<uint32_t>(i);
}

std::shared_ptr<SelectionMemo> SliceIndex::Memo(const std::string& key) const {
  {
    ReaderMutexLock lock(mu_);
    if (auto it = memos_.find(key); it != memos_.end()) return it->second;
  }
  WriterMutexLock lock(mu_);
  if (auto it = memos_.find(key); it != memos_.end()) return it->second;
  // A byte per device per combination: past the cap, requests go unremembered (each
  // evaluation runs) rather than letting many distinct selectors grow the index.
  if (memos_.size() >= kMaxMemos) return nullptr;
  auto& memo = memos_[key];
  memo = std::make_shared<SelectionMemo>(num_devices_);
  return memo;
}

StatusOr<std::shared_ptr<const std::vector<Pool>>> SliceIndex::PoolsFor(const api::NodePtr& node) const {
  {
    ReaderMutexLock lock(mu_);
    if (auto it = by_node_.find(node->metadata.name); it != by_node_.end() && it->second.node == node)
      return it->second.pools;
  }
  auto pools = Gather(*node);
  if (!pools.ok()) return pools.status();
  WriterMutexLock lock(mu_);
  by_node_[node->metadata.name] = Cached{node, *pools};
  return *pools;
}

StatusOr<std::shared_ptr<const std::vector<Pool>>> SliceIndex::Gather(const api::Node& node) const {
  // upstream GatherPools + addSlice: per pool, only the slices of the newest generation
  // count. Slices are visited in the order given (node-local ones and the rest merged).
  std::map<std::pair<std::string_view, std::string_view>, Pool> pools;
  auto add = [&](const api::ResourceSlice& s) {
    auto [it, fresh] = pools.try_emplace({s.driver, s.pool.name});
    Pool& p = it->second;
    if (fresh) {
      p.driver = s.driver;
      p.name = s.pool.name;
      p.slices.push_back(&s);
      return;
    }
    int64_t current = p.slices.front()->pool.generation;
    if (s.pool.generation < current) return;
    if (s.pool.generation > current) p.slices.clear();
    p.slices.push_back(&s);
  };
  static const std::vector<size_t> kNone;
  const std::vector<size_t>* local = &kNone;
  if (auto it = node_local_.find(node.metadata.name); it != node_local_.end()) local = &it->second;
  size_t l = 0, o = 0;
  while (l < local->size() || o < others_.size()) {
    if (o == others_.size() || (l < local->size() && (*local)[l] < others_[o])) {
      add(*slices_[(*local)[l++]]);
      continue;
    }
    size_t i = others_[o++];
    const api::ResourceSlice& s = *slices_[i];
    if (!s.shared_counters.empty()) {
      add(s);
      continue;
    }
    if (s.nodes.all_nodes || s.nodes.node_selector) {
      const auto& parsed = node_selectors_[i];
      if (s.nodes.node_selector && !parsed->errors().empty())
        return InvalidArgument("failed to perform node selection for slice " + s.metadata.name + ": " +
                               parsed->errors().front());
      if (SelectionReaches(s.nodes, parsed ? &*parsed : nullptr, node)) add(s);
      continue;
    }
    if (s.per_device_node_selection) {
      bool any = std::any_of(s.devices.begin(), s.devices.end(),
                             [&](const api::Device& d) { return DeviceReaches(d, node); });
      if (any) add(s);
    }
    // Nothing known set: a future way of selecting nodes, skipped as upstream does.
  }
  auto out = std::make_shared<std::vector<Pool>>();
  out->reserve(pools.size());
  for (auto& [id, pool] : pools) {
    const int64_t generation = pool.slices.front()->pool.generation;
    const int64_t want = pool.slices.front()->pool.resource_slice_count;
    if (static_cast<int64_t>(pool.slices.size()) != want) {
      // upstream checkSlicesInPool: slices not reaching this node may complete the
      // pool; a newer generation anywhere makes the one seen here obsolete.
      bool obsolete = false;
      std::vector<const api::ResourceSlice*> all;
      for (size_t i : by_pool_.at(id)) {
        const api::ResourceSlice* s = slices_[i].get();
        if (s->pool.generation > generation) obsolete = true;
        if (s->pool.generation == generation) all.push_back(s);
      }
      if (obsolete) continue;
      if (static_cast<int64_t>(all.size()) != want) {
        pool.incomplete = true;
        for (const api::ResourceSlice* sl : pool.slices) pool.bases.push_back(memo_base_.at(sl));
        out->push_back(std::move(pool));
        continue;
      }
      for (const api::ResourceSlice* s : all)
        if (std::find(pool.slices.begin(), pool.slices.end(), s) == pool.slices.end()) pool.other_slices.push_back(s);
    }
    Validate(pool);
    for (const api::ResourceSlice* s : pool.slices) pool.bases.push_back(memo_base_.at(s));
    out->push_back(std::move(pool));
  }
  return std::shared_ptr<const std::vector<Pool>>(std::move(out));
}

void SliceIndex::Validate(Pool& pool) {
  // upstream buildPool: device names, then counter sets, then what devices consume.
  auto invalid = [&pool](std::string reason) {
    pool.invalid = true;
    pool.invalid_reason = std::move(reason);
  };
  std::set<std::string_view> names;
  for (const api::ResourceSlice* s : pool.slices) {
    for (const api::Device& d : s->devices) {
      if (!names.insert(d.name).second) return invalid("duplicate device name " + d.name);
    }
  }
  std::map<std::string_view, const api::CounterSet*> sets;
  for (const api::ResourceSlice* s : pool.slices) {
    for (const api::CounterSet& set : s->shared_counters) {
      if (!sets.emplace(set.name, &set).second) return invalid("duplicate counter set name " + set.name);
    }
  }
  for (const auto* list : {&pool.slices, &pool.other_slices}) {
    for (const api::ResourceSlice* s : *list) {
      for (const api::Device& d : s->devices) {
        for (const api::DeviceCounterConsumption& use : d.consumes_counters) {
          auto set = sets.find(use.counter_set);
          if (set == sets.end()) return invalid("counter set " + use.counter_set + " not found");
          for (const auto& [name, q] : use.counters) {
            if (!set->second->counters.contains(name))
              return invalid("counter " + name + " not found in counter set " + use.counter_set);
          }
        }
      }
    }
  }
}

}  // namespace ksched::framework::plugins::dynamicresources
