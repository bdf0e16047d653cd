// The numbers a simulated step yields: step time, bubble, busy split, activation memory
// in flight and the critical path. Plain data; rendering lives elsewhere (STYLE.md rule 7).
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/event_engine.h"
#include "simulator/operation_graph.h"

namespace meshplan::sim {

// Time of one stage's compute stream over [0, step]. compute_s + exposed_comm_s + idle_s =
// step_s.
struct StageSummary {
  int stage = 0;
  double compute_s = 0;    // forward, backward, W, recompute and optimizer operations
  double recompute_s = 0;  // part of compute_s
  // Idle compute time spent waiting on communication: within each gap before a compute
  // operation whose start was caused by a communication operation (a receive, a gradient
  // reduction, a ZeRO-3 gather), the part that overlaps that operation.
  double exposed_comm_s = 0;
  double idle_s = 0;           // the rest: the pipeline bubble, including the tail after the
                               // stage's last operation
  double bubble_fraction = 0;  // idle_s / step_s
  double end_s = 0;            // when the stage's last compute operation ends
  // Activations held: a (chunk, micro-batch) is held from its forward's start to its backward's
  // (B's) end; releases at an instant count before acquisitions at that instant.
  int peak_chunk_micro_batches = 0;  // peak count of held (chunk, micro-batch) pairs
  double peak_micro_batches = 0;     // the same in micro-batches: pairs / vpp
};

struct SimulationResult {
  double step_s = 0;           // last operation's end
  double bubble_fraction = 0;  // mean of the stages' bubble_fraction
  std::vector<StageSummary> stages;
  std::vector<OpId> critical_path;  // first to last; see critical_path() in event_engine.h
  int64_t ops = 0;
  int64_t events = 0;
};

// REQUIRES: `timeline` = simulate(graph); `stages` >= every stream's stage + 1; vpp >= 1.
// A stream is a compute stream when it carries compute-kind operations.
SimulationResult summarize(const OperationGraph& graph, const Timeline& timeline, int stages,
                           int vpp);

}  // namespace meshplan::sim
