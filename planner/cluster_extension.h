// A cluster grown to hold more GPUs than it has: the scale questions (`meshplan sweep`, the
// report's "double the GPUs" what-if) ask about counts beyond the topology file. The rule is
// one hypothetical, stated wherever it is used: more nodes of the same kind (GPU, GPUs per node,
// profile) and the same network levels, the outermost level's span widened to cover every GPU.
// Nothing about the fabric's bandwidth or latency changes.
#pragma once

#include <cstdint>

#include "core/cluster_spec.h"

namespace meshplan {

// `cluster` when it already has `gpus` GPUs; otherwise ceil(gpus / gpus_per_node) nodes with
// the outermost level spanning them all.
// REQUIRES: gpus > 0, cluster.gpus_per_node > 0.
ClusterSpec extend_cluster(const ClusterSpec& cluster, int64_t gpus);

// Whether extend_cluster(cluster, gpus) adds nodes.
inline bool needs_extension(const ClusterSpec& cluster, int64_t gpus) {
  return gpus > cluster.gpus();
}

}  // namespace meshplan
