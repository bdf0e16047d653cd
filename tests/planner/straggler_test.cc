// planner/straggler.cc: the expected slowest of n GPUs, and what it does to a step.
#include "planner/straggler.h"

#include <doctest/doctest.h>

#include "planner/cost_model.h"
#include "tests/test_inputs.h"

using namespace meshplan;

TEST_CASE("the expected maximum of n standard normals follows the order-statistic table") {
  // Exact values (Harter 1961 tables): n = 2: 0.5642, 8: 1.4236, 100: 2.5076, 1000: 3.2414.
  CHECK(expected_max_standard_normal(1) == 0);
  CHECK(expected_max_standard_normal(0) == 0);
  CHECK(expected_max_standard_normal(2) == doctest::Approx(0.5642).epsilon(0.05));
  CHECK(expected_max_standard_normal(8) == doctest::Approx(1.4236).epsilon(0.01));
  CHECK(expected_max_standard_normal(100) == doctest::Approx(2.5076).epsilon(0.01));
  CHECK(expected_max_standard_normal(1000) == doctest::Approx(3.2414).epsilon(0.01));
  // Blom's formula itself: Φ⁻¹(7.625 / 8.25) = Φ⁻¹(0.924242…) = 1.4338.
  CHECK(expected_max_standard_normal(8) == doctest::Approx(1.4338).epsilon(1e-3));
}

TEST_CASE("a 1.76% spread slows compute 2.5% on 8 GPUs and not at all on one") {
  CHECK(straggler_slowdown(0.0176, 1) == 1);
  CHECK(straggler_slowdown(0, 16384) == 1);
  CHECK(straggler_slowdown(0.0176, 8) == doctest::Approx(1 + 0.0176 * 1.4338).epsilon(1e-5));
}

TEST_CASE("the cost model stretches compute, not communication, by the slowest GPU's pace") {
  ModelSpec model = testing::shipped_model("llama3-8b");
  ClusterSpec cluster = testing::shipped_cluster("dgx-h100-1n");
  CalibrationProfile even, spread;
  spread.gpu_compute_spread = 0.0176;
  TrainingSpec training = model.training;
  training.global_batch = 8;
  Result<Layout> parsed = parse_layout("tp=8,pp=1,dp=1,mbs=1");
  REQUIRE(parsed.ok());
  const Layout l = parsed.value();
  CostModel a(model, cluster, even, training), b(model, cluster, spread, training);
  const Estimate ea = a.evaluate(l), eb = b.evaluate(l);
  const double factor = straggler_slowdown(0.0176, 8);
  CHECK(eb.stages[0].forward_s == doctest::Approx(factor * ea.stages[0].forward_s).epsilon(1e-12));
  CHECK(eb.stages[0].backward_s ==
        doctest::Approx(factor * ea.stages[0].backward_s).epsilon(1e-12));
  CHECK(eb.stages[0].tp_s == ea.stages[0].tp_s);
}
