// The benchmark runs the shape and reports consistent counts.
#include "simulator/simulator_bench.h"

#include <doctest/doctest.h>

namespace meshplan::sim {
namespace {

TEST_CASE("the simulator benchmark simulates the 405B pipeline shape once per repetition") {
  const SimBenchResult r = run_simulator_benchmark(1);
  // 128 chunks x 128 micro-batches x (F, B, send forward, send backward), less the sends at the
  // pipeline's two ends, plus 128 reductions and 16 optimizer steps.
  CHECK(r.ops == 128 * 128 * 4 - 2 * 128 + 128 + 16);
  CHECK(r.events == r.ops);
  CHECK(r.simulate_s > 0);
  CHECK(r.events_per_s > 0);
  CHECK(r.total_s >= r.simulate_s);
  CHECK(r.step_s > 0);
}

}  // namespace
}  // namespace meshplan::sim
