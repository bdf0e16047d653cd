// The load curve of one layout: closed-loop concurrencies, or under a request rate Poisson rates
// at shares of the saturation rate, then offline.
#include "serving/load_curve.h"

#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "tests/serving/serving_test_problem.h"

using namespace meshplan;
using namespace meshplan::serving;

namespace {

// Llama 3.1 8B on two H100s, 1,000/200-token requests at 4 requests/s, 200 of them.
ServingProblem open_loop_problem() {
  return meshplan::testing::poisson_workload(
      meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 2), 1000, 200, 4, 200);
}

// The closed-loop curve (concurrency 8 asked) of one replica capped at `max_batch`, with the
// estimate it was drawn from.
std::pair<ServingEstimate, std::vector<LoadPoint>> closed_loop_curve(int64_t max_batch) {
  ServingProblem p = open_loop_problem();
  p.workload.load = LoadKind::concurrency;
  p.workload.concurrency = 8;
  ServingLayout l;
  l.max_batch = max_batch;
  const std::optional<ServingEstimate> e = evaluate_serving(p, l);
  REQUIRE(e.has_value());
  return {*e, load_curve(p, *e)};
}

}  // namespace

TEST_CASE(
    "load curve: under a request rate, Poisson rates at shares of the offline saturation rate "
    "and the asked rate, ascending, then offline") {
  const ServingProblem p = open_loop_problem();
  ServingLayout l;
  l.replicas = 2;
  const std::optional<ServingEstimate> e = evaluate_serving(p, l);
  REQUIRE(e.has_value());
  const std::vector<LoadPoint> curve = load_curve(p, *e);
  REQUIRE(curve.size() == 7);  // five shares, the asked 4 requests/s, offline
  // The saturation: the 200 requests at once, 100 on each replica.
  ServingProblem offline = p;
  offline.workload.load = LoadKind::offline;
  const std::optional<ServingEstimate> saturated = evaluate_serving(offline, e->layout);
  REQUIRE(saturated.has_value());
  const double saturation = 2 * 100 / saturated->replay.duration_s;
  REQUIRE(saturation > 4 / 0.125);  // the asked rate sits below every share
  CHECK(curve[0].request_rate_per_s == 4);
  const double shares[] = {0.125, 0.25, 0.5, 0.75, 0.9};
  for (size_t i = 0; i < 5; ++i)
    CHECK(curve[i + 1].request_rate_per_s == doctest::Approx(shares[i] * saturation));
  for (const LoadPoint& point : curve) CHECK(point.concurrency == 0);
  CHECK(curve.back().offline());
  CHECK(curve.back().output_tokens_per_s == saturated->output_tokens_per_s);
  // The asked rate's point is the plan's own replay.
  CHECK(curve[0].output_tokens_per_s == e->output_tokens_per_s);
  CHECK(curve[0].ttft_s.p99 == e->replay.ttft_s.p99);
  // More arrivals, more throughput and a longer time per token.
  for (size_t i = 1; i < 6; ++i) {
    CHECK(curve[i].output_tokens_per_s > curve[i - 1].output_tokens_per_s);
    CHECK(curve[i].tpot_s.mean > curve[i - 1].tpot_s.mean);
  }
}

TEST_CASE("load curve: a closed loop doubles the concurrency per replica up to the cap") {
  const auto [e, curve] = closed_loop_curve(8);
  REQUIRE(curve.size() == 5);  // 1, 2, 4, the cap 8, offline
  const double expected[] = {1, 2, 4, 8};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(curve[i].concurrency == expected[i]);
    CHECK(curve[i].request_rate_per_s == 0);
    CHECK(curve[i].load() == expected[i]);
  }
  CHECK(curve[4].offline());
}

TEST_CASE(
    "load curve: with a set number of requests the closed loop stops at each replica's share") {
  // 200 requests on one replica that would admit more: 200 in flight is every request at once,
  // the offline point, so the closed-loop points stop there (1, 2, …, 128, 200).
  const auto [e, curve] = closed_loop_curve(1024);
  REQUIRE(e.memory.max_concurrency > 200);
  REQUIRE(curve.size() == 10);  // 1, 2, 4, …, 128, 200, offline
  CHECK(curve[7].concurrency == 128);
  CHECK(curve[8].concurrency == 200);
  CHECK(curve[9].offline());
}
