#include "checks/regression.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <map>

#include "core/cluster_spec.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "core/units.h"
#include "planner/cost_model.h"
#include "planner/framework_preset.h"
#include "planner/layout_search.h"
#include "planner/scenario.h"

namespace meshplan {
namespace {

// Slack for comparing numbers that went through decimal text: far below the 0.001 printed.
constexpr double kCompareSlack = 1e-9;

Result<Scenario> load(const RegressionScenario& entry) {
  ScenarioRequest request;
  request.model_path = entry.model_path;
  request.cluster_path = entry.cluster_path;
  request.seq_len = entry.seq_len;
  request.global_batch = entry.global_batch;
  request.gpus = entry.gpus;
  request.gpus_where = entry.where;
  request.gpus_field = entry.path + ".gpus";
  request.with_profile = true;
  request.profile_path = entry.profile_path;
  return load_scenario(request);
}

// CostOptions{} with the scenario's framework preset (checked when the file was loaded).
CostOptions cost_options(const RegressionScenario& entry) {
  CostOptions o;
  Result<FrameworkPreset> f = find_framework(entry.framework);
  assert(f.ok());
  apply_framework(f.value(), o);
  return o;
}

RegressionRecord record_of(const Estimate& e) {
  RegressionRecord r;
  r.layout = to_string(e.layout);
  r.fits = e.fits();
  r.step_time_s = e.step_time_s;
  r.mfu_percent = 100.0 * e.mfu;
  r.peak_gib = e.peak_bytes / units::kGiB;
  return quantize(r);
}

Result<RegressionRecord> evaluate_fixed(const RegressionScenario& entry, const Scenario& scenario) {
  Result<Layout> parsed = parse_layout(*entry.layout, entry.layout_where.file);
  if (!parsed)
    return relocate_layout_errors(parsed.errors(), entry.layout_where, entry.path + ".layout");
  Layout layout = parsed.value();
  std::vector<Diagnostic> errors = check_layout(layout, scenario.model, scenario.gpus,
                                                scenario.training, entry.layout_where.file);
  if (errors.empty())
    errors = check_layout_on_cluster(layout, scenario.cluster, entry.layout_where.file);
  if (!errors.empty())
    return relocate_layout_errors(errors, entry.layout_where, entry.path + ".layout");
  CostModel model(scenario.model, scenario.cluster, scenario.profile, scenario.training,
                  cost_options(entry));
  return record_of(model.evaluate(layout, /*detail=*/false));
}

Result<RegressionRecord> evaluate_best(const RegressionScenario& entry, const Scenario& scenario,
                                       int threads) {
  SearchOptions options;
  if (!entry.fix.empty()) {
    Result<LayoutFix> fix = parse_layout_fix(entry.fix);
    if (!fix) return relocate_layout_errors(fix.errors(), entry.fix_where, entry.path + ".fix");
    options.fix = fix.value();
  }
  options.objective = Objective::mfu;
  options.top_k = 1;
  options.threads = threads;
  CostModel model(scenario.model, scenario.cluster, scenario.profile, scenario.training,
                  cost_options(entry));
  SearchResult r = search_layouts(model, scenario.gpus, options);
  if (auto error = check_search_size(r, "regress")) {
    error->where = entry.where;  // the scenario, whose fix: would narrow the search
    error->field = entry.path;
    return *error;
  }
  if (!r.ranked.empty()) return record_of(r.ranked.front());
  RegressionRecord none;
  none.layout = "none";
  if (r.smallest) {  // nothing fits: pin the smallest layout and its memory, no timing
    none.layout = to_string(r.smallest->layout);
    none.peak_gib = r.smallest->peak_bytes / units::kGiB;
  }
  return quantize(none);
}

Result<RegressionRecord> evaluate_one(const RegressionScenario& entry, int threads) {
  Result<Scenario> scenario = load(entry);
  if (!scenario) return scenario.errors();
  return entry.layout ? evaluate_fixed(entry, scenario.value())
                      : evaluate_best(entry, scenario.value(), threads);
}

bool same(double a, double b) { return std::fabs(a - b) <= kCompareSlack; }

ScenarioComparison compare_one(const std::string& name, const RegressionRecord* now,
                               const RegressionRecord* base, double tolerance_pp) {
  ScenarioComparison c;
  c.name = name;
  if (now) c.now = *now;
  if (base) c.baseline = *base;
  if (!now || !base) return c;
  // Rounded to the printed precision, so "+0.000" never hides a failure or shows as "-0.000".
  c.mfu_change_pp = std::round((now->mfu_percent - base->mfu_percent) * 1000.0) / 1000.0 + 0.0;
  c.mfu_moved = std::fabs(c.mfu_change_pp) > tolerance_pp + kCompareSlack;
  c.layout_changed = now->layout != base->layout;
  c.no_longer_fits = base->fits && !now->fits;
  return c;
}

}  // namespace

std::string step_time_text(double seconds) { return fmt::format("{:.6g}", seconds); }
std::string percent_text(double percent) { return fmt::format("{:.3f}", percent); }
std::string gib_text(double gib) { return fmt::format("{:.3f}", gib); }

RegressionRecord quantize(RegressionRecord r) {
  r.step_time_s = std::stod(step_time_text(r.step_time_s));
  r.mfu_percent = std::stod(percent_text(r.mfu_percent));
  r.peak_gib = std::stod(gib_text(r.peak_gib));
  return r;
}

Result<RegressionRecords> evaluate_scenarios(const std::vector<RegressionScenario>& scenarios,
                                             int threads) {
  RegressionRecords out;
  std::vector<Diagnostic> errors;
  for (const RegressionScenario& entry : scenarios) {
    Result<RegressionRecord> r = evaluate_one(entry, threads);
    if (!r) {
      errors.insert(errors.end(), r.errors().begin(), r.errors().end());
      continue;
    }
    out.push_back({entry.name, r.value()});
  }
  if (!errors.empty()) return errors;
  return out;
}

bool ScenarioComparison::changed() const {
  if (!baseline || !now) return true;
  return baseline->layout != now->layout || baseline->fits != now->fits ||
         !same(baseline->step_time_s, now->step_time_s) ||
         !same(baseline->mfu_percent, now->mfu_percent) || !same(baseline->peak_gib, now->peak_gib);
}

int64_t RegressionReport::failures() const {
  int64_t n = 0;
  for (const auto& r : rows) n += r.failed() ? 1 : 0;
  return n;
}

int64_t RegressionReport::changes() const {
  int64_t n = 0;
  for (const auto& r : rows) n += r.changed() ? 1 : 0;
  return n;
}

RegressionReport compare_to_baseline(const RegressionRecords& now,
                                     const RegressionRecords& baseline, double tolerance_pp) {
  std::map<std::string, const RegressionRecord*> base_by_name, now_by_name;
  for (const auto& b : baseline) base_by_name[b.name] = &b.record;
  for (const auto& n : now) now_by_name[n.name] = &n.record;
  RegressionReport report;
  report.tolerance_pp = tolerance_pp;
  for (const auto& n : now) {
    auto it = base_by_name.find(n.name);
    const RegressionRecord* base = it == base_by_name.end() ? nullptr : it->second;
    report.rows.push_back(compare_one(n.name, &n.record, base, tolerance_pp));
  }
  for (const auto& b : baseline) {
    if (now_by_name.count(b.name) == 0) {
      report.rows.push_back(compare_one(b.name, nullptr, &b.record, tolerance_pp));
    }
  }
  return report;
}

}  // namespace meshplan
