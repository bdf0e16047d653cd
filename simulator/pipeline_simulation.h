// One call for the planner: a pipeline problem in, the simulated step out.
#pragma once

#include "core/result.h"
#include "simulator/event_engine.h"
#include "simulator/pipeline_graph.h"
#include "simulator/simulation_result.h"

namespace meshplan::sim {

struct PipelineSimulation {
  PipelineGraph pipeline;  // the schedule's order and the operation graph
  Timeline timeline;       // start and end of every operation
  SimulationResult result;
};

// Builds the graph of `problem`, runs it and summarizes it.
// Errors: those of build_pipeline_graph (the schedule cannot run this shape, bad costs).
Result<PipelineSimulation> simulate_pipeline(const PipelineProblem& problem);

}  // namespace meshplan::sim
