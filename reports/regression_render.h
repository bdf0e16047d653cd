// Renderings of a prediction-regression report (`meshplan regress`): a Markdown table for CI
// logs and pull-request comments, and JSON for machines. Pure functions of the report: the
// same report gives the same bytes (no times, no paths).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "checks/regression.h"

namespace meshplan {

// Check: every row's status is pass/fail. Update: the baseline was just rewritten from the
// current predictions, and each row says what changed relative to the old one.
enum class RegressMode { check, update };

// A heading, one table row per scenario (scenario, baseline MFU, now, change, step time,
// peak memory, status), the layout changes spelled out below it, and a one-line summary.
std::string regress_markdown(const RegressionReport& r, RegressMode mode);

// {mode, tolerance_pp, passed, failures, changes, scenarios: [{name, status, reasons[],
// mfu_change_pp, baseline: record|null, now: record|null}]}; a record is {layout, fits,
// step_time_s, mfu_percent, peak_gib}. `status` is ok|fail (check) or
// unchanged|changed|added|removed (update); `reasons` lists mfu_moved, layout_changed,
// no_longer_fits, not_in_baseline, not_in_scenarios.
nlohmann::ordered_json regress_json(const RegressionReport& r, RegressMode mode);

}  // namespace meshplan
