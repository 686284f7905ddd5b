#include "pkg/extender/http_extender.h"

#include <algorithm>
#include <unordered_map>

#include "pkg/api/json.h"
#include "pkg/client/curl_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/extender/protocol.h"

namespace ksched::extender {
namespace {

std::atomic<int64_t> prioritize_in_flight{0};

// The TLS material of the configuration as RestConfig holds it (upstream makeTransport:
// enableHTTPS without a CA verifies nothing; a CA with insecure is refused, as
// client-go's TLS config is).
Status ApplyTls(const config::Extender& cfg, const std::string& path, client::RestConfig& rc) {
  if (cfg.tls_config) {
    const config::ExtenderTLSConfig& t = *cfg.tls_config;
    const std::string tls = path + ".tlsConfig.";
    auto load = [&](const std::string& data, const std::string& file, std::string_view data_field,
                    std::string_view file_field, std::string& out) -> Status {
      if (!data.empty()) {
        auto decoded = client::Base64Decode(data, tls + std::string(data_field));
        if (!decoded.ok()) return decoded.status();
        out = std::move(*decoded);
      } else if (!file.empty()) {
        auto read = client::ReadFile(file, tls + std::string(file_field));
        if (!read.ok()) return read.status();
        out = std::move(*read);
      }
      return Status::OK();
    };
    if (Status s = load(t.ca_data, t.ca_file, "caData", "caFile", rc.ca_pem); !s.ok()) return s;
    if (Status s = load(t.cert_data, t.cert_file, "certData", "certFile", rc.client_cert_pem); !s.ok()) return s;
    if (Status s = load(t.key_data, t.key_file, "keyData", "keyFile", rc.client_key_pem); !s.ok()) return s;
    if (rc.client_cert_pem.empty() != rc.client_key_pem.empty()) {
      return InvalidArgument(tls + "certData/certFile and keyData/keyFile: both or neither must be given");
    }
    rc.tls_server_name = t.server_name;
    rc.insecure_skip_tls_verify = t.insecure;
    if (t.insecure && !rc.ca_pem.empty()) {
      return InvalidArgument(tls + "insecure: specifying a root certificates file with the insecure flag is not allowed");
    }
  }
  if (cfg.enable_https && rc.ca_pem.empty()) rc.insecure_skip_tls_verify = true;
  return Status::OK();
}

bool RequestsAny(const api::SharedVector<api::Container>& containers, const std::set<std::string, std::less<>>& names) {
  for (const api::Container& c : containers) {
    for (const auto& [name, q] : c.requests) {
      if (names.contains(name)) return true;
    }
  }
  return false;
}

}  // namespace

int64_t PrioritizeCallsInFlight() { return prioritize_in_flight.load(std::memory_order_relaxed); }

HttpExtender::HttpExtender(const config::Extender& config, HttpExtenderOptions options)
    : config_(config), options_(std::move(options)) {
  for (const config::ExtenderManagedResource& r : config_.managed_resources) managed_.insert(r.name);
}

HttpExtender::~HttpExtender() = default;

StatusOr<std::unique_ptr<HttpExtender>> HttpExtender::New(const config::Extender& config, HttpExtenderOptions options) {
  const std::string path = options.field_path;
  auto url = client::NormalizeServerUrl(config.url_prefix);
  if (!url.ok() || config.url_prefix.find("://") == std::string::npos) {
    return InvalidArgument(path + ".urlPrefix: " +
                           (url.ok() ? "\"" + config.url_prefix + "\" has no scheme (http:// or https://)"
                                     : url.status().message()));
  }
  std::unique_ptr<HttpExtender> e(new HttpExtender(config, std::move(options)));
  // scheme://authority goes to the client; the path prefixes every verb.
  const size_t authority = url->find("://") + 3;
  const size_t path_start = std::min(url->size(), url->find_first_of("/?#", authority));
  std::string server = url->substr(0, path_start);
  e->path_prefix_ = url->substr(path_start);
  while (!e->path_prefix_.empty() && e->path_prefix_.back() == '/') e->path_prefix_.pop_back();
  if (e->options_.client) {
    e->client_ = e->options_.client;
    return e;
  }
  client::RestConfig rc;
  rc.server = server;
  rc.qps = 0;  // extender calls are not rate limited (upstream's plain http.Client)
  rc.timeout = config.http_timeout.count() > 0
                   ? std::chrono::duration_cast<std::chrono::milliseconds>(config.http_timeout)
                   : std::chrono::milliseconds(kDefaultTimeout);
  if (Status s = ApplyTls(config, path, rc); !s.ok()) return s;
  client::CurlClientOptions co;
  co.clock = e->options_.clock;
  co.http2 = false;  // extenders serve HTTP/1.1; connections are kept alive and reused
  co.native_http2 = false;
  co.thread_name = e->options_.thread_name;
  // A filter answer with 5,000 Node objects is about 10 MB; an extender that sends more
  // fails its call instead of growing the scheduler's memory.
  co.max_body_bytes = size_t{64} << 20;
  auto c = client::NewCurlApiClient(rc, co);
  if (!c.ok()) return InvalidArgument(path + ": " + c.status().message());
  e->own_client_ = std::move(*c);
  e->client_ = e->own_client_.get();
  return e;
}

bool HttpExtender::IsInterested(const api::Pod& pod) const {
  if (managed_.empty()) return true;
  return RequestsAny(pod.spec.containers, managed_) || RequestsAny(pod.spec.init_containers, managed_);
}

client::Request HttpExtender::MakeRequest(const std::string& verb, std::string body) const {
  client::Request r;
  r.verb = client::Verb::kPost;
  r.path = path_prefix_ + "/" + verb;
  r.body = std::move(body);
  r.max_retries = 0;  // upstream never retries an extender call
  r.first = true;
  return r;
}

StatusOr<std::string> HttpExtender::BodyOf(const std::string& verb, StatusOr<client::Response> r) const {
  const std::string url = config_.url_prefix + (config_.url_prefix.ends_with('/') ? "" : "/") + verb;
  if (!r.ok()) return Status(r.status().code(), "failed " + verb + " with extender at URL " + url + ": " + r.status().message());
  if (r->http_code != 200) {
    return Unavailable("failed " + verb + " with extender at URL " + url + ", code " + std::to_string(r->http_code));
  }
  return std::move(r->body);
}

StatusOr<std::string> HttpExtender::Send(std::string_view call, const std::string& verb, std::string body) {
  const auto start = options_.clock->Now();
  StatusOr<std::string> out = BodyOf(verb, client_->Do(MakeRequest(verb, std::move(body))));
  options_.metrics->ObserveExtenderCall(Name(), call, out.ok(),
                                        std::chrono::duration<double>(options_.clock->Now() - start).count());
  return out;
}

const std::string& HttpExtender::NodeJson(const cache::NodeInfo& node) {
  CachedNode& c = node_json_[node.name()];
  if (c.node != node.node()) {
    c.node = node.node();
    c.keep = node.node_ptr();
    c.json = api::EncodeNode(*node.node());
  }
  return c.json;
}

std::string HttpExtender::ArgsFor(const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) {
  // Nodes that left the cluster are dropped from the cache now and then.
  if (node_json_.size() > 2 * nodes.size() + 64) node_json_.clear();
  return EncodeExtenderArgs(api::EncodePod(pod), nodes, config_.node_cache_capable,
                            [&](size_t i) -> const std::string& { return NodeJson(*nodes[i]); });
}

StatusOr<framework::ExtenderFilterResult> HttpExtender::Filter(const api::Pod& pod,
                                                               std::span<const cache::NodeInfoPtr> nodes) {
  framework::ExtenderFilterResult out;
  if (!IsFilter()) {
    for (const cache::NodeInfoPtr& n : nodes) out.passed.push_back(n->name());
    return out;
  }
  auto body = Send("filter", config_.filter_verb, ArgsFor(pod, nodes));
  if (!body.ok()) return body.status();
  auto r = DecodeFilterResult(*body);
  if (!r.ok()) return Status(r.status().code(), "extender " + Name() + ": " + r.status().message());
  if (!r->error.empty()) return Unavailable(r->error);
  // A node cache capable extender answers with names; any other with Node objects (the
  // names are what matters: the scheduler keeps its own copy of each node).
  const std::vector<std::string>* passed =
      config_.node_cache_capable && r->node_names ? &*r->node_names : (r->nodes ? &*r->nodes : nullptr);
  if (passed) {
    // Extenders answer in the order they were asked: the names are matched by walking
    // both lists, and looked up only when one comes out of that order.
    std::vector<bool> taken(nodes.size(), false);
    std::unordered_map<std::string_view, size_t> index;
    size_t next = 0;
    for (const std::string& name : *passed) {
      size_t at;
      if (next < nodes.size() && nodes[next]->name() == name) {
        at = next++;
      } else {
        if (index.empty()) {
          for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i]->name(), i);
        }
        auto it = index.find(name);
        if (it == index.end()) {
          return Unavailable("extender \"" + Name() + "\" claims a filtered node \"" + name +
                             "\" which is not found in the input node list");
        }
        at = it->second;
      }
      if (!taken[at]) {
        taken[at] = true;
        out.passed.push_back(name);
      }
    }
  }
  out.failed = std::move(r->failed);
  out.failed_and_unresolvable = std::move(r->failed_and_unresolvable);
  return out;
}

std::future<StatusOr<std::vector<framework::HostPriority>>> HttpExtender::Prioritize(
    const api::Pod& pod, std::span<const cache::NodeInfoPtr> nodes) {
  using Result = StatusOr<std::vector<framework::HostPriority>>;
  if (!IsPrioritizer()) {
    std::vector<framework::HostPriority> zeros;
    for (const cache::NodeInfoPtr& n : nodes) zeros.push_back({n->name(), 0});
    std::promise<Result> p;
    p.set_value(std::move(zeros));
    return p.get_future();
  }
  // Sent now; the answer is decoded by whoever waits on the future.
  auto answer = std::make_shared<std::promise<StatusOr<client::Response>>>();
  std::future<StatusOr<client::Response>> response = answer->get_future();
  const auto start = options_.clock->Now();
  prioritize_in_flight.fetch_add(1, std::memory_order_relaxed);
  client_->Send(MakeRequest(config_.prioritize_verb, ArgsFor(pod, nodes)),
                [answer](StatusOr<client::Response> r) {
                  prioritize_in_flight.fetch_sub(1, std::memory_order_relaxed);
                  answer->set_value(std::move(r));
                });
  return std::async(std::launch::deferred, [this, start, response = std::move(response)]() mutable -> Result {
    StatusOr<std::string> body = BodyOf(config_.prioritize_verb, response.get());
    Result out = body.ok() ? DecodeHostPriorityList(*body) : Result(body.status());
    options_.metrics->ObserveExtenderCall(Name(), "prioritize", out.ok(),
                                          std::chrono::duration<double>(options_.clock->Now() - start).count());
    return out;
  });
}

Status HttpExtender::Bind(const api::Pod& pod, const std::string& node) {
  auto body = Send("bind", config_.bind_verb, EncodeBindingArgs(pod, node));
  if (!body.ok()) return body.status();
  auto error = DecodeBindingResult(*body);
  if (!error.ok()) return error.status();
  if (!error->empty()) return Unavailable(*error);
  return Status::OK();
}

StatusOr<framework::NodeVictims> HttpExtender::ProcessPreemption(const api::Pod& pod,
                                                                 const framework::NodeVictims& candidates,
                                                                 const cache::Snapshot& snapshot) {
  if (!SupportsPreemption()) {
    return Internal("preempt verb is not defined for extender " + Name() + " but run into ProcessPreemption");
  }
  auto body = Send("preempt", config_.preempt_verb,
                   EncodePreemptionArgs(api::EncodePod(pod), candidates, config_.node_cache_capable));
  if (!body.ok()) return body.status();
  auto result = DecodePreemptionResult(*body);
  if (!result.ok()) return result.status();
  // The extender answers with UIDs; they are the pods the snapshot has on the node.
  framework::NodeVictims out;
  for (const auto& [node_name, meta] : *result) {
    const cache::NodeInfo* node = snapshot.Get(node_name);
    if (node == nullptr) return NotFound("nodeinfo not found for node name \"" + node_name + "\"");
    framework::Victims& v = out[node_name];
    v.num_pdb_violations = meta.num_pdb_violations;
    for (const std::string& uid : meta.uids) {
      auto it = std::find_if(node->pods().begin(), node->pods().end(),
                             [&](const cache::PodEntry& e) { return e.pod->metadata.uid == uid; });
      if (it == node->pods().end()) {
        return NotFound("extender: " + Name() + " claims to preempt pod (UID: " + uid + ") on node: " + node_name +
                        ", but the pod is not found on that node");
      }
      v.pods.push_back(it->pod);
    }
  }
  return out;
}

}  // namespace ksched::extender
