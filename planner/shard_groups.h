// Hybrid sharding (HSDP) in one place: which ranks a ZeRO-sharded state is divided over (the
// shard group: the innermost Layout::shard ranks of the data-parallel group) and which ranks
// hold the same shard in the other groups (the replicas). The gradient step is then a
// reduce-scatter inside the shard group plus an all-reduce of the shard across the replicas,
// and parameters are all-gathered inside the shard group only (PyTorch FSDP HYBRID_SHARD;
// Megatron-Core --num-distributed-optimizer-instances). Without hybrid sharding the shard group
// is the whole data-parallel group and there is one replica.
#pragma once

#include "core/layout.h"
#include "planner/collective_model.h"

namespace meshplan {

struct ShardGroups {
  GroupShape shard;     // the ranks one sharded state is divided over
  GroupShape replicas;  // one rank of each shard group (size 1 without hybrid sharding)
};

// Dense parameters: the dp × cp group. REQUIRES: shard_divides_dp_cp(l).
ShardGroups dense_shard_groups(const Layout& l);
// Expert parameters: the dp·cp/ep expert-data-parallel group; with hybrid sharding each shard
// group holds shard/ep of its ranks. REQUIRES: shard_holds_expert_groups(l).
ShardGroups expert_shard_groups(const Layout& l);

}  // namespace meshplan
