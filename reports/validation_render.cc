#include "reports/validation_render.h"

#include <fmt/format.h>

#include "reports/text_format.h"

namespace meshplan {
namespace {

std::vector<std::vector<std::string>> run_rows(const ValidationReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const ValidationRow& row : r.rows) {
    rows.push_back({row.id, fmt::format("{:.1f}", row.measured), fmt::format("{:.1f}", row.predicted),
                    fmt::format("{:+.1f}%", 100 * row.relative_error),
                    row.searched.empty() ? "-" : row.searched, row.fits ? "" : "does not fit"});
  }
  return rows;
}

std::vector<std::vector<std::string>> summary_rows(const ValidationReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const ErrorSummary& s : r.summaries) {
    rows.push_back({s.name, std::to_string(s.runs), fmt::format("{:.1f}%", 100 * s.mean_abs),
                    fmt::format("{:.1f}%", 100 * s.median_abs), fmt::format("{:.1f}%", 100 * s.max_abs)});
  }
  return rows;
}

const std::vector<std::string> kRunHeader = {"run", "measured TFLOP/s", "predicted", "error",
                                             "searched (not published)", "note"};
const std::vector<std::string> kSummaryHeader = {"source", "runs", "mean |error|", "median",
                                                 "max"};

}  // namespace

std::string validation_table(const ValidationReport& r) {
  std::string out = text_table(kRunHeader, run_rows(r));
  out += '\n';
  out += text_table(kSummaryHeader, summary_rows(r));
  return out;
}

std::string validation_markdown(const ValidationReport& r) {
  std::string out = markdown_table(kRunHeader, run_rows(r));
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
