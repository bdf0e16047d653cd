#include "reports/report_data.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/layout_fields.h"
#include "planner/cluster_extension.h"
#include "planner/param_count.h"
#include "planner/simulated_plan.h"

namespace meshplan {
namespace {

// Evaluates `layout` on `gpus` GPUs of `cluster`, or says why not.
WhatIf evaluate_variant(const CostModel& base, const ClusterSpec& cluster, int64_t gpus,
                        Layout layout, std::string scenario, std::string change) {
  WhatIf w{std::move(scenario), std::move(change), std::nullopt, ""};
  std::vector<Diagnostic> errors = check_layout(layout, base.model(), gpus, base.training());
  if (errors.empty()) errors = check_layout_on_cluster(layout, cluster);
  if (!errors.empty()) {
    w.note = fmt::format("not valid: {} {}", errors.front().field, errors.front().rule);
    return w;
  }
  CostModel model(base.model(), cluster, base.profile(), base.training(), base.options());
  w.estimate = model.evaluate(layout);
  if (!w.estimate->fits()) w.note = "does not fit in memory";
  return w;
}

WhatIf scaled_gpus(const CostModel& model, int64_t gpus, const Estimate& best, int64_t factor_num,
                   int64_t factor_den) {
  const int64_t n = gpus * factor_num / factor_den;
  Layout layout = best.layout;
  layout.dp = 0;
  const int64_t new_dp = layout.model_parallel() > 0 ? n / layout.model_parallel() : 0;
  std::string scenario =
      fmt::format("{} the GPUs ({})", factor_num > factor_den ? "double" : "half", n);
  std::string change = fmt::format("dp {} -> {}", best.layout.dp, new_dp);
  if (n < 1 || new_dp < 1) return WhatIf{scenario, change, std::nullopt, "not valid: too few GPUs"};
  WhatIf w =
      evaluate_variant(model, extend_cluster(model.cluster(), n), n, layout, scenario, change);
  if (needs_extension(model.cluster(), n) && w.estimate)
    w.note = "cluster extended with the same network";
  return w;
}

WhatIf larger_micro_batch(const CostModel& model, int64_t gpus, const Estimate& best) {
  const Layout& current = best.layout;
  const int64_t per_dp = model.training().global_batch / std::max<int64_t>(current.dp, 1);
  for (int64_t mbs = current.mbs + 1; mbs <= per_dp; ++mbs) {
    if (per_dp % mbs != 0) continue;
    Layout layout = current;
    layout.mbs = mbs;
    return evaluate_variant(model, model.cluster(), gpus, layout, "next-larger micro-batch",
                            fmt::format("mbs {} -> {}", current.mbs, mbs));
  }
  return WhatIf{"next-larger micro-batch", "-", std::nullopt,
                fmt::format("none: mbs {} already takes the whole per-replica batch", current.mbs)};
}

WhatIf less_recompute(const CostModel& model, int64_t gpus, const Estimate& best) {
  Layout layout = best.layout;
  std::string change;
  if (layout.recompute_layers > 0) {
    change = fmt::format("recompute_layers {} -> 0",
                         find_layout_field("recompute_layers")->print(layout));
    layout.recompute_layers = 0;
    layout.recompute_stage_layers.clear();
  } else if (layout.recompute == Recompute::full) {
    change = "recompute full -> selective";
    layout.recompute = Recompute::selective;
  } else if (layout.recompute == Recompute::selective) {
    change = "recompute selective -> none";
    layout.recompute = Recompute::none;
  } else {
    return WhatIf{"one recompute level less", "-", std::nullopt,
                  "none: the layout recomputes nothing"};
  }
  return evaluate_variant(model, model.cluster(), gpus, layout, "one recompute level less", change);
}

std::vector<LauncherConfig> launcher_configs(const CostModel& model, const Layout& layout) {
  std::vector<LauncherConfig> out;
  for (const std::string& name : launcher_names()) {
    const Launcher launcher = *parse_launcher(name);
    if (launcher == Launcher::torchtitan_toml) continue;  // torchtitan's options again, as TOML
    Result<std::string> r =
        export_launcher(launcher, model.model(), model.training(), layout, model.options().job());
    if (r)
      out.push_back({launcher, r.value(), {}});
    else
      out.push_back({launcher, std::nullopt, r.errors()});
  }
  return out;
}

}  // namespace

std::vector<WhatIf> what_ifs(const CostModel& model, int64_t gpus, const Estimate& best) {
  return {scaled_gpus(model, gpus, best, 1, 2), scaled_gpus(model, gpus, best, 2, 1),
          larger_micro_batch(model, gpus, best), less_recompute(model, gpus, best)};
}

Result<ReportData> build_report(const CostModel& base, int64_t gpus, const ReportRequest& request) {
  CostModel model(base);
  ReportData d{base.model(),
               base.cluster(),
               base.training(),
               base.profile(),
               base.options(),
               gpus,
               0,
               request,
               {},
               {},
               std::nullopt,
               {},
               {},
               std::nullopt,
               std::nullopt};
  SearchOptions o;
  o.top_k = std::max(request.top_k, request.sample);
  o.threads = request.threads;
  o.objective = request.objective;
  o.launcher = request.launcher;
  d.params_total = total_params(base.model());
  d.search = search_layouts(model, gpus, o);
  if (auto error = check_search_size(d.search, "report")) return *error;
  d.search.wall_s = 0;  // a timing: never part of a report
  d.sample = d.search.ranked;
  if (d.search.ranked.size() > static_cast<size_t>(request.top_k))
    d.search.ranked.resize(request.top_k);
  if (request.sweep) {
    SweepRequest sweep = *request.sweep;
    sweep.search.threads = request.threads;
    Result<SweepResult> swept = run_sweep(base, sweep);
    if (!swept) return swept.errors();
    d.sweep = std::move(swept).value();
  }
  if (d.search.ranked.empty()) return d;
  std::vector<Diagnostic> errors =
      rerank_by_simulation(model, d.search, request.top_k, request.objective);
  if (!errors.empty()) return errors;
  const Estimate& best = d.search.ranked.front();
  Result<sim::PipelineSimulation> s = simulate_layout(model, best.layout);
  if (!s) return s.errors();
  d.best_simulation = std::move(s).value();
  d.what_ifs = what_ifs(model, gpus, best);
  d.launchers = launcher_configs(model, best.layout);
  d.best_ops = layer_ops_report(model, best.layout);
  return d;
}

}  // namespace meshplan
