// Deterministic discrete-event engine over an OperationGraph.
//
// Events are operation completions, kept in a binary heap ordered by (time, sequence number):
// equal-time events fire in the order they were scheduled, so a run is a pure function of the
// graph. Time never goes backwards (asserted). Each stream runs one operation at a time, in
// the order operations were added to it (like a CUDA stream); an operation starts at the
// first instant when its stream has finished its predecessor and all its dependencies have
// finished. (The same shape as astra-sim's event queue.)
#pragma once

#include <cstdint>
#include <vector>

#include "core/result.h"
#include "simulator/operation_graph.h"

namespace meshplan::sim {

// When each operation ran. Indexed by OpId.
struct Timeline {
  std::vector<double> start_s;
  std::vector<double> end_s;
  // The operation whose completion let this one start (its last-finishing dependency or its
  // stream predecessor, whichever finished last); -1 for operations that started at time 0
  // with nothing to wait for. Following it from the last operation gives the critical path.
  std::vector<OpId> cause;
  double makespan_s = 0;  // latest end_s (0 for an empty graph)
  int64_t events = 0;     // events processed (one completion per operation)
};

// Runs every operation of `graph`.
// Errors: when some operations can never start (a dependency cycle, or a dependency that
// contradicts a stream's order), a diagnostic naming the first stuck operation.
Result<Timeline> simulate(const OperationGraph& graph);

// The chain of operations, first to last, that determined `timeline.makespan_s`: starting from
// the operation that ends last (the lowest id among equals), each step goes to its `cause`.
// Empty for an empty graph.
std::vector<OpId> critical_path(const Timeline& timeline);

}  // namespace meshplan::sim
