// Replaying layouts in the discrete-event simulator: one layout, or the K best of a search,
// re-ranked by simulated step time.
#pragma once

#include "core/result.h"
#include "planner/cost_model.h"
#include "planner/layout_search.h"
#include "simulator/pipeline_simulation.h"

namespace meshplan {

// REQUIRES: check_layout passed.
Result<sim::PipelineSimulation> simulate_layout(CostModel& model, const Layout& l);

// Simulates the first `k` ranked layouts, sets their simulated_step_s, and, for the objectives
// that rank by speed (mfu, tokens_per_s), re-orders those k by simulated step time (stable:
// analytic order breaks ties); under Objective::memory the order stays the search's. Errors
// from the simulator are returned, not swallowed.
std::vector<Diagnostic> rerank_by_simulation(CostModel& model, SearchResult& r, int k,
                                             Objective objective = Objective::mfu);

}  // namespace meshplan
