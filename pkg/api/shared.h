// Copy-on-write holders for the parts of a pod that come from its template (containers,
// affinity, tolerations, spread constraints). Replicas of one workload carry identical
// copies of these, so the decoder hands every replica the same immutable instance
// (see DedupTable in json_reader.h) and a pod pays 16 bytes for each instead of
// hundreds. They read like the std::vector / std::optional they replace; the few
// mutating calls (used when tests build pods) copy a shared value before changing it.
//
// Mutation is not synchronised: only mutate a holder the calling thread owns, as with
// any other field of a Pod under construction.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace ksched::api {

// Holders keep the instance non-const so that a holder which is its only owner can write
// in place; anything shared (by another holder or by the decoder's DedupTable, which
// keeps a reference to everything it hands out) is copied before a write.
template <typename T>
class SharedVector {
 public:
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;

  SharedVector() = default;
  SharedVector(std::vector<T> v) { *this = std::move(v); }  // NOLINT: reads like a vector
  SharedVector(std::initializer_list<T> init) : SharedVector(std::vector<T>(init)) {}
  // Adopts an instance that may be shared with other pods; an empty one is dropped.
  explicit SharedVector(std::shared_ptr<std::vector<T>> shared) {
    if (shared != nullptr && !shared->empty()) ptr_ = std::move(shared);
  }

  SharedVector& operator=(std::vector<T> v) {
    if (v.empty()) ptr_.reset();
    else ptr_ = std::make_shared<std::vector<T>>(std::move(v));
    return *this;
  }
  SharedVector& operator=(std::initializer_list<T> init) { return *this = std::vector<T>(init); }

  // Read access, including passing it where a const std::vector<T>& is expected.
  const std::vector<T>& get() const { return ptr_ != nullptr ? *ptr_ : Empty(); }
  operator const std::vector<T>&() const { return get(); }  // NOLINT
  bool empty() const { return ptr_ == nullptr || ptr_->empty(); }
  size_t size() const { return get().size(); }
  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  const T& operator[](size_t i) const { return get()[i]; }
  const T& front() const { return get().front(); }
  const T& back() const { return get().back(); }
  // True when both hold the very same instance (a cheap "certainly equal").
  bool SameInstance(const SharedVector& o) const { return ptr_ == o.ptr_; }

  // Mutation: detaches from other holders first.
  std::vector<T>& mutable_vector() {
    if (ptr_ == nullptr) ptr_ = std::make_shared<std::vector<T>>();
    else if (ptr_.use_count() > 1) ptr_ = std::make_shared<std::vector<T>>(*ptr_);
    return *ptr_;
  }
  T& operator[](size_t i) { return mutable_vector()[i]; }
  T& back() { return mutable_vector().back(); }
  typename std::vector<T>::iterator begin() { return mutable_vector().begin(); }
  typename std::vector<T>::iterator end() { return mutable_vector().end(); }
  void push_back(T v) { mutable_vector().push_back(std::move(v)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return mutable_vector().emplace_back(std::forward<Args>(args)...);
  }
  void clear() { ptr_.reset(); }

  friend bool operator==(const SharedVector& a, const SharedVector& b) {
    return a.ptr_ == b.ptr_ || a.get() == b.get();
  }

 private:
  static const std::vector<T>& Empty() {
    static const std::vector<T> empty;
    return empty;
  }

  std::shared_ptr<std::vector<T>> ptr_;  // null when empty
};

template <typename T>
class SharedOptional {
 public:
  SharedOptional() = default;
  SharedOptional(std::nullopt_t) {}                                   // NOLINT
  SharedOptional(T v) : ptr_(std::make_shared<T>(std::move(v))) {}    // NOLINT
  explicit SharedOptional(std::shared_ptr<T> shared) : ptr_(std::move(shared)) {}

  SharedOptional& operator=(std::nullopt_t) {
    reset();
    return *this;
  }
  SharedOptional& operator=(T v) {
    ptr_ = std::make_shared<T>(std::move(v));
    return *this;
  }

  bool has_value() const { return ptr_ != nullptr; }
  explicit operator bool() const { return ptr_ != nullptr; }
  const T& operator*() const { return *ptr_; }
  const T* operator->() const { return ptr_.get(); }
  const T& value() const { return *ptr_; }

  // A fresh, privately held value (as std::optional::emplace).
  template <typename... Args>
  T& emplace(Args&&... args) {
    ptr_ = std::make_shared<T>(std::forward<Args>(args)...);
    return *ptr_;
  }
  // Mutable access to an engaged value; detaches from other holders first.
  T& mutable_value() {
    if (ptr_.use_count() > 1) ptr_ = std::make_shared<T>(*ptr_);
    return *ptr_;
  }
  void reset() { ptr_.reset(); }

  friend bool operator==(const SharedOptional& a, const SharedOptional& b) {
    if (a.ptr_ == b.ptr_) return true;
    if (a.ptr_ == nullptr || b.ptr_ == nullptr) return false;
    return *a.ptr_ == *b.ptr_;
  }

 private:
  std::shared_ptr<T> ptr_;
};

}  // namespace ksched::api
