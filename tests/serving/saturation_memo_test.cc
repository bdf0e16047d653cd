// The saturation memo: one replica's offline replay kept across a layout's replica counts gives
// the saturation rate that replaying each count afresh gives.
#include "serving/saturation_memo.h"

#include <doctest/doctest.h>

#include <memory>

#include "serving/serving_plan.h"
#include "tests/serving/serving_test_problem.h"

using namespace meshplan;
using namespace meshplan::serving;

TEST_CASE("saturation memo: a replay is kept per layout and per replica's request count") {
  SaturationMemo memo;
  ServingLayout tp2;
  tp2.tp = 2;
  tp2.max_batch = 64;
  CHECK_FALSE(memo.find(tp2, 1000).has_value());
  memo.keep(tp2, 1000, OfflineReplay{1000, 12.5});
  ServingLayout more = tp2;
  more.replicas = 7;  // the replica count aside
  REQUIRE(memo.find(more, 1000).has_value());
  CHECK(memo.find(more, 1000)->duration_s == 12.5);
  CHECK_FALSE(memo.find(tp2, 500).has_value());  // another request count
  ServingLayout capped = tp2;
  capped.max_batch = 16;
  CHECK_FALSE(memo.find(capped, 1000).has_value());  // another batch
}

TEST_CASE("saturation memo: the saturation rate of every replica count is the one replayed anew") {
  ServingProblem fresh = meshplan::testing::poisson_workload(
      meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 8), 2000, 500, 14,
      0);  // the default requests: 1,000 per replica
  ServingProblem kept = fresh;
  kept.saturation_memo = std::make_shared<SaturationMemo>();
  ServingLayout l;
  l.max_batch = 174;
  for (int64_t replicas : {1, 2, 3, 8}) {
    CAPTURE(replicas);
    l.replicas = replicas;
    const double anew = saturation_requests_per_s(fresh, l);
    CHECK(anew > 0);
    CHECK(saturation_requests_per_s(kept, l) == anew);  // bit for bit
  }
  // Requests given in all: each replica replays its share, a different replay per count.
  fresh.workload.requests = 200;
  kept.workload.requests = 200;
  for (int64_t replicas : {1, 2, 4}) {
    CAPTURE(replicas);
    l.replicas = replicas;
    CHECK(saturation_requests_per_s(kept, l) == saturation_requests_per_s(fresh, l));
  }
}
