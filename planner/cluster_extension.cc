#include "planner/cluster_extension.h"

#include <algorithm>
#include <cassert>

namespace meshplan {

ClusterSpec extend_cluster(const ClusterSpec& cluster, int64_t gpus) {
  assert(gpus > 0 && cluster.gpus_per_node > 0);
  ClusterSpec out = cluster;
  if (gpus > out.gpus()) out.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  if (!out.network.empty()) out.network.back().span = std::max(out.network.back().span, out.gpus());
  return out;
}

}  // namespace meshplan
