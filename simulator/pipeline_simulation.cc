#include "simulator/pipeline_simulation.h"

#include <utility>

namespace meshplan::sim {

Result<PipelineSimulation> simulate_pipeline(const PipelineProblem& problem) {
  Result<PipelineGraph> built = build_pipeline_graph(problem);
  if (!built.ok()) return built.errors();
  PipelineSimulation sim{std::move(built).value(), {}, {}};
  Result<Timeline> timeline = simulate(sim.pipeline.graph);
  // The built-in schedules never deadlock; a failure here is a bug in the graph builder, but it
  // is still reported as a value.
  if (!timeline.ok()) return timeline.errors();
  sim.timeline = std::move(timeline).value();
  sim.result = summarize(sim.pipeline.graph, sim.timeline, problem.pp,
                         static_cast<int>(sim.pipeline.order.placement.stage_chunks[0].size()));
  return sim;
}

}  // namespace meshplan::sim
