// Builders shared by the cache tests.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "pkg/api/types.h"
#include "tests/fakes/builders.h"

namespace ksched::cache::testing {

// {"cpu", "100m"}, {"memory", "500Mi"} -> ResourceList; aborts the test on a bad quantity.
inline api::ResourceList Res(std::initializer_list<std::pair<const char*, const char*>> items) {
  api::ResourceList out;
  for (const auto& [name, text] : items) {
    auto q = api::Quantity::Parse(text);
    if (!q.ok()) std::abort();
    out.emplace_back(name, *q);
  }
  return out;
}

inline api::Container MakeContainer(api::ResourceList requests, bool sidecar = false) {
  api::Container c;
  c.name = "c";
  c.requests = std::move(requests);
  c.restart_policy_always = sidecar;
  return c;
}

inline api::PodPtr MakePod(const std::string& name, const std::string& node, api::ResourceList requests = {},
                           const std::function<void(api::Pod&)>& mutate = nullptr) {
  api::Pod p = ksched::testing::PodBuilder(name).UID("uid-" + name).Node(node).Build();
  p.spec.containers.push_back(MakeContainer(std::move(requests)));
  if (mutate) mutate(p);
  return std::make_shared<const api::Pod>(std::move(p));
}

inline api::PodPtr WithHostPort(api::PodPtr pod, int32_t port, std::string protocol = "TCP", std::string ip = "") {
  auto p = std::make_shared<api::Pod>(*pod);
  api::ContainerPort cp;
  cp.container_port = port;
  cp.host_port = port;
  cp.protocol = std::move(protocol);
  cp.host_ip = std::move(ip);
  p->spec.containers[0].ports.push_back(cp);
  return p;
}

inline api::PodPtr WithChange(const api::PodPtr& pod, const std::function<void(api::Pod&)>& mutate) {
  auto p = std::make_shared<api::Pod>(*pod);
  mutate(*p);
  return p;
}

inline api::NodePtr MakeNode(const std::string& name, const char* cpu = "4", const char* memory = "32Gi",
                             const std::function<void(api::Node&)>& mutate = nullptr) {
  api::Node n = ksched::testing::NodeBuilder(name)
                    .UID("uid-" + name)
                    .Capacity({{"cpu", cpu}, {"memory", memory}, {"pods", "110"}})
                    .Build();
  if (mutate) mutate(n);
  return std::make_shared<const api::Node>(std::move(n));
}

inline api::NodePtr MakeZonedNode(const std::string& name, const std::string& region, const std::string& zone) {
  return MakeNode(name, "4", "32Gi", [&](api::Node& n) {
    if (!region.empty()) n.metadata.labels.Set("topology.kubernetes.io/region", region);
    if (!zone.empty()) n.metadata.labels.Set("topology.kubernetes.io/zone", zone);
  });
}

inline api::Affinity AntiAffinityRequired() {
  api::Affinity a;
  a.pod_anti_affinity.emplace();
  a.pod_anti_affinity->required.push_back(api::PodAffinityTerm{.topology_key = "kubernetes.io/hostname"});
  return a;
}

inline api::Affinity PodAffinityPreferred() {
  api::Affinity a;
  a.pod_affinity.emplace();
  a.pod_affinity->preferred.push_back(api::WeightedPodAffinityTerm{.weight = 1});
  return a;
}

}  // namespace ksched::cache::testing
