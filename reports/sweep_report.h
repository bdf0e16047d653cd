// The sweep report (`meshplan sweep --format md --out DIR`): sweep.md with the table and the
// charts it links, as named files; and the same section for `meshplan report --sweep`. Pure:
// the caller writes the files. Deterministic: no timings.
#pragma once

#include <string>
#include <vector>

#include "planner/scale_sweep.h"
#include "reports/report_file.h"

namespace meshplan {

// The charts: <prefix>throughput.svg, <prefix>mfu.svg and, with a token budget,
// <prefix>time_to_train.svg.
std::vector<ReportFile> sweep_chart_files(const SweepResult& s, const SweepRequest& request,
                                          const std::string& prefix);

// The sweep as Markdown: heading lines, the table, its notes, and links to the charts of
// sweep_chart_files(s, request, prefix).
std::string sweep_section(const SweepResult& s, const SweepRequest& request,
                          const std::string& prefix);

// sweep.md first, then its charts (prefix "").
std::vector<ReportFile> render_sweep_report(const SweepResult& s, const SweepRequest& request);

}  // namespace meshplan
