// Chrome Trace Event JSON of a simulated timeline (loads in Perfetto and chrome://tracing).
// Format: "Trace Event Format", Google,
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
#pragma once

#include <ostream>
#include <string>

#include "simulator/event_engine.h"
#include "simulator/operation_graph.h"

namespace meshplan::sim {

// {"traceEvents":[...]}: first "M" events naming each process ("stage N", pid = stage) and
// each stream that has operations (thread_name, tid = stream id), then one "X" event per
// operation in id order with name, ph, ts and dur in microseconds, pid, tid and args (kind,
// chunk, micro_batch when set, op id). Deterministic bytes for a given graph and timeline.
// REQUIRES: `timeline` = simulate(graph).
std::string chrome_trace_json(const OperationGraph& graph, const Timeline& timeline);
// The same bytes, written to `out` event by event as they are produced (no whole-trace buffer):
// what `simulate --trace` writes to its file.
void write_chrome_trace(std::ostream& out, const OperationGraph& graph, const Timeline& timeline);

}  // namespace meshplan::sim
