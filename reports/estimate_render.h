// Renderings of cost-model estimates and search results: terminal tables, JSON (the stable
// interface), CSV and Markdown.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "planner/cost_model.h"
#include "planner/layout_search.h"

namespace meshplan {

// The step-time components in display order, with their labels (one table for every renderer).
enum class ComponentKind { compute, recompute, communication, bubble, optimizer };
struct BreakdownComponent {
  const char* label;
  double seconds;
  ComponentKind kind;
};
std::vector<BreakdownComponent> breakdown_components(const TimeBreakdown& b);

// The memory JSON of `meshplan memory` plus: layout, micro_batches, step_time_s,
// bubble_fraction, mfu, hfu, model_tflops_per_gpu, hardware_tflops_per_gpu, tokens_per_s,
// time_breakdown{...}, stage_times[].
nlohmann::ordered_json estimate_json(const Estimate& e);
std::string estimate_table(const Estimate& e, const CostModel& model);

// search{evaluated, feasible, wall_s, rejected{}}, ranked[] (estimate JSON each), and
// smallest (when nothing fits).
nlohmann::ordered_json plan_json(const SearchResult& r);
std::string plan_table(const SearchResult& r, const CostModel& model, int64_t gpus);
std::string plan_csv(const SearchResult& r);
std::string plan_markdown(const SearchResult& r);
// Why nothing fits on `gpus` GPUs, and what would make it fit; when no layout passes the layout
// rules, which rules (planner/no_layout_reason.h).
std::string nothing_fits_text(const SearchResult& r, const CostModel& model, int64_t gpus);

}  // namespace meshplan
