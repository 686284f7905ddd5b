#include "pkg/simulate/memory_server.h"

#include <simdjson.h>

#include <chrono>
#include <cstdio>

#include "pkg/api/json.h"
#include "pkg/api/storage.h"
#include "pkg/simulate/json_dom.h"
#include "pkg/simulate/json_patch.h"
#include "pkg/util/json_string.h"

namespace ksched::simulate {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// An API Status body, as the real server answers errors.
std::pair<long, std::string> Failure(long code, std::string_view reason, std::string_view message) {
  return {code, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":" + JsonQuoted(message) +
                    ",\"reason\":" + JsonQuoted(reason) + ",\"code\":" + std::to_string(code) + "}"};
}

std::pair<long, std::string> Failure(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound: return Failure(404, "NotFound", s.message());
    case StatusCode::kAlreadyExists: return Failure(409, "AlreadyExists", s.message());
    case StatusCode::kConflict: return Failure(409, "Conflict", s.message());
    case StatusCode::kInvalidArgument: return Failure(422, "Invalid", s.message());
    default: return Failure(500, "InternalError", s.message());
  }
}

// metadata's name, namespace and uid.
struct Meta {
  std::string name, namespace_, uid;
};

std::string KeyOf(const KindInfo& kind, std::string_view ns, std::string_view name) {
  return kind.namespaced ? std::string(ns) + "/" + std::string(name) : std::string(name);
}

// "/api/v1/pods" -> "v1"; "/apis/apps/v1/replicasets" -> "apps/v1".
std::string_view ApiVersionOf(std::string_view collection) {
  std::string_view rest = collection.starts_with("/apis/") ? collection.substr(6) : collection.substr(5);
  return rest.substr(0, rest.rfind('/'));
}

std::string_view PluralOf(std::string_view collection) { return collection.substr(collection.rfind('/') + 1); }

}  // namespace

// A request path: /api/v1[/namespaces/NS]/PLURAL[/NAME[/SUB]] or /apis/G/V/...
struct MemoryApiServer::Target {
  std::string group_version_prefix;  // "/api/v1", "/apis/apps/v1"
  std::string ns, plural, name, sub;
  std::string query;

  static std::optional<Target> Parse(std::string_view path) {
    Target t;
    if (const size_t q = path.find('?'); q != std::string_view::npos) {
      t.query = std::string(path.substr(q + 1));
      path = path.substr(0, q);
    }
    std::vector<std::string_view> segs;
    for (size_t at = 1; at <= path.size();) {
      size_t end = path.find('/', at);
      if (end == std::string_view::npos) end = path.size();
      if (end > at) segs.push_back(path.substr(at, end - at));
      at = end + 1;
    }
    size_t i = 0;
    if (segs.size() >= 2 && segs[0] == "api") {
      t.group_version_prefix = "/api/" + std::string(segs[1]);
      i = 2;
    } else if (segs.size() >= 3 && segs[0] == "apis") {
      t.group_version_prefix = "/apis/" + std::string(segs[1]) + "/" + std::string(segs[2]);
      i = 3;
    } else {
      return std::nullopt;
    }
    std::vector<std::string_view> rest(segs.begin() + static_cast<std::ptrdiff_t>(i), segs.end());
    if (rest.size() >= 3 && rest[0] == "namespaces") {
      t.ns = std::string(rest[1]);
      rest.erase(rest.begin(), rest.begin() + 2);
    }
    if (rest.empty() || rest.size() > 3) return std::nullopt;
    t.plural = std::string(rest[0]);
    if (rest.size() >= 2) t.name = std::string(rest[1]);
    if (rest.size() == 3) t.sub = std::string(rest[2]);
    return t;
  }

  std::string QueryValue(std::string_view key) const {
    for (size_t at = 0; at <= query.size();) {
      size_t end = query.find('&', at);
      if (end == std::string::npos) end = query.size();
      std::string_view kv(query.data() + at, end - at);
      if (kv.starts_with(key) && kv.size() > key.size() && kv[key.size()] == '=') {
        return std::string(kv.substr(key.size() + 1));
      }
      at = end + 1;
    }
    return "";
  }
};

struct MemoryApiServer::Watcher {
  std::mutex mu;
  bool cancelled = false;
  client::WatchCallbacks callbacks;
};

namespace {

class MemoryWatch final : public client::WatchStream {
 public:
  explicit MemoryWatch(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
  ~MemoryWatch() override { Cancel(); }
  void Cancel() override {
    if (cancel_) std::exchange(cancel_, nullptr)();
  }

 private:
  std::function<void()> cancel_;
};

}  // namespace

MemoryApiServer::MemoryApiServer() {
  for (const KindInfo& k : Kinds()) collections_[k.collection].kind = &k;
  delivery_ = std::thread([this] { DeliveryLoop(); });
}

MemoryApiServer::~MemoryApiServer() {
  {
    std::lock_guard l(tasks_mu_);
    stopping_ = true;
  }
  tasks_cv_.notify_all();
  delivery_.join();
}

MemoryApiServer::Collection& MemoryApiServer::CollectionOf(const KindInfo& kind) {
  return collections_.at(kind.collection);
}

const MemoryApiServer::Collection* MemoryApiServer::FindCollection(const KindInfo& kind) const {
  auto it = collections_.find(kind.collection);
  return it == collections_.end() ? nullptr : &it->second;
}

void MemoryApiServer::Post(std::function<void()> task) {
  {
    std::lock_guard l(tasks_mu_);
    tasks_.push_back(std::move(task));
  }
  tasks_cv_.notify_all();
}

void MemoryApiServer::DeliveryLoop() {
  std::unique_lock l(tasks_mu_);
  for (;;) {
    tasks_cv_.wait(l, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and everything delivered
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    running_task_ = true;
    l.unlock();
    task();
    // Destroyed unlocked: what it holds may send requests as it goes (an event queued
    // behind the bind the task answered).
    task = nullptr;
    l.lock();
    running_task_ = false;
    if (tasks_.empty()) tasks_cv_.notify_all();
  }
}

bool MemoryApiServer::Idle() const {
  std::lock_guard l(tasks_mu_);
  return tasks_.empty() && !running_task_;
}

bool MemoryApiServer::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock l(tasks_mu_);
  return tasks_cv_.wait_for(l, timeout, [&] { return tasks_.empty() && !running_task_; });
}

void MemoryApiServer::Notify(Collection& c, uint64_t rv, std::string line) {
  c.last_change = rv;
  c.events.emplace_back(rv, line);
  for (const std::shared_ptr<Watcher>& w : c.watchers) {
    Post([w, line] {
      std::lock_guard l(w->mu);
      if (!w->cancelled && w->callbacks.on_line) w->callbacks.on_line(line);
    });
  }
}

Status MemoryApiServer::PutLocked(Collection& c, const std::string& key, std::string json,
                                  std::string_view event_type) {
  const uint64_t rv = ++resource_version_;
  auto stamped = MergePatch(json, "{\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) + "\"}}");
  if (!stamped.ok()) return stamped.status();
  std::string line = "{\"type\":\"" + std::string(event_type) + "\",\"object\":" + *stamped + "}";
  if (event_type == "DELETED") {
    c.objects.erase(key);
  } else {
    c.objects[key] = std::move(*stamped);
  }
  Notify(c, rv, std::move(line));
  return Status::OK();
}

Status MemoryApiServer::CreateLocked(Collection& c, std::string_view json) {
  simdjson::dom::parser parser;
  auto doc = parser.parse(json.data(), json.size());
  if (doc.error()) return InvalidArgument("the object is not JSON");
  const element obj = doc.value();
  Meta m{StringField(obj, "metadata.name"), StringField(obj, "metadata.namespace"), StringField(obj, "metadata.uid")};
  const std::string plural(PluralOf(c.kind->collection));
  if (m.name.empty()) return InvalidArgument(std::string(c.kind->kind) + ": metadata.name: Required value");
  if (c.kind->namespaced && m.namespace_.empty()) m.namespace_ = "default";
  const std::string key = KeyOf(*c.kind, m.namespace_, m.name);
  if (c.objects.contains(key)) return Status(StatusCode::kAlreadyExists, plural + " " + JsonQuoted(m.name) + " already exists");
  std::string patch = "{\"metadata\":{";
  if (c.kind->namespaced) patch += "\"namespace\":" + JsonQuoted(m.namespace_) + ",";
  if (m.uid.empty()) {
    char uid[40];
    std::snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012llu",
                  static_cast<unsigned long long>(next_uid_++));
    m.uid = uid;
  }
  patch += "\"uid\":" + JsonQuoted(m.uid) + "}";
  // The PV controller marks a new volume Available (Bound once it has a claimRef); the
  // scheduler only binds claims to Available volumes.
  if (c.kind->kind == "PersistentVolume" && StringField(obj, "status.phase").empty()) {
    patch += std::string(",\"status\":{\"phase\":\"") + (FieldAt(obj, "spec.claimRef") ? "Bound" : "Available") + "\"}";
  }
  patch += "}";
  auto created = MergePatch(json, patch);
  if (!created.ok()) return created.status();
  if (Status s = PutLocked(c, key, std::move(*created), "ADDED"); !s.ok()) return s;
  VolumeControllerLocked(*c.kind, key);
  ClaimControllerLocked(*c.kind, key, "");
  return Status::OK();
}

Status MemoryApiServer::DeleteLocked(Collection& c, const std::string& key, std::string_view uid_precondition) {
  auto it = c.objects.find(key);
  const std::string plural(PluralOf(c.kind->collection));
  if (it == c.objects.end()) {
    return NotFound(plural + " " + JsonQuoted(key.substr(key.find('/') + 1)) + " not found");
  }
  if (!uid_precondition.empty()) {
    auto uid = StringAt(it->second, "metadata.uid");
    const std::string have = uid.ok() && *uid ? **uid : "";
    if (have != uid_precondition) {
      return Status(StatusCode::kConflict, "Precondition failed: UID in precondition: " + std::string(uid_precondition) +
                     ", UID in object meta: " + have);
    }
  }
  std::string last = it->second;
  if (Status s = PutLocked(c, key, last, "DELETED"); !s.ok()) return s;
  if (c.kind->kind == "Pod") ClaimControllerLocked(*c.kind, key, last);
  return Status::OK();
}

Status MemoryApiServer::PatchLocked(Collection& c, const std::string& key, std::string_view patch, bool check_version) {
  auto it = c.objects.find(key);
  const std::string plural(PluralOf(c.kind->collection));
  if (it == c.objects.end()) return NotFound(plural + " " + JsonQuoted(key.substr(key.find('/') + 1)) + " not found");
  if (check_version) {
    auto wanted = StringAt(patch, "metadata.resourceVersion");
    if (!wanted.ok()) return InvalidArgument(wanted.status().message());
    if (*wanted) {
      auto have = StringAt(it->second, "metadata.resourceVersion");
      if (!have.ok() || !*have || **have != **wanted) {
        return Status(StatusCode::kConflict, "Operation cannot be fulfilled on " + plural + " " +
                       JsonQuoted(key.substr(key.find('/') + 1)) +
                       ": the object has been modified; please apply your changes to the latest version and try "
                       "again");
      }
    }
  }
  auto merged = MergePatch(it->second, patch);
  if (!merged.ok()) return InvalidArgument(merged.status().message());
  if (Status s = PutLocked(c, key, std::move(*merged), "MODIFIED"); !s.ok()) return s;
  VolumeControllerLocked(*c.kind, key);
  return Status::OK();
}

// The PV controller's binding and a provisioner, reduced to what the scheduler waits for
// (volumebinding's CheckBindings): the claim's volumeName and bind-completed annotation,
// the volume's claimRef and node affinity.
void MemoryApiServer::VolumeControllerLocked(const KindInfo& kind, const std::string& key) {
  const KindInfo* pvs = FindKind("PersistentVolume");
  const KindInfo* pvcs = FindKind("PersistentVolumeClaim");
  Collection& volumes = CollectionOf(*pvs);
  Collection& claims = CollectionOf(*pvcs);
  const std::string bound_claim_patch_tail =
      "\"metadata\":{\"annotations\":{\"" + std::string(api::kAnnBindCompleted) + "\":\"yes\",\"" +
      std::string(api::kAnnBoundByController) + "\":\"yes\"}},\"status\":{\"phase\":\"Bound\"}}";
  simdjson::dom::parser parser;
  if (&kind == pvs) {
    auto it = volumes.objects.find(key);
    if (it == volumes.objects.end()) return;
    auto doc = parser.parse(it->second);
    if (doc.error()) return;
    const std::string claim_ns = StringField(doc.value(), "spec.claimRef.namespace");
    const std::string claim_name = StringField(doc.value(), "spec.claimRef.name");
    const std::string claim_uid = StringField(doc.value(), "spec.claimRef.uid");
    if (claim_name.empty()) return;
    auto claim = claims.objects.find(claim_ns + "/" + claim_name);
    if (claim == claims.objects.end()) return;
    simdjson::dom::parser claim_parser;
    auto claim_doc = claim_parser.parse(claim->second);
    if (claim_doc.error()) return;
    if (!claim_uid.empty() && StringField(claim_doc.value(), "metadata.uid") != claim_uid) return;
    const std::string bound_to = StringField(claim_doc.value(), "spec.volumeName");
    if (!bound_to.empty() && bound_to != key) return;  // the claim has another volume
    const bool completed = MapEntry(claim_doc.value(), "metadata.annotations", api::kAnnBindCompleted).has_value();
    if (bound_to == key && completed) return;  // bound already
    (void)PatchLocked(claims, claim->first, "{\"spec\":{\"volumeName\":" + JsonQuoted(key) + "}," + bound_claim_patch_tail,
                      false);
    // After the claim: this change sees the claim bound and stops here.
    if (StringField(doc.value(), "status.phase") != "Bound")
      (void)PatchLocked(volumes, key, "{\"status\":{\"phase\":\"Bound\"}}", false);
    return;
  }
  if (&kind != pvcs) return;
  auto it = claims.objects.find(key);
  if (it == claims.objects.end()) return;
  auto doc = parser.parse(it->second);
  if (doc.error()) return;
  const element claim = doc.value();
  if (!StringField(claim, "spec.volumeName").empty()) return;
  const std::string node = MapString(claim, "metadata.annotations", api::kAnnSelectedNode);
  if (node.empty()) return;
  // The node's hostname label, which a local provisioner's volumes are pinned to.
  std::string hostname = node;
  const Collection& nodes = CollectionOf(*FindKind("Node"));
  if (auto n = nodes.objects.find(node); n != nodes.objects.end()) {
    simdjson::dom::parser node_parser;
    if (auto nd = node_parser.parse(n->second); !nd.error()) {
      if (std::string h = MapString(nd.value(), "metadata.labels", "kubernetes.io/hostname"); !h.empty()) hostname = h;
    }
  }
  const std::string uid = StringField(claim, "metadata.uid");
  const std::string pv_name = "pvc-" + uid;
  std::string storage = "1Gi";
  if (auto s = FieldAt(claim, "spec.resources.requests.storage"); s && s->type() == element_type::STRING)
    storage = std::string(std::string_view(*s));
  std::string access_modes = "[\"ReadWriteOnce\"]";
  if (auto a = FieldAt(claim, "spec.accessModes"); a && a->type() == element_type::ARRAY) access_modes = simdjson::minify(*a);
  const std::string claim_ns = StringField(claim, "metadata.namespace");
  const std::string claim_name = StringField(claim, "metadata.name");
  std::string pv = "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":" + JsonQuoted(pv_name) +
                   ",\"annotations\":{\"pv.kubernetes.io/provisioned-by\":\"ksched-simulate\"}},\"spec\":{\"capacity\":"
                   "{\"storage\":" + JsonQuoted(storage) + "},\"accessModes\":" + access_modes +
                   ",\"storageClassName\":" + JsonQuoted(StringField(claim, "spec.storageClassName")) +
                   ",\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\",\"namespace\":" +
                   JsonQuoted(claim_ns) + ",\"name\":" + JsonQuoted(claim_name) + ",\"uid\":" + JsonQuoted(uid) +
                   "},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
                   "\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[" + JsonQuoted(hostname) +
                   "]}]}]}}},\"status\":{\"phase\":\"Bound\"}}";
  if (volumes.objects.contains(pv_name)) return;
  if (!CreateLocked(volumes, pv).ok()) return;
  (void)PatchLocked(claims, key, "{\"spec\":{\"volumeName\":" + JsonQuoted(pv_name) + "}," + bound_claim_patch_tail, false);
}

void MemoryApiServer::ClaimControllerLocked(const KindInfo& kind, const std::string& key,
                                            std::string_view deleted_pod) {
  if (kind.kind != "Pod") return;
  Collection& claims = CollectionOf(*FindKind("ResourceClaim"));
  simdjson::dom::parser parser;
  if (!deleted_pod.empty()) {
    auto doc = parser.parse(deleted_pod.data(), deleted_pod.size());
    if (doc.error()) return;
    const std::string uid = StringField(doc.value(), "metadata.uid");
    std::vector<std::string> keys;
    for (const auto& [claim_key, json] : claims.objects) keys.push_back(claim_key);
    for (const std::string& claim_key : keys) {
      simdjson::dom::parser claim_parser;
      auto claim = claim_parser.parse(claims.objects.at(claim_key));
      if (claim.error()) continue;
      bool owned = false;
      if (auto owners = FieldAt(claim.value(), "metadata.ownerReferences"); owners && owners->is_array()) {
        for (element o : owners->get_array()) owned = owned || StringField(o, "uid") == uid;
      }
      if (owned) {
        (void)DeleteLocked(claims, claim_key, "");
        continue;
      }
      auto reserved = FieldAt(claim.value(), "status.reservedFor");
      if (!reserved || !reserved->is_array()) continue;
      std::string rest = "[";
      bool found = false, first = true;
      for (element r : reserved->get_array()) {
        if (StringField(r, "uid") == uid) {
          found = true;
          continue;
        }
        if (!first) rest += ',';
        first = false;
        rest += simdjson::minify(r);
      }
      rest += "]";
      if (!found) continue;
      // Nobody left: the devices go back (the controller deallocates an unreserved claim).
      std::string patch = first ? "{\"metadata\":{\"finalizers\":null},\"status\":{\"reservedFor\":null,\"allocation\":null}}"
                                : "{\"status\":{\"reservedFor\":" + rest + "}}";
      (void)PatchLocked(claims, claim_key, patch, false);
    }
    return;
  }
  Collection& pods = CollectionOf(kind);
  auto it = pods.objects.find(key);
  if (it == pods.objects.end()) return;
  auto doc = parser.parse(it->second);
  if (doc.error()) return;
  const element pod = doc.value();
  auto entries = FieldAt(pod, "spec.resourceClaims");
  if (!entries || !entries->is_array()) return;
  // A pod already on a node came with its claims (or is not the scheduler's business).
  if (!StringField(pod, "spec.nodeName").empty()) return;
  if (FieldAt(pod, "status.resourceClaimStatuses")) return;  // the controller has been here
  const Collection& templates = CollectionOf(*FindKind("ResourceClaimTemplate"));
  const std::string ns = StringField(pod, "metadata.namespace");
  const std::string pod_name = StringField(pod, "metadata.name");
  std::string statuses;
  for (element entry : entries->get_array()) {
    const std::string entry_name = StringField(entry, "name");
    const std::string template_name = StringField(entry, "resourceClaimTemplateName");
    if (template_name.empty()) continue;
    auto tmpl = templates.objects.find(ns + "/" + template_name);
    if (tmpl == templates.objects.end()) continue;  // the pod waits, as for the controller
    simdjson::dom::parser tmpl_parser;
    auto tdoc = tmpl_parser.parse(tmpl->second);
    if (tdoc.error()) continue;
    std::string spec = "{}";
    if (auto s = FieldAt(tdoc.value(), "spec.spec"); s) spec = simdjson::minify(*s);
    const std::string claim_name = pod_name + "-" + entry_name;
    std::string claim = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":" +
                        JsonQuoted(claim_name) + ",\"namespace\":" + JsonQuoted(ns) +
                        ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":" + JsonQuoted(pod_name) +
                        ",\"uid\":" + JsonQuoted(StringField(pod, "metadata.uid")) +
                        ",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":" + spec + "}";
    if (!claims.objects.contains(ns + "/" + claim_name) && !CreateLocked(claims, claim).ok()) continue;
    if (!statuses.empty()) statuses += ',';
    statuses += "{\"name\":" + JsonQuoted(entry_name) + ",\"resourceClaimName\":" + JsonQuoted(claim_name) + "}";
  }
  if (statuses.empty()) return;
  (void)PatchLocked(pods, key, "{\"status\":{\"resourceClaimStatuses\":[" + statuses + "]}}", false);
}

std::string MemoryApiServer::ListLocked(const Collection& c, std::string_view ns) const {
  std::string out = "{\"kind\":\"" + std::string(c.kind->kind) + "List\",\"apiVersion\":\"" +
                    std::string(ApiVersionOf(c.kind->collection)) + "\",\"metadata\":{\"resourceVersion\":\"" +
                    std::to_string(resource_version_) + "\"},\"items\":[";
  bool first = true;
  const std::string prefix = ns.empty() ? std::string() : std::string(ns) + "/";
  for (const auto& [key, json] : c.objects) {
    if (!prefix.empty() && !key.starts_with(prefix)) continue;
    if (!first) out += ',';
    first = false;
    out += json;
  }
  out += "]}";
  return out;
}

std::pair<long, std::string> MemoryApiServer::Handle(const client::Request& request) {
  std::string_view path = request.path;
  // The in-memory server serves resource.k8s.io/v1 (the scheduler's informers for it
  // start only when discovery finds it).
  if (path == "/apis/resource.k8s.io" || path.starts_with("/apis/resource.k8s.io?")) {
    return {200,
            "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"resource.k8s.io\",\"versions\":[{"
            "\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"}],\"preferredVersion\":{\"groupVersion\":"
            "\"resource.k8s.io/v1\",\"version\":\"v1\"}}"};
  }
  // And scheduler-plugins' PodGroups, as if their CRD were installed (Coscheduling's
  // informer starts only when discovery finds the group).
  if (path == "/apis/scheduling.x-k8s.io" || path.starts_with("/apis/scheduling.x-k8s.io?")) {
    return {200,
            "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"scheduling.x-k8s.io\",\"versions\":[{"
            "\"groupVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"version\":\"v1alpha1\"}],\"preferredVersion\":{"
            "\"groupVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"version\":\"v1alpha1\"}}"};
  }
  if (path == "/apis/policy" || path.starts_with("/apis/policy?")) {
    return {200,
            "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"policy\",\"versions\":[{\"groupVersion\":"
            "\"policy/v1\",\"version\":\"v1\"}],\"preferredVersion\":{\"groupVersion\":\"policy/v1\",\"version\":"
            "\"v1\"}}"};
  }
  std::optional<Target> target = Target::Parse(path);
  if (!target) return Failure(404, "NotFound", "the server could not find the requested resource");
  std::lock_guard l(mu_);
  return HandleLocked(request, *target);
}

std::pair<long, std::string> MemoryApiServer::HandleLocked(const client::Request& request, const Target& t) {
  using client::Verb;
  if (t.plural == "events") {
    if (request.verb != Verb::kPost) return Failure(405, "MethodNotAllowed", "events are only created here");
    ++events_recorded_;
    return {201, request.body};
  }
  auto it = collections_.find(t.group_version_prefix + "/" + t.plural);
  if (it == collections_.end()) return Failure(404, "NotFound", "the server could not find the requested resource");
  Collection& c = it->second;
  const std::string key = KeyOf(*c.kind, t.ns, t.name);
  auto object_answer = [&](long code) -> std::pair<long, std::string> {
    auto o = c.objects.find(key);
    return {code, o == c.objects.end() ? std::string("{}") : o->second};
  };
  if (t.name.empty()) {
    if (request.verb == Verb::kGet) return {200, ListLocked(c, t.ns)};
    if (request.verb == Verb::kPost) {
      if (Status s = CreateLocked(c, request.body); !s.ok()) return Failure(s);
      return {201, request.body};
    }
    return Failure(405, "MethodNotAllowed", "not allowed on a collection");
  }
  if (t.sub == "binding") {
    if (c.kind->kind != "Pod" || request.verb != Verb::kPost) return Failure(405, "MethodNotAllowed", "bindings are POSTed");
    // The body and the pod are each parsed once (a bind per simulated pod).
    simdjson::dom::parser body_parser, pod_parser;
    auto body = body_parser.parse(request.body);
    const std::string node = body.error() ? std::string() : StringField(body.value(), "target.name");
    if (node.empty()) return Failure(422, "Invalid", "target.name: Required value");
    auto o = c.objects.find(key);
    if (o == c.objects.end()) return Failure(404, "NotFound", "pods " + JsonQuoted(t.name) + " not found");
    auto pod = pod_parser.parse(o->second);
    if (pod.error()) return Failure(500, "InternalError", "the stored pod is not JSON");
    const std::string uid = StringField(body.value(), "metadata.uid");
    const std::string have_uid = StringField(pod.value(), "metadata.uid");
    if (!uid.empty() && !have_uid.empty() && uid != have_uid) {
      return Failure(409, "Conflict", "Precondition failed: UID in precondition: " + uid);
    }
    if (const std::string assigned = StringField(pod.value(), "spec.nodeName"); !assigned.empty()) {
      return Failure(409, "Conflict", "pod " + t.name + " is already assigned to node " + JsonQuoted(assigned));
    }
    if (Status s = PatchLocked(c, key, "{\"spec\":{\"nodeName\":" + JsonQuoted(node) + "}}", false); !s.ok())
      return Failure(s);
    return {201, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\",\"code\":201}"};
  }
  switch (request.verb) {
    case Verb::kGet: {
      if (!c.objects.contains(key))
        return Failure(404, "NotFound", std::string(PluralOf(c.kind->collection)) + " " + JsonQuoted(t.name) + " not found");
      return object_answer(200);
    }
    // A PUT's body is merged as a patch is: it carries the whole object, so what it sets
    // wins; a field it leaves out is kept where the API server would drop it. Nothing
    // the scheduler sends is a PUT.
    case Verb::kPatch:
    case Verb::kPut: {
      if (Status s = PatchLocked(c, key, request.body, true); !s.ok()) return Failure(s);
      return object_answer(200);
    }
    case Verb::kDelete: {
      std::string uid;
      if (!request.body.empty()) {
        auto precondition = StringAt(request.body, "preconditions.uid");
        if (precondition.ok() && *precondition) uid = **precondition;
      }
      std::string last = c.objects.contains(key) ? c.objects.at(key) : std::string("{}");
      if (Status s = DeleteLocked(c, key, uid); !s.ok()) return Failure(s);
      return {200, last};
    }
    default:
      return Failure(405, "MethodNotAllowed", "not allowed");
  }
}

void MemoryApiServer::Send(client::Request request, client::ResponseCallback done) {
  Post([this, request = std::move(request), done = std::move(done)]() mutable {
    if (request.precondition) {
      if (Status s = request.precondition(); !s.ok()) {
        done(s);
        return;
      }
    }
    auto [code, body] = Handle(request);
    if (code >= 300) {
      done(client::StatusFromHttp(code, body));
    } else {
      done(client::Response{code, std::move(body)});
    }
  });
}

std::unique_ptr<client::WatchStream> MemoryApiServer::Watch(client::Request request, client::WatchCallbacks callbacks) {
  auto watcher = std::make_shared<Watcher>();
  watcher->callbacks = std::move(callbacks);
  std::optional<Target> target = Target::Parse(request.path);
  std::lock_guard l(mu_);
  auto it = target ? collections_.find(target->group_version_prefix + "/" + target->plural) : collections_.end();
  if (it == collections_.end()) {
    Post([watcher] {
      std::lock_guard wl(watcher->mu);
      if (!watcher->cancelled && watcher->callbacks.on_close)
        watcher->callbacks.on_close(NotFound("the server could not find the requested resource"));
    });
    return std::make_unique<MemoryWatch>([watcher] {
      std::lock_guard wl(watcher->mu);
      watcher->cancelled = true;
    });
  }
  Collection& c = it->second;
  const uint64_t from = std::strtoull(target->QueryValue("resourceVersion").c_str(), nullptr, 10);
  for (const auto& [rv, line] : c.events) {
    if (rv <= from) continue;
    Post([watcher, line = line] {
      std::lock_guard wl(watcher->mu);
      if (!watcher->cancelled && watcher->callbacks.on_line) watcher->callbacks.on_line(line);
    });
  }
  c.watchers.push_back(watcher);
  return std::make_unique<MemoryWatch>([this, watcher, &c] {
    {
      std::lock_guard wl(watcher->mu);
      watcher->cancelled = true;
    }
    std::lock_guard sl(mu_);
    std::erase(c.watchers, watcher);
  });
}

Status MemoryApiServer::Create(const KindInfo& kind, std::string_view json) {
  std::lock_guard l(mu_);
  return CreateLocked(CollectionOf(kind), json);
}

Status MemoryApiServer::Delete(const KindInfo& kind, std::string_view ns, std::string_view name) {
  std::lock_guard l(mu_);
  return DeleteLocked(CollectionOf(kind), KeyOf(kind, ns, name), "");
}

Status MemoryApiServer::Patch(const KindInfo& kind, std::string_view ns, std::string_view name,
                              std::string_view merge_patch) {
  std::lock_guard l(mu_);
  return PatchLocked(CollectionOf(kind), KeyOf(kind, ns, name), merge_patch, true);
}

std::optional<std::string> MemoryApiServer::Get(const KindInfo& kind, std::string_view ns, std::string_view name) const {
  std::lock_guard l(mu_);
  const Collection* c = FindCollection(kind);
  if (c == nullptr) return std::nullopt;
  auto it = c->objects.find(KeyOf(kind, ns, name));
  if (it == c->objects.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> MemoryApiServer::List(const KindInfo& kind) const {
  std::lock_guard l(mu_);
  std::vector<std::string> out;
  if (const Collection* c = FindCollection(kind)) {
    for (const auto& [key, json] : c->objects) out.push_back(json);
  }
  return out;
}

uint64_t MemoryApiServer::LastChange(const KindInfo& kind) const {
  std::lock_guard l(mu_);
  const Collection* c = FindCollection(kind);
  return c == nullptr ? 0 : c->last_change;
}

void MemoryApiServer::ForgetHistory() {
  std::lock_guard l(mu_);
  for (auto& [path, c] : collections_) {
    c.events.clear();
    c.events.shrink_to_fit();
  }
}

size_t MemoryApiServer::EventsRecorded() const {
  std::lock_guard l(mu_);
  return events_recorded_;
}

}  // namespace ksched::simulate
