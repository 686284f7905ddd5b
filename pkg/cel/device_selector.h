// CEL device selectors of dynamic resource allocation (DeviceClass and
// ResourceClaim selectors[].cel.expression), with upstream's semantics
// (k8s.io/dynamic-resource-allocation/cel): the variable `device` with fields driver,
// attributes (domain -> id -> value), capacity (domain -> id -> quantity) and
// allowMultipleAllocations; the Kubernetes CEL libraries; a runtime cost limit.
//
// What our interpreter supports of CEL is listed in pkg/cel/README.md.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pkg/api/resource.h"
#include "pkg/util/mutex.h"
#include "pkg/util/status.h"
#include "pkg/util/thread_annotations.h"

namespace ksched::cel {

struct Program;

// A compiled selector: immutable, safe to evaluate from many threads at once.
class DeviceSelector {
 public:
  // Errors (InvalidArgument) carry upstream's message, e.g.
  //   compilation failed: ERROR: <input>:1:7: undefined field 'foo'
  //    | device.foo == 1
  //    | ......^
  // or "must evaluate to bool or the unknown type, not int". The allocator adds its
  // context ("class x: selector #0: CEL compile error: ...").
  static StatusOr<std::shared_ptr<const DeviceSelector>> Compile(std::string_view expression);

  // Whether the device of `driver` matches. Runtime errors are InvalidArgument with
  // cel-go's message ("no such key: model"); exceeding the cost limit is OutOfRange
  // "operation cancelled: actual cost limit exceeded".
  StatusOr<bool> Matches(std::string_view driver, const api::Device& device) const;

  // The same with a cost limit other than resourceapi.CELSelectorExpressionMaxCost;
  // `actual_cost` (if given) receives the cost of the evaluation.
  StatusOr<bool> Matches(std::string_view driver, const api::Device& device, uint64_t cost_limit,
                         uint64_t* actual_cost) const;

  const std::string& expression() const { return expression_; }

  ~DeviceSelector();

 private:
  DeviceSelector(std::string expression, std::unique_ptr<const Program> program);

  std::string expression_;
  std::unique_ptr<const Program> program_;
};

// The scheduler plugin's cache size (dynamicresources.go: cel.NewCache(10, ...)).
inline constexpr size_t kDefaultSelectorCacheSize = 10;

// A thread-safe LRU cache of compiled selectors by expression text. Unlike
// upstream's cache.go it also keeps compile errors, so a class with a bad selector
// is not recompiled for every node.
class SelectorCache {
 public:
  explicit SelectorCache(size_t max_entries = kDefaultSelectorCacheSize) : max_entries_(max_entries) {}

  StatusOr<std::shared_ptr<const DeviceSelector>> Get(std::string_view expression);

 private:
  using Result = StatusOr<std::shared_ptr<const DeviceSelector>>;
  struct Entry {
    std::string expression;
    Result result;
  };

  const size_t max_entries_;
  Mutex mu_;
  std::list<Entry> lru_ GUARDED_BY(mu_);  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_ GUARDED_BY(mu_);
};

}  // namespace ksched::cel
