// A compact text Gantt chart of the compute streams: one row per stage, fixed width.
#pragma once

#include <string>

#include "simulator/event_engine.h"
#include "simulator/operation_graph.h"

namespace meshplan::sim {

// One header line, then one row per stage: "stage  0 |FFFFBB..BBW|". Each of `width` columns
// covers step/width of time and shows the compute kind that fills most of it (F forward,
// B backward, W weight gradient, R recompute, O optimizer), or '.' when the stage's compute
// stream is idle for at least half of it. Ties go to the earlier letter in that list.
// REQUIRES: `timeline` = simulate(graph); width >= 1; stages >= every stream's stage + 1.
std::string text_gantt(const OperationGraph& graph, const Timeline& timeline, int stages,
                       int width = 100);

}  // namespace meshplan::sim
