// The plan report (issue 6): report.md and the SVG charts it links, as named files. Pure: the
// caller writes them. Deterministic: no timestamps, timings or paths beyond the file names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/report_data.h"
#include "reports/report_file.h"

namespace meshplan {

// report.md first, then the charts it links (none when nothing fits); with a sweep, its
// section ("## Scale") and its charts (sweep_*.svg).
std::vector<ReportFile> render_report(const ReportData& d);

}  // namespace meshplan
