// What a plan report shows, computed (STYLE.md rule 7: compute, then render): the search, its
// top K replayed in the simulator, a bounded sample of feasible layouts for the MFU-vs-memory
// chart, what-if variations of the best layout, and its launcher configurations. Deterministic:
// no wall-clock time is kept.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "launchers/launcher_export.h"
#include "planner/cost_model.h"
#include "planner/layout_search.h"
#include "planner/scale_sweep.h"
#include "reports/layer_ops_render.h"
#include "simulator/pipeline_simulation.h"

namespace meshplan {

struct ReportRequest {
  int top_k = 5;     // layouts in the table, each simulated
  int sample = 200;  // best feasible layouts plotted in the MFU-vs-memory chart (>= top_k)
  int threads = 1;   // search threads; the result does not depend on it
  // How layouts are ranked, as `meshplan plan --objective`; mfu and tokens_per_s re-rank the
  // top_k by simulated step time, memory keeps the lowest peak memory first.
  Objective objective = Objective::mfu;
  // The launcher the plan is for (SearchOptions::launcher): the report ranks only layouts it runs.
  SearchOptions::LauncherCheck launcher;
  // When set, the report adds a scale section: this sweep run on the same inputs (its search
  // threads are `threads`).
  std::optional<SweepRequest> sweep;
};

// The best layout under one change. `estimate` is empty when the changed layout is invalid or
// cannot be built; `note` then says why.
struct WhatIf {
  std::string scenario;  // "half the GPUs (256)"
  std::string change;    // the layout change, "dp 32 -> 16"
  std::optional<Estimate> estimate;
  std::string note;
};

struct LauncherConfig {
  Launcher launcher;
  std::optional<std::string> text;  // the config, or empty when refused
  std::vector<Diagnostic> refused;
};

struct ReportData {
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  CalibrationProfile profile;
  CostOptions options;
  int64_t gpus = 0;
  int64_t params_total = 0;
  ReportRequest request;
  SearchResult search;           // ranked: the top K, re-ranked by simulated step time
  std::vector<Estimate> sample;  // up to request.sample best feasible layouts (analytic order)
  std::optional<sim::PipelineSimulation> best_simulation;
  std::vector<WhatIf> what_ifs;
  std::vector<LauncherConfig> launchers;
  std::optional<SweepResult> sweep;        // when request.sweep is set
  std::optional<LayerOpsReport> best_ops;  // the best layout's layer op by op
};

// Runs the search, simulation and what-ifs for `model` on `gpus` GPUs.
// Errors: the simulator's, for a layout it cannot replay.
Result<ReportData> build_report(const CostModel& model, int64_t gpus, const ReportRequest& request);

// The what-if rows for `best` (exposed for tests): half and double the GPUs (data parallelism
// scaled; the cluster extended with the same network when it has too few GPUs), the next-larger
// micro-batch that divides the batch, and one recompute level less.
std::vector<WhatIf> what_ifs(const CostModel& model, int64_t gpus, const Estimate& best);

}  // namespace meshplan
