// The regression baseline file (`meshplan regress --baseline`): one entry per scenario, in
// scenario order, numbers at fixed precision so the file is byte-stable:
//
//   # header comment
//   version: 1
//   scenarios:
//     llama3-8b-h100-1n:
//       layout: "tp=1,pp=1,dp=8,..."
//       fits: true
//       step_time_s: 4.12345
//       mfu_percent: 45.123
//       peak_gib: 67.891
#pragma once

#include <string>

#include "checks/regression.h"
#include "core/result.h"

namespace meshplan {

constexpr int kBaselineVersion = 1;

// Reads a baseline. A missing file, malformed YAML, an unknown or missing field, a wrong
// version or a repeated scenario are errors (positioned diagnostics), never an empty baseline.
Result<RegressionRecords> load_baseline(const std::string& path);
Result<RegressionRecords> parse_baseline(const std::string& text, const std::string& file);

// The file's text for `records` (quantized first). parse_baseline(baseline_yaml(r)) == r
// after quantize.
std::string baseline_yaml(const RegressionRecords& records);

}  // namespace meshplan
