// planner/zero_sharding.h: which states each ZeRO stage shards, and the collectives it implies.
#include "planner/zero_sharding.h"

#include <doctest/doctest.h>

namespace meshplan {
namespace {

TEST_CASE("stage 0 shards nothing and all-reduces gradients") {
  const ZeroSharding z = zero_sharding(0);
  CHECK(z.optimizer_shards(8) == 1.0);
  CHECK(z.grad_shards(8) == 1.0);
  CHECK(z.weight_shards(8) == 1.0);
  CHECK_FALSE(z.reduce_scatters_grads());
  CHECK_FALSE(z.gathers_updated_weights());
}

TEST_CASE("stages 1 and 2: optimizer (and gradients) sharded, updated weights gathered") {
  const ZeroSharding one = zero_sharding(1);
  CHECK(one.optimizer_shards(8) == 8.0);
  CHECK(one.grad_shards(8) == 1.0);
  CHECK(one.reduce_scatters_grads());
  CHECK(one.gathers_updated_weights());
  const ZeroSharding two = zero_sharding(2);
  CHECK(two.grad_shards(8) == 8.0);
  CHECK(two.weight_shards(8) == 1.0);
  CHECK(two.gathers_updated_weights());
}

TEST_CASE("stage 3 shards every state and gathers weights layer by layer instead") {
  const ZeroSharding z = zero_sharding(3);
  CHECK(z.weight_shards(16) == 16.0);
  CHECK(z.grad_shards(16) == 16.0);
  CHECK(z.optimizer_shards(16) == 16.0);
  CHECK(z.reduce_scatters_grads());
  CHECK_FALSE(z.gathers_updated_weights());
}

}  // namespace
}  // namespace meshplan
