// The Pods and Nodes that integration tests and benchmarks create on a real API server.
#pragma once

#include <string>

#include "pkg/api/quantity.h"
#include "pkg/api/types.h"

namespace ksched::testing {

// One pause container asking for `requests`, for `scheduler_name`.
inline api::Pod TestPod(std::string ns, std::string name, std::string scheduler_name, api::ResourceList requests) {
  api::Pod p;
  p.metadata.namespace_ = std::move(ns);
  p.metadata.name = std::move(name);
  p.spec.scheduler_name = std::move(scheduler_name);
  api::Container c;
  c.name = "app";
  c.image = "registry.k8s.io/pause:3.9";
  c.requests = std::move(requests);
  p.spec.containers.push_back(std::move(c));
  return p;
}

// A node with `cpu` and `memory` allocatable (and capacity), room for 110 pods.
inline api::Node TestNode(std::string name, api::Quantity cpu, api::Quantity memory) {
  api::Node n;
  n.metadata.name = std::move(name);
  n.status.allocatable = {{"cpu", cpu}, {"memory", memory}, {"pods", api::Quantity::FromValue(110)}};
  n.status.capacity = n.status.allocatable;
  return n;
}

}  // namespace ksched::testing
