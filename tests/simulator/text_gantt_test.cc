// The text Gantt chart on timelines whose shape is known.
#include "simulator/text_gantt.h"

#include <doctest/doctest.h>

#include "simulator/pipeline_simulation.h"

namespace meshplan::sim {
namespace {

PipelineSimulation simulated(Schedule s, int pp, int m, double f, double b, double w) {
  PipelineProblem p;
  p.pp = pp;
  p.micro_batches = m;
  p.schedule = s;
  for (int c = 0; c < pp; ++c) p.chunks.push_back(ChunkCosts{f, b, w});
  Result<PipelineSimulation> r = simulate_pipeline(p);
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE("gpipe on two stages draws the staircase, one column per unit of time") {
  // p = 2, m = 2, f = 1, b = 1: step (m + p - 1)(f + b) = 6 time units, 6 columns.
  const PipelineSimulation sim = simulated(Schedule::gpipe, 2, 2, 1e-3, 1e-3, 0);
  CHECK(text_gantt(sim.pipeline.graph, sim.timeline, 2, 6) ==
        "step 6.000 ms, 1.000 ms per column; F forward, B backward, W weight gradient, "
        "R recompute, O optimizer, . idle\n"
        "stage  0 |FF..BB|\n"
        "stage  1 |.FFBB.|\n");
}

TEST_CASE("zb-h1 rows show the deferred weight gradients") {
  const PipelineSimulation sim = simulated(Schedule::zb_h1, 2, 2, 1e-3, 1e-3, 1e-3);
  // Stage 0: F0 F1 . B0 W0 B1 W1; stage 1: . F0 B0 F1 B1 W0 W1 (step 7).
  CHECK(text_gantt(sim.pipeline.graph, sim.timeline, 2, 7) ==
        "step 7.000 ms, 1.000 ms per column; F forward, B backward, W weight gradient, "
        "R recompute, O optimizer, . idle\n"
        "stage  0 |FF.BWBW|\n"
        "stage  1 |.FBFBWW|\n");
}

TEST_CASE("every row of the gantt chart has the requested width") {
  const PipelineSimulation sim = simulated(Schedule::one_f_one_b, 8, 32, 1.3e-3, 2.9e-3, 0);
  const std::string chart = text_gantt(sim.pipeline.graph, sim.timeline, 8, 100);
  size_t rows = 0, pos = chart.find('\n') + 1;
  while (pos < chart.size()) {
    const size_t end = chart.find('\n', pos);
    CHECK(end - pos == std::string("stage  0 ||").size() + 100);
    pos = end + 1;
    ++rows;
  }
  CHECK(rows == 8);
}

}  // namespace
}  // namespace meshplan::sim
