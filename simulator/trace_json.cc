#include "simulator/trace_json.h"

#include <nlohmann/json.hpp>
#include <set>

#include "core/units.h"

namespace meshplan::sim {
namespace {

using Json = nlohmann::ordered_json;

// Every event carries `cat` (DevTools-based parsers, e.g. Chrome's own trace importer, index
// events by it and fail without it): "__metadata" as Chrome writes for M events; for operations
// "compute,<kind>" or "comm,<kind>", so a viewer can filter by either.
Json metadata(const char* what, int pid, int tid, const std::string& name) {
  return Json{{"name", what}, {"cat", "__metadata"}, {"ph", "M"},
              {"pid", pid},   {"tid", tid},          {"args", {{"name", name}}}};
}

std::string category(OpKind kind) {
  switch (kind) {
    case OpKind::p2p:
    case OpKind::dp_comm:
    case OpKind::zero_gather:
      return std::string("comm,") + to_string(kind);
    case OpKind::other:
      return to_string(kind);
    default:
      return std::string("compute,") + to_string(kind);
  }
}

Json op_event(const OperationGraph& g, const Timeline& t, OpId id) {
  const Operation& op = g.op(id);
  const double ts = t.start_s[id] * units::kMicrosecondsPerSecond;
  // dur from the scaled end, so that ts + dur of one event meets ts of the next on a stream.
  const double dur = t.end_s[id] * units::kMicrosecondsPerSecond - ts;
  Json args{{"kind", to_string(op.tags.kind)}, {"op", id}};
  if (op.tags.chunk >= 0) args["chunk"] = op.tags.chunk;
  if (op.tags.micro_batch >= 0) args["micro_batch"] = op.tags.micro_batch;
  return Json{{"name", display_name(op)},
              {"cat", category(op.tags.kind)},
              {"ph", "X"},
              {"ts", ts},
              {"dur", dur < 0 ? 0.0 : dur},
              {"pid", g.stream(op.stream).stage},
              {"tid", op.stream},
              {"args", std::move(args)}};
}

}  // namespace

std::string chrome_trace_json(const OperationGraph& graph, const Timeline& timeline) {
  Json events = Json::array();
  std::set<int> stages;
  std::vector<bool> used(graph.stream_count(), false);
  for (const Operation& op : graph.ops()) used[op.stream] = true;
  for (StreamId s = 0; s < graph.stream_count(); ++s)
    if (used[s]) stages.insert(graph.stream(s).stage);
  for (int stage : stages)
    events.push_back(metadata("process_name", stage, 0, "stage " + std::to_string(stage)));
  for (StreamId s = 0; s < graph.stream_count(); ++s)
    if (used[s])
      events.push_back(metadata("thread_name", graph.stream(s).stage, s, graph.stream(s).name));
  for (OpId id = 0; id < graph.op_count(); ++id) events.push_back(op_event(graph, timeline, id));
  return Json{{"traceEvents", std::move(events)}}.dump();
}

}  // namespace meshplan::sim
