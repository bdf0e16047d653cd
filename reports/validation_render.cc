#include "reports/validation_render.h"

#include <fmt/format.h>

#include "reports/text_format.h"

namespace meshplan {
namespace {

std::vector<std::vector<std::string>> run_rows(const ValidationReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const ValidationRow& row : r.rows) {
    rows.push_back({row.id, fmt::format("{:.1f}", row.measured),
                    fmt::format("{:.1f}", row.predicted),
                    fmt::format("{:+.1f}%", 100 * row.relative_error),
                    row.searched.empty() ? "-" : row.searched, row.fits ? "" : "does not fit"});
  }
  return rows;
}

// Short unit of a metric, and its values printed at a precision that metric is published with.
std::string metric_unit(const std::string& metric) {
  if (metric == kMetricStepTime) return "s/step";
  if (metric == kMetricTokens) return "tokens/s/GPU";
  if (metric == kMetricModelTflops) return "model TFLOP/s (Megatron)";
  if (metric == kMetricModelTflopsCausal) return "model TFLOP/s (Megatron, causal)";
  return "hardware TFLOP/s (eq. 3)";
}

std::string metric_value(const std::string& metric, double v) {
  if (metric == kMetricStepTime) return fmt::format("{:.2f}", v);
  if (metric == kMetricTokens) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

// Every row compares hardware TFLOP/s: the 2021 table's layout (kept byte-stable).
bool only_hardware_tflops(const ValidationReport& r) {
  for (const ValidationRow& row : r.rows)
    if (row.metric != kMetricHardwareTflops) return false;
  return true;
}

// Mixed metrics: each row names its metric and framework, and whether it fits.
std::vector<std::vector<std::string>> mixed_run_rows(const ValidationReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const ValidationRow& row : r.rows) {
    rows.push_back(
        {row.id, row.framework, metric_unit(row.metric), metric_value(row.metric, row.measured),
         metric_value(row.metric, row.predicted), fmt::format("{:+.1f}%", 100 * row.relative_error),
         row.fits ? "yes" : "NO (does not fit)", row.searched.empty() ? "-" : row.searched});
  }
  return rows;
}

const std::vector<std::string> kMixedRunHeader = {
    "run",       "framework", "metric", "measured",
    "predicted", "error",     "fits",   "searched (not published)"};

std::string not_fitting_line(const ValidationReport& r) {
  int64_t n = 0;
  for (const ValidationRow& row : r.rows) n += row.fits ? 0 : 1;
  return fmt::format("{} of {} runs predicted not to fit in GPU memory{}\n", n, r.rows.size(),
                     n ? " (marked NO above; every published run ran)" : "");
}

std::vector<std::vector<std::string>> summary_rows(const ValidationReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const ErrorSummary& s : r.summaries) {
    rows.push_back({s.name, std::to_string(s.runs), fmt::format("{:.1f}%", 100 * s.mean_abs),
                    fmt::format("{:.1f}%", 100 * s.median_abs),
                    fmt::format("{:.1f}%", 100 * s.max_abs)});
  }
  return rows;
}

const std::vector<std::string> kRunHeader = {"run",   "measured TFLOP/s",         "predicted",
                                             "error", "searched (not published)", "note"};
const std::vector<std::string> kSummaryHeader = {"source", "runs", "mean |error|", "median", "max"};

}  // namespace

std::string validation_table(const ValidationReport& r) {
  const bool legacy = only_hardware_tflops(r);
  std::string out =
      legacy ? text_table(kRunHeader, run_rows(r)) : text_table(kMixedRunHeader, mixed_run_rows(r));
  if (!legacy) out += not_fitting_line(r);
  out += '\n';
  out += text_table(kSummaryHeader, summary_rows(r));
  return out;
}

std::string validation_markdown(const ValidationReport& r) {
  const bool legacy = only_hardware_tflops(r);
  std::string out = legacy ? markdown_table(kRunHeader, run_rows(r))
                           : markdown_table(kMixedRunHeader, mixed_run_rows(r));
  if (!legacy) out += '\n' + not_fitting_line(r);
  out += '\n';
  out += markdown_table(kSummaryHeader, summary_rows(r));
  return out;
}

nlohmann::ordered_json validation_json(const ValidationReport& r) {
  nlohmann::ordered_json j;
  j["runs"] = nlohmann::ordered_json::array();
  for (const ValidationRow& row : r.rows) {
    j["runs"].push_back({{"id", row.id},
                         {"source", row.source},
                         {"table", row.table},
                         {"framework", row.framework},
                         {"metric", row.metric},
                         {"measured", row.measured},
                         {"predicted", row.predicted},
                         {"relative_error", row.relative_error},
                         {"layout", row.layout},
                         {"searched", row.searched},
                         {"fits", row.fits}});
  }
  j["summaries"] = nlohmann::ordered_json::array();
  for (const ErrorSummary& s : r.summaries) {
    j["summaries"].push_back({{"name", s.name},
                              {"runs", s.runs},
                              {"mean_abs_relative_error", s.mean_abs},
                              {"median_abs_relative_error", s.median_abs},
                              {"max_abs_relative_error", s.max_abs}});
  }
  return j;
}

}  // namespace meshplan
