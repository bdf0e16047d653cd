#include "planner/shard_groups.h"

#include <algorithm>
#include <utility>

#include "planner/cost_model.h"

namespace meshplan {

ShardGroups dense_shard_groups(const Layout& l) {
  ShardGroups g;
  g.shard = dp_group(l);
  g.replicas = GroupShape::of(1, 1);
  if (l.shard == 0 || l.shard == l.dp * l.cp) return g;
  // The data-parallel group's two dimensions, the inner (smaller stride) first.
  GroupShape::Dim inner = {l.dp, l.stride(Dim::dp)}, outer = {l.cp, l.stride(Dim::cp)};
  if (outer.stride < inner.stride) std::swap(inner, outer);
  if (l.shard <= inner.size) {
    g.shard = GroupShape::of(l.shard, inner.stride);
    g.replicas.dims = {{{inner.size / l.shard, inner.stride * l.shard}, outer}};
    g.replicas.dim_count = 2;
  } else {
    const int64_t outer_part = l.shard / inner.size;
    g.shard.dims = {{inner, {outer_part, outer.stride}}};
    g.shard.dim_count = 2;
    g.replicas = GroupShape::of(outer.size / outer_part, outer.stride * outer_part);
  }
  return g;
}

ShardGroups expert_shard_groups(const Layout& l) {
  ShardGroups g;
  g.shard = expert_dp_group(l);
  g.replicas = GroupShape::of(1, 1);
  if (l.shard == 0 || l.shard == l.dp * l.cp) return g;
  const int64_t inner_stride = std::min(l.stride(Dim::cp), l.stride(Dim::dp));
  g.shard = GroupShape::of(l.shard / l.ep, inner_stride * l.ep);
  g.replicas = GroupShape::of(l.dp * l.cp / l.shard, inner_stride * l.shard);
  return g;
}

}  // namespace meshplan
