#include "planner/simulated_plan.h"

#include <algorithm>

namespace meshplan {

Result<sim::PipelineSimulation> simulate_layout(CostModel& model, const Layout& l) {
  return sim::simulate_pipeline(model.pipeline_problem(l));
}

std::vector<Diagnostic> rerank_by_simulation(CostModel& model, SearchResult& r, int k,
                                             Objective objective) {
  const size_t n = std::min(r.ranked.size(), static_cast<size_t>(std::max(k, 0)));
  for (size_t i = 0; i < n; ++i) {
    Result<sim::PipelineSimulation> s = simulate_layout(model, r.ranked[i].layout);
    if (!s) return s.errors();
    r.ranked[i].simulated_step_s = s->result.step_s;
  }
  if (objective == Objective::memory) return {};
  std::stable_sort(
      r.ranked.begin(), r.ranked.begin() + static_cast<std::ptrdiff_t>(n),
      [](const Estimate& a, const Estimate& b) { return a.simulated_step_s < b.simulated_step_s; });
  return {};
}

}  // namespace meshplan
