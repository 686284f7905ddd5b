#include "pkg/api/types.h"

#include <algorithm>

namespace ksched::api {
namespace {

bool KeyLess(const StringMap::Entry& e, std::string_view key) { return e.first < key; }

}  // namespace

StringMap::StringMap(std::initializer_list<Entry> entries) {
  entries_.reserve(entries.size());
  for (const Entry& e : entries) Set(e.first, e.second);
}

void StringMap::Set(std::string key, std::string value) {
  // Decoded maps arrive sorted (Go marshals map keys in order), so appending is the
  // common case and stays O(1).
  if (entries_.empty() || entries_.back().first < key) {
    entries_.emplace_back(std::move(key), std::move(value));
    return;
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), std::string_view(key), KeyLess);
  if (it != entries_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    entries_.emplace(it, std::move(key), std::move(value));
  }
}

const std::string* StringMap::Get(std::string_view key) const {
  // Most maps hold a handful of labels, and label keys mostly differ in length: a scan
  // that compares lengths first touches fewer bytes than a binary search of full compares
  // (this runs per node and per pod in the affinity and spread plugins).
  if (entries_.size() <= kLinearScanMax) {
    for (const Entry& e : entries_) {
      if (e.first.size() == key.size() && e.first == key) return &e.second;
    }
    return nullptr;
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key, KeyLess);
  if (it != entries_.end() && it->first == key) return &it->second;
  return nullptr;
}

void StringMap::Reserve(size_t n) { entries_.reserve(n); }

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNone: return "";
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
    case TaintEffect::kUnknown: return "Unknown";
  }
  return "";
}

const Quantity* FindResource(const ResourceList& list, std::string_view name) {
  for (const auto& [n, q] : list) {
    if (n == name) return &q;
  }
  return nullptr;
}

const PodCondition* Pod::FindCondition(std::string_view type) const {
  for (const PodCondition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace ksched::api
