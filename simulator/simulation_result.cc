#include "simulator/simulation_result.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace meshplan::sim {
namespace {

// Compute operations of each stage, by start time (ties: id).
std::vector<std::vector<OpId>> compute_ops_by_stage(const OperationGraph& g, const Timeline& t,
                                                    int stages) {
  std::vector<std::vector<OpId>> out(stages);
  for (OpId i = 0; i < g.op_count(); ++i) {
    if (!is_compute(g.op(i).tags.kind)) continue;
    const int s = g.stream(g.op(i).stream).stage;
    assert(s >= 0 && s < stages);
    out[s].push_back(i);
  }
  for (std::vector<OpId>& ops : out)
    std::stable_sort(ops.begin(), ops.end(),
                     [&](OpId a, OpId b) { return t.start_s[a] < t.start_s[b]; });
  return out;
}

void add_busy_split(const OperationGraph& g, const Timeline& t, const std::vector<OpId>& ops,
                    StageSummary& s) {
  double prev_end = 0;
  for (OpId op : ops) {
    const double start = t.start_s[op];
    const OpId cause = t.cause[op];
    if (start > prev_end && cause >= 0 && !is_compute(g.op(cause).tags.kind))
      s.exposed_comm_s += std::max(0.0, start - std::max(prev_end, t.start_s[cause]));
    const double dur = t.end_s[op] - start;
    s.compute_s += dur;
    if (g.op(op).tags.kind == OpKind::recompute) s.recompute_s += dur;
    prev_end = std::max(prev_end, t.end_s[op]);
  }
  s.end_s = prev_end;
}

// Peak of held (chunk, micro-batch) pairs: +1 at a forward's start, -1 at a backward's end.
int peak_held(const OperationGraph& g, const Timeline& t, const std::vector<OpId>& ops) {
  std::vector<std::pair<double, int>> deltas;  // (time, -1 release | +1 acquire)
  for (OpId op : ops) {
    const OpKind k = g.op(op).tags.kind;
    if (k == OpKind::forward) deltas.emplace_back(t.start_s[op], +1);
    if (k == OpKind::backward || k == OpKind::backward_input) deltas.emplace_back(t.end_s[op], -1);
  }
  std::sort(deltas.begin(), deltas.end());
  int held = 0, peak = 0;
  for (const auto& d : deltas) peak = std::max(peak, held += d.second);
  return peak;
}

}  // namespace

SimulationResult summarize(const OperationGraph& graph, const Timeline& timeline, int stages,
                           int vpp) {
  assert(vpp >= 1);
  SimulationResult r;
  r.step_s = timeline.makespan_s;
  r.ops = graph.op_count();
  r.events = timeline.events;
  r.critical_path = critical_path(timeline);
  const std::vector<std::vector<OpId>> by_stage = compute_ops_by_stage(graph, timeline, stages);
  for (int st = 0; st < stages; ++st) {
    StageSummary s;
    s.stage = st;
    add_busy_split(graph, timeline, by_stage[st], s);
    s.idle_s = std::max(0.0, r.step_s - s.compute_s - s.exposed_comm_s);
    s.bubble_fraction = r.step_s > 0 ? s.idle_s / r.step_s : 0;
    s.peak_chunk_micro_batches = peak_held(graph, timeline, by_stage[st]);
    s.peak_micro_batches = static_cast<double>(s.peak_chunk_micro_batches) / vpp;
    r.bubble_fraction += s.bubble_fraction / stages;
    r.stages.push_back(s);
  }
  return r;
}

}  // namespace meshplan::sim
