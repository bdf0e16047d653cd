#include "serving/replay_trace.h"

#include <fmt/format.h>

#include "simulator/event_engine.h"
#include "simulator/operation_graph.h"
#include "simulator/trace_json.h"

namespace meshplan::serving {

Result<std::string> replay_trace_json(const ReplayResult& replay) {
  sim::OperationGraph graph;
  const sim::StreamId engine = graph.add_stream("replica 0 engine steps", 0);
  double clock_s = 0;
  sim::OpId previous = -1;
  auto chain = [&](double duration_s, sim::OpKind kind, std::string name) {
    const sim::OpId id = graph.add_op(engine, duration_s, sim::OpTags{kind, 0, -1, -1}, name);
    if (previous >= 0) graph.add_dependency(id, previous);
    previous = id;
    clock_s += duration_s;
  };
  for (const ReplayStep& s : replay.recorded) {
    if (s.start_s > clock_s) chain(s.start_s - clock_s, sim::OpKind::other, "idle");
    chain(s.duration_s, sim::OpKind::forward,
          fmt::format("{} decodes + {} prompt tokens ({} chunks)", s.decodes, s.prefill_tokens,
                      s.chunks));
  }
  Result<sim::Timeline> timeline = sim::simulate(graph);
  if (!timeline) return timeline.errors();
  return sim::chrome_trace_json(graph, timeline.value());
}

}  // namespace meshplan::serving
