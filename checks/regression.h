// Prediction regression (`meshplan regress`, DESIGN.md §5): evaluate a scenario set, compare
// the predictions with a baseline, and say which moved. Compute only; reports/
// regression_render.h turns a RegressionReport into Markdown or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checks/regression_scenario.h"
#include "core/result.h"

namespace meshplan {

// What a baseline pins for one scenario, at the precision it is written with (so that a
// freshly written baseline compares exactly equal to the run that wrote it).
struct RegressionRecord {
  std::string layout;      // to_string(Layout), every field; "none" when no layout is valid
  bool fits = false;       // peak memory within the GPU's capacity
  double step_time_s = 0;  // 6 significant digits; 0 when the search found nothing that fits
  double mfu_percent = 0;  // model FLOPs utilisation in percent, 3 decimals; 0 likewise
  double peak_gib = 0;     // peak memory per GPU in GiB (2^30 bytes), 3 decimals
};

// The baseline's text for each number; quantize() parses these back, so a record survives a
// write and a read unchanged.
std::string step_time_text(double seconds);  // "{:.6g}"
std::string percent_text(double percent);    // "{:.3f}"
std::string gib_text(double gib);            // "{:.3f}"
RegressionRecord quantize(RegressionRecord r);

struct NamedRecord {
  std::string name;
  RegressionRecord record;
};
using RegressionRecords = std::vector<NamedRecord>;  // in scenario (or baseline file) order

// Evaluates every scenario: a fixed layout with the cost model, `best` with the exhaustive
// search (objective MFU, `threads` workers; the result does not depend on `threads`). When the
// search finds nothing that fits, records the smallest-memory layout with fits = false.
// Input errors of every scenario (missing fields in a model, a layout that does not divide
// the cluster, ...) are returned together, positioned in their files.
// REQUIRES: threads >= 1.
Result<RegressionRecords> evaluate_scenarios(const std::vector<RegressionScenario>& scenarios,
                                             int threads);

// One scenario's comparison. A scenario present on one side only fails: the baseline must be
// regenerated in the same change that adds or removes scenarios.
struct ScenarioComparison {
  std::string name;
  std::optional<RegressionRecord> baseline, now;  // absent: not in that side
  double mfu_change_pp = 0;                       // now − baseline, percentage points
  bool mfu_moved = false;                         // |mfu change| > tolerance
  bool layout_changed = false;                    // chosen (or written) layout differs
  bool no_longer_fits = false;                    // fitted in the baseline, does not now
  bool failed() const { return mfu_moved || layout_changed || no_longer_fits || !baseline || !now; }
  // Any recorded number or the layout differs at all (what --update reports as changed).
  bool changed() const;
};

struct RegressionReport {
  double tolerance_pp = 0.5;
  std::vector<ScenarioComparison> rows;  // scenario order, then baseline-only entries
  int64_t failures() const;
  int64_t changes() const;
  bool passed() const { return failures() == 0; }
};

// Compares `now` with `baseline`. A change of exactly the tolerance passes.
// REQUIRES: tolerance_pp >= 0; names unique on each side.
RegressionReport compare_to_baseline(const RegressionRecords& now,
                                     const RegressionRecords& baseline, double tolerance_pp);

}  // namespace meshplan
