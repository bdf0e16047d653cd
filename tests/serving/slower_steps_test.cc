// The best layout with every step and KV transfer a fraction longer (slower_steps.h), and the
// SLO margin a search keeps with it (Slo::margin).
#include "serving/slower_steps.h"

#include <doctest/doctest.h>

#include "serving/serving_search.h"
#include "tests/serving/serving_test_problem.h"

using namespace meshplan;
using namespace meshplan::serving;

namespace {

// Llama 3.1 8B on one H100 (vLLM: no front end priced), 1,000/200-token requests.
ServingProblem problem(double rate_per_s, int64_t requests) {
  return meshplan::testing::poisson_workload(
      meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 1), 1000, 200,
      rate_per_s, requests);
}

ServingEstimate evaluated(const ServingProblem& p) {
  const std::optional<ServingEstimate> e = evaluate_serving(p, ServingLayout{});
  REQUIRE(e.has_value());
  return *e;
}

}  // namespace

TEST_CASE(
    "slower steps: a closed loop's times grow by the fraction, its throughput shrinks by it") {
  ServingProblem p = problem(1, 200);
  p.workload.load = LoadKind::concurrency;
  p.workload.concurrency = 16;
  const ServingEstimate e = evaluated(p);
  const std::optional<SlowerSteps> s = slower_steps(p, e, 0.25);
  REQUIRE(s.has_value());
  CHECK(s->fraction == 0.25);
  // A closed loop has no clock of its own: every step 1.25× as long is the same replay in a
  // longer unit.
  CHECK(s->tpot_s.mean == doctest::Approx(1.25 * e.replay.tpot_s.mean).epsilon(1e-12));
  CHECK(s->tpot_s.p99 == doctest::Approx(1.25 * e.replay.tpot_s.p99).epsilon(1e-12));
  CHECK(s->ttft_s.mean == doctest::Approx(1.25 * e.replay.ttft_s.mean).epsilon(1e-12));
  CHECK(s->output_tokens_per_s == doctest::Approx(e.output_tokens_per_s / 1.25).epsilon(1e-12));
}

TEST_CASE("slower steps: requests that never meet take each step the fraction longer") {
  // 0.001 requests/s: 20 requests about 1,000 s apart, each served alone in about 2 s.
  const ServingProblem p = problem(0.001, 20);
  const ServingEstimate e = evaluated(p);
  REQUIRE(e.replay.mean_batch == 1);
  const std::optional<SlowerSteps> s = slower_steps(p, e, 0.1);
  REQUIRE(s.has_value());
  CHECK(s->ttft_s.mean == doctest::Approx(1.1 * e.replay.ttft_s.mean).epsilon(1e-9));
  CHECK(s->tpot_s.mean == doctest::Approx(1.1 * e.replay.tpot_s.mean).epsilon(1e-9));
}

TEST_CASE("slower steps: near saturation the queue makes latencies grow faster than the steps") {
  // 20 requests/s on one H100: most of what it sustains.
  const ServingProblem p = problem(20, 400);
  const ServingEstimate e = evaluated(p);
  REQUIRE(!e.overloaded);
  const std::optional<SlowerSteps> s = slower_steps(p, e, 0.1);
  REQUIRE(s.has_value());
  CHECK(s->ttft_s.p99 > 1.1 * e.replay.ttft_s.p99);
  CHECK(s->tpot_s.p99 > 1.1 * e.replay.tpot_s.p99);
}

TEST_CASE("slower steps: an SLO margin makes the search keep the SLO with longer steps") {
  // llama3-8b FP8 on up to 8 H100s at 20 requests/s, TTFT ≤ 0.5 s, TPOT ≤ 20 ms: one GPU meets
  // it as predicted, not with every step 10% longer.
  ServingProblem p = problem(20, 400);
  p.gpus = 8;
  p.options.weights = WeightFormat::fp8;
  p.options.slo = {0.5, 0.02};
  const ServingSearchResult plain = search_serving(p);
  REQUIRE(!plain.ranked.empty());
  const ServingEstimate& near = plain.ranked.front();
  REQUIRE(near.meets_slo);
  const std::optional<SlowerSteps> slower = slower_steps(p, near, 0.1);
  REQUIRE(slower.has_value());
  CHECK(!slower->meets_slo);

  p.options.slo.margin = 0.1;
  const std::optional<ServingEstimate> again = evaluate_serving(p, near.layout);
  REQUIRE(again.has_value());
  CHECK(again->misses_margin);
  CHECK(!again->meets_slo);
  const ServingSearchResult kept = search_serving(p);
  REQUIRE(!kept.ranked.empty());
  const ServingEstimate& best = kept.ranked.front();
  CHECK(best.meets_slo);
  CHECK(!best.misses_margin);
  CHECK(best.layout.gpus() > near.layout.gpus());
  p.options.slo.margin = 0;
  const std::optional<SlowerSteps> best_slower = slower_steps(p, best, 0.1);
  REQUIRE(best_slower.has_value());
  CHECK(best_slower->meets_slo);
}
