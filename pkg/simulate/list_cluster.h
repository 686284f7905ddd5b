// `ksched simulate --from-cluster`: every kind simulate reads, listed once from a live API
// server, page by page. Only GETs are sent.
#pragma once

#include <string>

#include "pkg/client/api_client.h"
#include "pkg/simulate/cluster_files.h"
#include "pkg/util/status.h"

namespace ksched::simulate {

// Appends the cluster's objects to `out` (pods: the non-terminal ones, as the scheduler's
// informer reads them); `server` names the source in messages. A kind the server does
// not serve (404) is left out; PodDisruptionBudgets fall back to policy/v1beta1.
Status ListCluster(client::ApiClient& client, const std::string& server, ClusterObjects& out);

}  // namespace ksched::simulate
