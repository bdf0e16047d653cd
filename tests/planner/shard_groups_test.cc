#include "planner/shard_groups.h"

#include <doctest/doctest.h>

using namespace meshplan;

namespace {

void check_dims(const GroupShape& g, std::vector<std::pair<int64_t, int64_t>> dims) {
  std::vector<std::pair<int64_t, int64_t>> got;
  for (int i = 0; i < g.dim_count; ++i) {
    const GroupShape::Dim& d = g.dims[static_cast<size_t>(i)];
    if (d.size > 1) got.emplace_back(d.size, d.stride);
  }
  CHECK(got == dims);
}

}  // namespace

TEST_CASE("without hybrid sharding the shard group is the whole dp × cp group, one replica") {
  const Layout l{.dp = 32, .tp = 8, .cp = 2, .zero = 3};
  const ShardGroups g = dense_shard_groups(l);
  check_dims(g.shard, {{32, 16}, {2, 8}});
  CHECK(g.replicas.size() == 1);
}

TEST_CASE("a shard group inside the inner dimension: the innermost ranks, replicas stride over") {
  // tp 1, dp 256 (order tp-cp-dp-pp: dp ranks adjacent): groups of 8 consecutive ranks (a
  // node), 32 replicas 8 ranks apart.
  const Layout l{.dp = 256, .zero = 3, .shard = 8};
  const ShardGroups g = dense_shard_groups(l);
  check_dims(g.shard, {{8, 1}});
  check_dims(g.replicas, {{32, 8}});
  CHECK(g.shard.size() * g.replicas.size() == 256);
}

TEST_CASE("a shard group wider than the inner dimension takes all of it and part of the outer") {
  // tp 2, cp 2, dp 8: CP ranks are 2 apart, DP ranks 4 apart. shard 4 = both CP ranks × 2 DP
  // ranks; the 4 replicas are 8 ranks apart.
  const Layout l{.dp = 8, .tp = 2, .cp = 2, .zero = 1, .shard = 4};
  const ShardGroups g = dense_shard_groups(l);
  check_dims(g.shard, {{2, 2}, {2, 4}});
  check_dims(g.replicas, {{4, 8}});
}

TEST_CASE("expert parameters shard over shard/ep of their expert-data-parallel ranks") {
  // dp 64, ep 8: expert-DP groups of 8 ranks, 8 apart. shard 16 holds 2 of them per group.
  const Layout l{.dp = 64, .ep = 8, .zero = 1, .shard = 16};
  const ShardGroups g = expert_shard_groups(l);
  CHECK(g.shard.size() == 2);
  CHECK(g.replicas.size() == 4);
  CHECK(expert_shard_groups(Layout{.dp = 64, .ep = 8, .zero = 1}).shard.size() == 8);
}
