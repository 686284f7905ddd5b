// The identity a candidate writes into the Lease: unique per process, readable by humans.
#pragma once

#include <string>
#include <string_view>

namespace ksched::leaderelection {

// A random (version 4) UUID: "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", lower-case hex.
std::string NewUuid();

// kube-scheduler's lock identity: hostname + "_" + a random UUID, so two replicas on one
// host (or a restarted process that still owns the lease) are told apart.
std::string UniqueIdentity(std::string_view hostname);

}  // namespace ksched::leaderelection
