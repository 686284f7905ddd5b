// The coordination.k8s.io/v1 Lease that holds the leader-election record: its JSON
// form on the wire and the REST paths. Only the spec fields the elector uses are
// decoded; the object's metadata is kept verbatim so an update writes back labels,
// annotations and owner references unchanged, as client-go's LeaseLock does by
// sending the whole object it read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/api/time_format.h"
#include "pkg/util/clock.h"
#include "pkg/util/status.h"

namespace ksched::leaderelection {

// The spec fields of a Lease, as upstream's LeaderElectionRecord. Times are kept as the
// strings the server sent: the elector never trusts remote timestamps, it only copies
// acquireTime forward while it keeps the lease.
struct LeaseRecord {
  std::string holder_identity;
  int32_t lease_duration_seconds = 0;
  std::string acquire_time;  // RFC3339 with microseconds; empty = null
  std::string renew_time;
  int32_t lease_transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

// A Lease as read from the server.
struct LeaseObject {
  LeaseRecord record;
  std::string resource_version;  // metadata.resourceVersion, the update precondition
  std::string raw_metadata;      // the metadata object's JSON text, echoed on update
};

// "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases" (the collection, for POST) and
// ".../leases/{name}" (GET, PUT).
std::string LeaseCollectionPath(std::string_view ns);
std::string LeasePath(std::string_view ns, std::string_view name);

// Decodes a Lease; null or missing spec fields read as empty / zero.
StatusOr<LeaseObject> DecodeLease(std::string_view json);

// The body of a create: metadata carries only name and namespace.
std::string EncodeNewLease(std::string_view ns, std::string_view name, const LeaseRecord& record);
// The body of an update: `raw_metadata` (which carries the resourceVersion the server
// checks, so a writer that raced us gets 409 Conflict) and the new spec.
std::string EncodeLeaseUpdate(std::string_view raw_metadata, const LeaseRecord& record);

// Lease times are metav1.MicroTime (pkg/api/time_format.h).
using api::FormatMicroTime;

}  // namespace ksched::leaderelection
