// The SVG charts of a plan report, from its ReportData. Pure functions.
#pragma once

#include <string>

#include "reports/report_data.h"

namespace meshplan {

// Memory per pipeline stage of `e` (GiB): params, grads, optimizer, activations, other; the
// GPU capacity as a line. REQUIRES: e was evaluated with detail.
std::string memory_chart(const Estimate& e);
// Step-time breakdown of `e` (ms), one bar per component.
std::string breakdown_chart(const Estimate& e);
// MFU (%) against peak memory (GiB) of the sampled feasible layouts, the chosen one marked.
std::string mfu_memory_chart(const ReportData& d);
// The simulated step of the best layout. REQUIRES: d.best_simulation.
std::string timeline_chart(const ReportData& d);

}  // namespace meshplan
