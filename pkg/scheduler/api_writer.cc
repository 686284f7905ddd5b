#include "pkg/scheduler/api_writer.h"

#include <future>
#include <utility>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/time_format.h"
#include "pkg/util/log.h"

namespace ksched::scheduler {
namespace {

std::string PodPath(const api::Pod& pod) {
  return "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name;
}

client::Request BindingRequest(const api::Pod& pod, std::string_view node_name) {
  return {.verb = client::Verb::kPost,
          .path = PodPath(pod) + "/binding",
          .body = api::EncodeBinding(pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid, node_name),
          .first = true};
}

}  // namespace

ksched::Status ApiWriter::Bind(const api::Pod& pod, std::string_view node_name) {
  std::promise<ksched::Status> answer;
  std::future<ksched::Status> bound = answer.get_future();
  BindAsync(pod, node_name, [&answer](ksched::Status s) { answer.set_value(std::move(s)); });
  return bound.get();
}

void ApiWriter::BindAsync(const api::Pod& pod, std::string_view node_name,
                          std::function<void(ksched::Status)> done) {
  client::Request request = BindingRequest(pod, node_name);
  if (options_.pod_lister) {
    request.precondition = [lister = options_.pod_lister, key = pod.Key(), uid = pod.metadata.uid]() -> ksched::Status {
      api::PodPtr now = lister(key);
      if (!now || now->metadata.uid != uid)
        return ksched::Status(StatusCode::kCancelled, "pod \"" + key + "\" was deleted before its bind was sent");
      if (now->IsAssigned())
        return ksched::Status(StatusCode::kCancelled,
                              "pod \"" + key + "\" was assigned to node \"" + now->spec.node_name + "\" meanwhile");
      return ksched::Status::OK();
    };
  }
  patch_order_->After(pod.metadata.uid, [client = options_.bind_client, request = std::move(request), key = pod.Key(),
                                         done = std::move(done), hold = events_.Hold()](bool send) mutable {
    if (!send) {
      done(ksched::Status(StatusCode::kCancelled, "pod \"" + key + "\" was deleted while its bind waited"));
      return;
    }
    client->Send(std::move(request), [done = std::move(done), hold = std::move(hold)](StatusOr<client::Response> r) {
      done(r.ok() ? ksched::Status::OK() : r.status());
    });
  });
}

void ApiWriter::CancelBinds(const std::string& uid) { patch_order_->Cancel(uid); }

void ApiWriter::PatchOrder::After(const std::string& uid, HeldBind bind) {
  {
    MutexLock lock(mu);
    auto it = by_uid.find(uid);
    if (it != by_uid.end()) {
      it->second.then.push_back(std::move(bind));
      return;
    }
  }
  bind(true);
}

void ApiWriter::PatchOrder::Cancel(const std::string& uid) {
  std::vector<HeldBind> cancelled;
  {
    MutexLock lock(mu);
    auto it = by_uid.find(uid);
    if (it == by_uid.end()) return;
    cancelled.swap(it->second.then);
  }
  for (auto& bind : cancelled) bind(false);
}

void ApiWriter::PatchOrder::PatchSent(const std::string& uid) {
  MutexLock lock(mu);
  ++by_uid[uid].in_flight;
}

void ApiWriter::PatchOrder::PatchAnswered(const std::string& uid) {
  std::vector<HeldBind> then;
  {
    MutexLock lock(mu);
    auto it = by_uid.find(uid);
    if (it == by_uid.end() || --it->second.in_flight > 0) return;
    then = std::move(it->second.then);
    by_uid.erase(it);
  }
  for (auto& bind : then) bind(true);
}

StatusOr<api::PodPtr> ApiWriter::GetPod(const api::Pod& pod) {
  auto r = options_.bind_client->Do({.path = PodPath(pod)});
  if (!r.ok()) return r.status();
  return api::DecodePod(r->body);
}

StatusOr<api::PersistentVolumePtr> ApiWriter::PatchVolume(std::string_view name, std::string merge_patch) {
  return MergePatch("/api/v1/persistentvolumes/" + std::string(name), std::move(merge_patch),
                    "persistentvolume \"" + std::string(name) + "\"", api::DecodePersistentVolume);
}

StatusOr<api::PersistentVolumeClaimPtr> ApiWriter::PatchClaim(std::string_view ns, std::string_view name,
                                                              std::string merge_patch) {
  return MergePatch("/api/v1/namespaces/" + std::string(ns) + "/persistentvolumeclaims/" + std::string(name),
                    std::move(merge_patch), "persistentvolumeclaim \"" + api::ClaimKey(ns, name) + "\"",
                    api::DecodePersistentVolumeClaim);
}

namespace {
std::string ResourceClaimPath(std::string_view ns, std::string_view name) {
  return "/apis/resource.k8s.io/v1/namespaces/" + std::string(ns) + "/resourceclaims/" + std::string(name);
}
}  // namespace

StatusOr<api::ResourceClaimPtr> ApiWriter::GetResourceClaim(std::string_view ns, std::string_view name) {
  auto r = options_.bind_client->Do({.path = ResourceClaimPath(ns, name)});
  if (!r.ok()) return r.status().WithContext("resourceclaim \"" + std::string(ns) + "/" + std::string(name) + "\"");
  api::JsonParser parser;
  return api::DecodeResourceClaim(parser, api::JsonText(r->body));
}

StatusOr<api::ResourceClaimPtr> ApiWriter::PatchResourceClaim(std::string_view ns, std::string_view name,
                                                              std::string merge_patch, bool status) {
  return MergePatch(ResourceClaimPath(ns, name) + (status ? "/status" : ""), std::move(merge_patch),
                    "resourceclaim \"" + std::string(ns) + "/" + std::string(name) + "\"", api::DecodeResourceClaim);
}

template <typename T>
StatusOr<std::shared_ptr<const T>> ApiWriter::MergePatch(std::string path, std::string merge_patch,
                                                         std::string_view what,
                                                         StatusOr<std::shared_ptr<const T>> (*decode)(api::JsonParser&,
                                                                                                      api::JsonText)) {
  auto r = options_.bind_client->Do({.verb = client::Verb::kPatch,
                                     .path = std::move(path),
                                     .body = std::move(merge_patch),
                                     .content_type = std::string(client::kContentMergePatch)});
  if (!r.ok()) return r.status().WithContext(what);
  api::JsonParser parser;
  return decode(parser, api::JsonText(r->body));
}

void ApiWriter::PatchPodScheduledFalse(const api::Pod& pod, std::string_view reason, std::string_view message,
                                       const std::optional<std::string>& nominated_node_name) {
  const api::PodCondition* cur = pod.FindCondition("PodScheduled");
  if (!nominated_node_name && cur && cur->status == "False" && cur->reason == reason && cur->message == message)
    return;
  api::PodCondition cond;
  cond.type = "PodScheduled";
  cond.status = "False";
  cond.reason = reason;
  cond.message = message;
  // The transition time moves only when the status does.
  cond.last_transition_time =
      cur && cur->status == "False" ? cur->last_transition_time : api::FormatTime(options_.clock->WallNow());
  // A pod that is or becomes nominated (a preemptor) may be bound soon after, and its
  // bind waits for this patch: it goes on the foreground lane, ahead of the events and
  // patches of other failures.
  const bool soon_bound = nominated_node_name.has_value() || !pod.status.nominated_node_name.empty();
  SendStatusPatch(pod, api::EncodePodScheduledConditionPatch(cond, nominated_node_name), "Error updating pod condition",
                  /*background=*/!soon_bound);
}

void ApiWriter::ClearNominatedNodeName(const api::Pod& pod) {
  // A pod losing its nomination looks for another node at once: foreground, as above.
  SendStatusPatch(pod, R"({"status":{"nominatedNodeName":null}})", "Cannot clear 'NominatedNodeName' field",
                  /*background=*/false);
}

void ApiWriter::SendStatusPatch(const api::Pod& pod, std::string body, std::string_view what, bool background) {
  std::string key = pod.Key();
  patch_order_->PatchSent(pod.metadata.uid);
  options_.status_client->Send(
      {.verb = client::Verb::kPatch,
       .path = PodPath(pod) + "/status",
       .body = std::move(body),
       .content_type = std::string(client::kContentStrategicMerge),
       .background = background,
       .retry_connection_errors = true},
      [order = patch_order_, uid = pod.metadata.uid, key, what = std::string(what)](StatusOr<client::Response> r) {
        if (!r.ok() && r.status().code() == StatusCode::kResourceExhausted) {
          // The client's background queue is full: under a storm of failures every patch
          // would say so. The first and then every 1000th are logged, with the count.
          const uint64_t n = ++order->dropped;
          if (n % 1000 == 1)
            KLOG(WARNING) << what << ", pod=\"" << key << "\": " << r.status().ToString() << " (" << n
                          << " status patch(es) dropped so far)";
        } else if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
          KLOG(WARNING) << what << ", pod=\"" << key << "\": " << r.status().ToString();
        }
        order->PatchAnswered(uid);
      });
}

void ApiWriter::EvictPod(const api::Pod& victim, std::string_view scheduler_name,
                         std::function<void(ksched::Status)> done) {
  std::string path = PodPath(victim);
  client::Request del{.verb = client::Verb::kDelete,
                         .path = path,
                         .body = api::EncodeDeleteOptionsWithUid(victim.metadata.uid),
                         .retry_connection_errors = true};
  // Gone already (404), or the name now belongs to another pod (409 on the uid
  // precondition): either way this victim no longer holds the room.
  auto finish = [done, hold = events_.Hold()](StatusOr<client::Response> r) {
    if (r.ok() || r.status().code() == StatusCode::kNotFound || r.status().code() == StatusCode::kConflict) {
      done(ksched::Status::OK());
      return;
    }
    done(r.status());
  };
  if (!options_.disruption_target_condition) {
    options_.bind_client->Send(std::move(del), std::move(finish));
    return;
  }
  api::PodCondition cond;
  cond.type = "DisruptionTarget";
  cond.status = "True";
  cond.reason = "PreemptionByScheduler";
  cond.message = std::string(scheduler_name) + ": preempting to accommodate a higher priority pod";
  cond.last_transition_time = api::FormatTime(options_.clock->WallNow());
  client::ApiClient* client = options_.bind_client;
  client->Send({.verb = client::Verb::kPatch,
                .path = path + "/status",
                .body = api::EncodePodScheduledConditionPatch(cond),
                .content_type = std::string(client::kContentStrategicMerge),
                .retry_connection_errors = true},
               [client, del = std::move(del), finish = std::move(finish)](StatusOr<client::Response> r) mutable {
                 if (!r.ok()) {
                   // Not there any more: nothing to delete; other errors fail the eviction.
                   finish(std::move(r));
                   return;
                 }
                 client->Send(std::move(del), std::move(finish));
               });
}

void ApiWriter::RecordEvent(const api::Pod& pod, std::string_view scheduler_name, bool warning,
                            std::string_view reason, std::string_view action, std::string_view note,
                            const api::Pod* related) {
  events_.Add(PendingEvent(pod, related, scheduler_name, warning, reason, action, note, options_.clock->WallNow()));
}

}  // namespace ksched::scheduler
