#include "informers/informer.h"

#include <deque>

#include "pkg/api/json.h"
#include "pkg/util/log.h"
#include "pkg/util/thread_name.h"

namespace ksched::informers {
namespace {

// Per-resource decoding, so Informer<T> stays generic.
template <typename T>
struct Codec;
template <>
struct Codec<api::Pod> {
  static constexpr const char* kKind = "pods";
  static constexpr const char* kThread = "informer-pods";  // at most 15 characters
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodePodList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodePodWatchEvent(p, t); }
};
template <>
struct Codec<api::Node> {
  static constexpr const char* kKind = "nodes";
  static constexpr const char* kThread = "informer-nodes";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeNodeList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeNodeWatchEvent(p, t); }
};
template <>
struct Codec<api::Namespace> {
  static constexpr const char* kKind = "namespaces";
  static constexpr const char* kThread = "informer-ns";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeNamespaceList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeNamespaceWatchEvent(p, t); }
};
template <>
struct Codec<api::Service> {
  static constexpr const char* kKind = "services";
  static constexpr const char* kThread = "informer-svc";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeServiceList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeServiceWatchEvent(p, t); }
};
template <>
struct Codec<api::ReplicationController> {
  static constexpr const char* kKind = "replicationcontrollers";
  static constexpr const char* kThread = "informer-rc";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeReplicationControllerList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeReplicationControllerWatchEvent(p, t); }
};
template <>
struct Codec<api::ReplicaSet> {
  static constexpr const char* kKind = "replicasets";
  static constexpr const char* kThread = "informer-rs";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeReplicaSetList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeReplicaSetWatchEvent(p, t); }
};
template <>
struct Codec<api::StatefulSet> {
  static constexpr const char* kKind = "statefulsets";
  static constexpr const char* kThread = "informer-sts";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeStatefulSetList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeStatefulSetWatchEvent(p, t); }
};
template <>
struct Codec<api::PodDisruptionBudget> {
  static constexpr const char* kKind = "poddisruptionbudgets";
  static constexpr const char* kThread = "informer-pdb";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodePodDisruptionBudgetList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodePodDisruptionBudgetWatchEvent(p, t); }
};
template <>
struct Codec<api::PodGroup> {
  static constexpr const char* kKind = "podgroups";
  static constexpr const char* kThread = "informer-pg";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodePodGroupList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodePodGroupWatchEvent(p, t); }
};

template <>
struct Codec<api::PersistentVolumeClaim> {
  static constexpr const char* kKind = "persistentvolumeclaims";
  static constexpr const char* kThread = "informer-pvc";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodePersistentVolumeClaimList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodePersistentVolumeClaimWatchEvent(p, t); }
};
template <>
struct Codec<api::PersistentVolume> {
  static constexpr const char* kKind = "persistentvolumes";
  static constexpr const char* kThread = "informer-pv";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodePersistentVolumeList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodePersistentVolumeWatchEvent(p, t); }
};
template <>
struct Codec<api::StorageClass> {
  static constexpr const char* kKind = "storageclasses";
  static constexpr const char* kThread = "informer-sc";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeStorageClassList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeStorageClassWatchEvent(p, t); }
};
template <>
struct Codec<api::CSINode> {
  static constexpr const char* kKind = "csinodes";
  static constexpr const char* kThread = "informer-csinode";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeCSINodeList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeCSINodeWatchEvent(p, t); }
};
template <>
struct Codec<api::CSIDriver> {
  static constexpr const char* kKind = "csidrivers";
  static constexpr const char* kThread = "informer-csidrv";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeCSIDriverList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeCSIDriverWatchEvent(p, t); }
};

template <>
struct Codec<api::DeviceClass> {
  static constexpr const char* kKind = "deviceclasses";
  static constexpr const char* kThread = "informer-dclass";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeDeviceClassList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeDeviceClassWatchEvent(p, t); }
};
template <>
struct Codec<api::ResourceSlice> {
  static constexpr const char* kKind = "resourceslices";
  static constexpr const char* kThread = "informer-slice";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeResourceSliceList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeResourceSliceWatchEvent(p, t); }
};
template <>
struct Codec<api::ResourceClaim> {
  static constexpr const char* kKind = "resourceclaims";
  static constexpr const char* kThread = "informer-rclaim";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeResourceClaimList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) { return api::DecodeResourceClaimWatchEvent(p, t); }
};
template <>
struct Codec<api::ResourceClaimTemplate> {
  static constexpr const char* kKind = "resourceclaimtemplates";
  static constexpr const char* kThread = "informer-rctmpl";
  static auto List(api::JsonParser& p, api::JsonText t) { return api::DecodeResourceClaimTemplateList(p, t); }
  static auto Event(api::JsonParser& p, api::JsonText t) {
    return api::DecodeResourceClaimTemplateWatchEvent(p, t);
  }
};

// A server (or a lagging apiserver replica) that has not yet seen the RV we asked for
// answers 504 "Too large resource version". client-go's isTooLargeResourceVersionError
// then relists from etcd (RV "") rather than retry an RV that may never arrive there.
bool IsTooLargeResourceVersion(std::string_view message) {
  return message.find("Too large resource version") != std::string_view::npos;
}
bool IsTooLargeResourceVersion(const Status& s) { return IsTooLargeResourceVersion(s.message()); }

// Lines handed from the client's I/O thread to the informer thread, which the client's
// callbacks wake through Informer::watch_wakeup_.
struct LineQueue {
  explicit LineQueue(size_t limit) : max_bytes(limit) {}
  const size_t max_bytes;
  Mutex mu;
  std::deque<std::string> lines GUARDED_BY(mu);
  size_t bytes GUARDED_BY(mu) = 0;
  // Set when a line arrived with `max_bytes` already buffered. That line and all later
  // ones are dropped; the informer applies what it holds and re-watches from there.
  bool overflowed GUARDED_BY(mu) = false;
  std::optional<Status> closed GUARDED_BY(mu);  // set once by on_close
};

}  // namespace

namespace {

// "namespace/name", or "name" for cluster-scoped objects.
template <typename Meta>
std::string KeyOf(const Meta& meta) {
  return meta.namespace_.empty() ? meta.name : meta.namespace_ + "/" + meta.name;
}

}  // namespace

std::chrono::milliseconds TimeLeft(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     deadline - std::chrono::steady_clock::now()));
}

std::string StoreKey(const api::ObjectMeta& meta) { return KeyOf(meta); }
std::string StoreKey(const api::LeanObjectMeta& meta) { return KeyOf(meta); }

template <typename T>
Informer<T>::Informer(client::ApiClient& client, std::string resource_path, InformerOptions options)
    : client_(client), path_(std::move(resource_path)), options_(options), clock_(*options.clock), rng_(options.seed) {}

template <typename T>
Informer<T>::~Informer() {
  Stop();
}

template <typename T>
void Informer<T>::AddHandler(EventHandler<T>* handler) {
  handlers_.push_back(handler);
}

template <typename T>
void Informer<T>::Start() {
  thread_ = std::jthread([this](std::stop_token st) {
    SetThreadName(Codec<T>::kThread);
    Run(st);
  });
}

template <typename T>
void Informer<T>::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

template <typename T>
bool Informer<T>::HasSynced() const {
  ReaderMutexLock lock(store_mu_);
  return synced_;
}

template <typename T>
bool Informer<T>::WaitForSync(std::chrono::milliseconds timeout) const {
  ReaderMutexLock lock(store_mu_);
  return synced_cv_.wait_for(lock, timeout, [&]() REQUIRES_SHARED(store_mu_) { return synced_; });
}

template <typename T>
std::shared_ptr<const T> Informer<T>::Get(const std::string& key) const {
  ReaderMutexLock lock(store_mu_);
  auto it = store_.find(key);
  return it == store_.end() ? nullptr : it->second;
}

template <typename T>
std::vector<std::shared_ptr<const T>> Informer<T>::List() const {
  ReaderMutexLock lock(store_mu_);
  std::vector<std::shared_ptr<const T>> out;
  out.reserve(store_.size());
  for (const auto& [k, v] : store_) out.push_back(v);
  return out;
}

template <typename T>
size_t Informer<T>::Size() const {
  ReaderMutexLock lock(store_mu_);
  return store_.size();
}

template <typename T>
std::string Informer<T>::LastSyncResourceVersion() const {
  ReaderMutexLock lock(store_mu_);
  return rv_;
}

template <typename T>
bool Informer<T>::RelistAndWait(std::chrono::milliseconds timeout) {
  int64_t target;
  {
    WriterMutexLock lock(store_mu_);
    target = lists_started_ + 1;
  }
  relist_requested_.store(true);
  watch_wakeup_->Notify();  // a reflector waiting on a quiet watch sees the request now
  ReaderMutexLock lock(store_mu_);
  return synced_cv_.wait_for(lock, timeout, [&]() REQUIRES_SHARED(store_mu_) { return last_completed_list_ >= target; });
}

template <typename T>
InformerStats Informer<T>::Stats() const {
  ReaderMutexLock lock(store_mu_);
  return stats_;
}

template <typename T>
void Informer<T>::AppendSelectors(std::string& path) const {
  if (!options_.field_selector.empty()) path += "&fieldSelector=" + client::UrlEncode(options_.field_selector);
  if (!options_.label_selector.empty()) path += "&labelSelector=" + client::UrlEncode(options_.label_selector);
}

template <typename T>
std::string Informer<T>::ListPath(const std::string& rv, const std::string& cont, bool paginate) const {
  std::string p = path_ + "?resourceVersion=" + client::UrlEncode(rv);
  if (paginate) p += "&limit=" + std::to_string(options_.page_size);
  if (!cont.empty()) p += "&continue=" + client::UrlEncode(cont);
  AppendSelectors(p);
  return p;
}

template <typename T>
std::string Informer<T>::WatchPath(int64_t timeout_seconds) const {
  std::string p = path_ + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout_seconds);
  {
    ReaderMutexLock lock(store_mu_);
    p += "&resourceVersion=" + client::UrlEncode(rv_);
  }
  AppendSelectors(p);
  return p;
}

template <typename T>
Status Informer<T>::LastListError() const {
  ReaderMutexLock lock(store_mu_);
  return last_list_error_;
}

template <typename T>
std::string_view Informer<T>::Kind() const {
  return Codec<T>::kKind;
}

template <typename T>
void Informer<T>::Run(std::stop_token stop) {
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (relist_requested_.exchange(false)) {
      rv_expired_ = true;
      need_list = true;
    }
    if (need_list) {
      Status s = ListAndReplace(stop);
      {
        WriterMutexLock lock(store_mu_);
        last_list_error_ = s;
      }
      if (!s.ok()) {
        if (stop.stop_requested()) return;
        KLOG(WARNING) << "failed to list " << Codec<T>::kKind << " (" << path_ << "): " << s.ToString();
        Backoff(stop);
        continue;
      }
      need_list = false;
    }
    switch (Watch(stop)) {
      case WatchEnd::kResume:
        break;
      case WatchEnd::kRelist: {
        rv_expired_ = true;
        WriterMutexLock lock(store_mu_);
        ++stats_.relists_after_gone;
        need_list = true;
        break;
      }
      case WatchEnd::kRelistRequested:
        rv_expired_ = true;  // a consistent read from etcd
        need_list = true;
        break;
      case WatchEnd::kBackoff:
        Backoff(stop);
        break;
      case WatchEnd::kStopped:
        return;
    }
  }
}

template <typename T>
void Informer<T>::Backoff(std::stop_token stop) {
  auto now = clock_.Now();
  if (now - last_failure_ > options_.backoff_reset) backoff_steps_ = 0;
  last_failure_ = now;
  auto base = options_.initial_backoff * (int64_t{1} << std::min(backoff_steps_, 16));
  base = std::min(base, options_.max_backoff);
  ++backoff_steps_;
  // Jitter factor 1.0: wait a uniformly random duration in [base, 2*base).
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  auto wait = std::chrono::duration_cast<Clock::duration>(base * (1.0 + jitter(rng_)));
  {
    WriterMutexLock lock(store_mu_);
    ++stats_.failures;
  }
  clock_.SleepFor(wait, stop);
}

// Lists every page, then replaces the store: new objects are added, changed ones
// updated, and ones that vanished are deleted as tombstones. As client-go's reflector:
// the first list is served by the API server's watch cache (RV "0", unpaginated there),
// a list after 410 Gone is a consistent read from etcd (RV ""), and any other relist
// asks for at least the last RV seen.
template <typename T>
Status Informer<T>::ListAndReplace(std::stop_token stop) {
  api::JsonParser parser;
  std::vector<std::shared_ptr<const T>> items;
  std::vector<typename api::ObjectList<T>::Skipped> skipped;
  std::string cont, list_rv;
  int64_t pages = 0;
  bool paginate = options_.page_size > 0;
  std::string rv;
  int64_t list_number;
  {
    WriterMutexLock lock(store_mu_);
    list_number = ++lists_started_;
    if (!rv_expired_) rv = rv_.empty() ? "0" : rv_;
  }
  if (!rv.empty() && rv != "0") paginate = false;  // so that the watch cache can serve it
  for (;;) {
    auto resp = client_.Do({.path = ListPath(rv, cont, paginate)});
    if (stop.stop_requested()) return Status(StatusCode::kCancelled, "stopped");
    if (!resp.ok()) {
      if (resp.status().code() == StatusCode::kGone && !cont.empty()) {
        // The continue token expired mid-pagination: start over with one full list.
        KLOG(INFO) << "continue token expired while listing " << Codec<T>::kKind << ", listing in full";
        items.clear();
        skipped.clear();
        cont.clear();
        paginate = false;
        continue;
      }
      if (resp.status().code() == StatusCode::kOutOfRange && (rv == "0" || !paginate) && options_.page_size > 0) {
        // The whole list in one body (the watch cache ignores `limit` for RV "0" and any RV
        // but "") is past the client's body limit: read it from etcd in pages instead,
        // each far below the limit.
        KLOG(INFO) << "list of " << Codec<T>::kKind << " larger than the client's body limit, listing in pages";
        items.clear();
        skipped.clear();
        cont.clear();
        rv.clear();
        rv_expired_ = true;
        paginate = true;
        continue;
      }
      if ((resp.status().code() == StatusCode::kGone || IsTooLargeResourceVersion(resp.status())) && !rv.empty() &&
          rv != "0") {
        KLOG(INFO) << "resource version " << rv << " of " << Codec<T>::kKind << " is gone, listing from etcd";
        rv_expired_ = true;
        rv.clear();
        paginate = options_.page_size > 0;
        continue;
      }
      return resp.status();
    }
    auto list = Codec<T>::List(parser, api::JsonText::Padded(resp->body));
    if (!list.ok()) return list.status().WithContext(std::string("decoding ") + Codec<T>::kKind + " list");
    ++pages;
    items.insert(items.end(), std::make_move_iterator(list->items.begin()), std::make_move_iterator(list->items.end()));
    skipped.insert(skipped.end(), std::make_move_iterator(list->skipped.begin()),
                   std::make_move_iterator(list->skipped.end()));
    list_rv = list->resource_version;
    cont = list->continue_token;
    if (cont.empty() || !paginate) break;
  }

  struct Change { std::shared_ptr<const T> old_obj, new_obj; };  // either may be null
  std::vector<Change> changes;
  {
    WriterMutexLock lock(store_mu_);
    std::unordered_map<std::string, std::shared_ptr<const T>> next;
    next.reserve(items.size() + skipped.size());
    // An object we could not decode keeps its previous copy (if we had one), so a single
    // bad object neither fails the list nor reads as deleted.
    for (const auto& bad : skipped) {
      KLOG(ERROR) << "skipping " << Codec<T>::kKind << " list item: " << bad.error;
      ++stats_.skipped_objects;
      if (bad.partial == nullptr || bad.partial->metadata.name.empty()) continue;
      std::string key = StoreKey(bad.partial->metadata);
      if (auto it = store_.find(key); it != store_.end()) next.emplace(std::move(key), it->second);
    }
    for (auto& obj : items) {
      std::string key = StoreKey(obj->metadata);
      auto it = store_.find(key);
      if (it == store_.end()) {
        changes.push_back({nullptr, obj});
      } else if (it->second->metadata.resource_version != obj->metadata.resource_version) {
        changes.push_back({it->second, obj});
      }
      next.emplace(std::move(key), std::move(obj));
    }
    for (auto& [key, old] : store_) {
      if (!next.count(key)) changes.push_back({old, nullptr});
    }
    store_ = std::move(next);
    rv_ = list_rv;
    rv_expired_ = false;
    ++stats_.lists;
    stats_.list_pages += pages;
  }
  for (const auto& c : changes) Notify(c.old_obj, c.new_obj, /*final_state_unknown=*/true);
  {
    WriterMutexLock lock(store_mu_);
    synced_ = true;
    last_completed_list_ = list_number;
  }
  synced_cv_.notify_all();
  KLOG_V(2) << "listed " << items.size() << " " << Codec<T>::kKind << " in " << pages << " page(s) at RV " << list_rv;
  return Status::OK();
}

template <typename T>
void Informer<T>::Notify(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj,
                         bool final_state_unknown) {
  if (old_obj != nullptr && new_obj != nullptr && old_obj->metadata.uid != new_obj->metadata.uid) {
    for (auto* h : handlers_) h->OnDelete({old_obj, /*final_state_unknown=*/true});
    for (auto* h : handlers_) h->OnAdd(new_obj);
    return;
  }
  for (auto* h : handlers_) {
    if (new_obj == nullptr) h->OnDelete({old_obj, final_state_unknown});
    else if (old_obj != nullptr) h->OnUpdate(old_obj, new_obj);
    else h->OnAdd(new_obj);
  }
}

template <typename T>
void Informer<T>::ApplyEvent(api::WatchEventType type, const std::shared_ptr<const T>& obj) {
  std::string key = StoreKey(obj->metadata);
  std::shared_ptr<const T> old;
  {
    WriterMutexLock lock(store_mu_);
    auto it = store_.find(key);
    if (it != store_.end()) old = it->second;
    if (type == api::WatchEventType::kDeleted) {
      if (it != store_.end()) store_.erase(it);
    } else {
      store_[key] = obj;
    }
    // An event without a resourceVersion must not reset ours: an empty RV would make the
    // next watch start from "now" and lose whatever happened in between.
    if (!obj->metadata.resource_version.empty()) rv_ = obj->metadata.resource_version;
  }
  if (type == api::WatchEventType::kDeleted) {
    // A delete of an object we never saw still reaches the handlers with what it carries.
    Notify(old ? old : obj, nullptr, /*final_state_unknown=*/false);
  } else {
    Notify(old, obj, /*final_state_unknown=*/false);
  }
}

template <typename T>
void Informer<T>::SkipBadEvent(const api::WatchEvent<T>& ev) {
  KLOG(ERROR) << "skipping watch event of " << Codec<T>::kKind << ": " << ev.object_error;
  {
    WriterMutexLock lock(store_mu_);
    ++stats_.skipped_objects;
    // Move past it, so a restarted watch does not replay the same bad event forever.
    if (!ev.resource_version.empty()) rv_ = ev.resource_version;
  }
  if (ev.type == api::WatchEventType::kDeleted && !ev.object->metadata.name.empty()) {
    // The key is all a delete needs; handlers get the last state we stored.
    ApplyEvent(api::WatchEventType::kDeleted, ev.object);
  }
}

template <typename T>
typename Informer<T>::WatchEnd Informer<T>::Watch(std::stop_token stop) {
  std::uniform_int_distribution<int64_t> dist(options_.min_watch_timeout.count(),
                                              2 * options_.min_watch_timeout.count() - 1);
  auto q = std::make_shared<LineQueue>(options_.max_buffered_watch_bytes);
  auto stream = client_.Watch({.path = WatchPath(dist(rng_))},
                              {.on_line =
                                   [q, wakeup = watch_wakeup_](std::string_view line) {
                                     {
                                       MutexLock l(q->mu);
                                       if (q->overflowed) return;
                                       if (q->bytes > 0 && q->bytes + line.size() > q->max_bytes) {
                                         q->overflowed = true;
                                       } else {
                                         q->bytes += line.size();
                                         q->lines.emplace_back(line);
                                       }
                                     }
                                     wakeup->Notify();
                                   },
                               .on_close =
                                   [q, wakeup = watch_wakeup_](Status s) {
                                     {
                                       MutexLock l(q->mu);
                                       q->closed = std::move(s);
                                     }
                                     wakeup->Notify();
                                   }});
  // Stop() ends the wait below too (the callback runs at once if a stop came already).
  std::stop_callback wake_on_stop(stop, [this] { watch_wakeup_->Notify(); });
  {
    WriterMutexLock lock(store_mu_);
    ++stats_.watches;
  }
  api::JsonParser parser;
  const auto started = clock_.Now();
  auto last_activity = started;
  int64_t events = 0;
  for (;;) {
    // Armed before anything below is checked: a line, the end of the stream, a relist
    // request or a stop that comes after the checks ends the sleep at the bottom.
    std::stop_token woken = watch_wakeup_->Arm();
    std::deque<std::string> batch;
    std::optional<Status> closed;
    bool overflowed = false;
    {
      MutexLock l(q->mu);
      batch.swap(q->lines);
      q->bytes = 0;
      if (batch.empty()) {
        closed = q->closed;
        overflowed = q->overflowed;
      }
    }
    if (stop.stop_requested()) {
      stream->Cancel();
      return WatchEnd::kStopped;
    }
    if (relist_requested_.exchange(false)) {
      stream->Cancel();
      return WatchEnd::kRelistRequested;
    }
    auto now = clock_.Now();
    if (!batch.empty()) last_activity = now;
    for (auto& line : batch) {
      auto ev = Codec<T>::Event(parser, api::JsonText::Padded(line));
      if (!ev.ok()) {
        // A line we cannot read (truncated or malformed): restart the watch from the last
        // good RV rather than skip an event and risk a silently stale store.
        KLOG(WARNING) << "bad watch event for " << Codec<T>::kKind << ", restarting watch: " << ev.status().message();
        WriterMutexLock lock(store_mu_);
        ++stats_.decode_errors;
        stream->Cancel();
        return WatchEnd::kBackoff;
      }
      ++events;
      switch (ev->type) {
        case api::WatchEventType::kAdded:
        case api::WatchEventType::kModified:
        case api::WatchEventType::kDeleted:
          if (!ev->object_error.empty()) SkipBadEvent(*ev);
          else ApplyEvent(ev->type, ev->object);
          break;
        case api::WatchEventType::kUnknown:
          KLOG(WARNING) << "skipping watch event of unknown type for " << Codec<T>::kKind;
          break;
        case api::WatchEventType::kBookmark: {
          WriterMutexLock lock(store_mu_);
          if (!ev->resource_version.empty()) rv_ = ev->resource_version;
          break;
        }
        case api::WatchEventType::kError: {
          stream->Cancel();
          if (ev->error.code == 410 || ev->error.reason == "Expired" || ev->error.reason == "Gone" ||
              IsTooLargeResourceVersion(ev->error.message)) {
            KLOG(INFO) << "watch of " << Codec<T>::kKind << " expired (" << ev->error.message << "), relisting";
            return WatchEnd::kRelist;
          }
          KLOG(WARNING) << "watch of " << Codec<T>::kKind << " failed: " << ev->error.message;
          return WatchEnd::kBackoff;
        }
      }
    }
    if (overflowed) {
      // Every line we kept has been applied; resume from there (see LineQueue).
      KLOG(WARNING) << "watch of " << Codec<T>::kKind << " buffered more than " << options_.max_buffered_watch_bytes
                    << " bytes ahead of its handlers, resuming it";
      stream->Cancel();
      WriterMutexLock lock(store_mu_);
      ++stats_.buffer_restarts;
      return WatchEnd::kResume;
    }
    if (closed) {
      if (closed->ok()) {
        // A watch that ends in under a second without events is suspicious (client-go
        // treats it as an error); anything else is the server's timeoutSeconds.
        if (events == 0 && now - started < std::chrono::seconds(1)) return WatchEnd::kBackoff;
        return WatchEnd::kResume;
      }
      if (closed->code() == StatusCode::kGone) {
        KLOG(INFO) << "watch of " << Codec<T>::kKind << " expired, relisting";
        return WatchEnd::kRelist;
      }
      if (closed->code() == StatusCode::kOutOfRange) {
        // One event longer than the line limit: watching again from our RV would meet it
        // again forever. A list (whose own limit is far larger) gets past it.
        KLOG(WARNING) << "watch of " << Codec<T>::kKind << " ended: " << closed->message() << "; relisting";
        return WatchEnd::kRelist;
      }
      KLOG(WARNING) << "watch of " << Codec<T>::kKind << " ended: " << closed->ToString();
      return WatchEnd::kBackoff;
    }
    if (now - last_activity >= options_.idle_timeout) {
      KLOG(WARNING) << "watch of " << Codec<T>::kKind << " silent for "
                    << std::chrono::duration_cast<std::chrono::seconds>(now - last_activity).count()
                    << "s, restarting it";
      stream->Cancel();
      WriterMutexLock lock(store_mu_);
      ++stats_.idle_restarts;
      return WatchEnd::kResume;
    }
    // Nothing to do until a line, the stream's end, a relist request or a stop (each
    // Notify()s), or the idle deadline on the injected clock: a FakeClock's Advance()
    // past it restarts the watch without any real time passing.
    if (batch.empty()) clock_.SleepUntil(last_activity + options_.idle_timeout, woken);
  }
}

template class Informer<api::Pod>;
template class Informer<api::Node>;
template class Informer<api::Namespace>;
template class Informer<api::Service>;
template class Informer<api::ReplicationController>;
template class Informer<api::ReplicaSet>;
template class Informer<api::StatefulSet>;
template class Informer<api::PodDisruptionBudget>;
template class Informer<api::PodGroup>;
template class Informer<api::PersistentVolumeClaim>;
template class Informer<api::PersistentVolume>;
template class Informer<api::StorageClass>;
template class Informer<api::CSINode>;
template class Informer<api::CSIDriver>;
template class Informer<api::DeviceClass>;
template class Informer<api::ResourceSlice>;
template class Informer<api::ResourceClaim>;
template class Informer<api::ResourceClaimTemplate>;

}  // namespace ksched::informers
