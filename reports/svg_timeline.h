// The simulated pipeline timeline as SVG: one row per stage, compute (forward, backward, weight
// gradient, recompute, optimizer) on the row, communication (sends, gradient reduction, ZeRO-3
// gathers) in a thin lane under it, idle time as the light background.
//
// Size stays bounded for any step graph: each lane is sampled into `columns` time columns; a
// column shows the share of each kind in it (in eighths, stacked), and runs of columns with
// the same shares merge into one rectangle per kind. So a lane has at most `columns` × kinds
// rectangles, whatever the number of operations.
#pragma once

#include <string>

#include "simulator/event_engine.h"
#include "simulator/operation_graph.h"

namespace meshplan::svg {

// REQUIRES: timeline = sim::simulate(graph); stages >= every stream's stage + 1; columns >= 1.
std::string pipeline_timeline_chart(const sim::OperationGraph& graph, const sim::Timeline& timeline,
                                    int stages, const std::string& title, int columns = 400);

}  // namespace meshplan::svg
