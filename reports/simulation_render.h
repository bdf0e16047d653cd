// Renderings of a simulated step next to the analytic estimate.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "planner/cost_model.h"
#include "simulator/pipeline_simulation.h"

namespace meshplan {

// analytic{step_time_s, bubble_fraction}, simulated{step_time_s, bubble_fraction, ops, events,
// critical_path_ops, stages[]{stage, compute_s, recompute_s, exposed_comm_s, idle_s,
// bubble_fraction, peak_micro_batches, peak_chunk_micro_batches, memory_model_in_flight}}.
nlohmann::ordered_json simulation_json(const Estimate& analytic, const sim::PipelineSimulation& s);
std::string simulation_table(const Estimate& analytic, const sim::PipelineSimulation& s, int width);

}  // namespace meshplan
