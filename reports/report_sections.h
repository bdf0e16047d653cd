// The Markdown sections of a plan report (markdown_report.h puts them together). Each returns
// its heading and body, ending with a blank line.
#pragma once

#include <string>
#include <vector>

#include "planner/calibration.h"
#include "reports/report_data.h"

namespace meshplan {

std::string inputs_section(const ReportData& d);  // model, cluster, training, profile
std::string search_section(const ReportData& d);  // evaluated, feasible, rejections
std::string top_section(const ReportData& d);     // the top-K table
std::string best_section(const ReportData& d);    // memory, time, timeline of the best
std::string what_if_section(const ReportData& d);
std::string launcher_section(const ReportData& d);
std::string assumptions_section(const ReportData& d);

// Every documented default and calibrated value the estimate used, one line each; calibrated
// values say where they came from (measured, published, imported, or default: its source).
std::vector<std::string> report_assumptions(const CostOptions& o, const CalibrationProfile& p,
                                            const ResolvedCalibration& calibration);

}  // namespace meshplan
