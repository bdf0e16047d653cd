// Speed benchmark of the simulator (issue 4): one training step of a Llama 3 405B-like
// pipeline, pp = 16, vpp = 8, 128 micro-batches, 126 layers over 128 chunks (uneven: the first
// and last chunks hold fewer layers), interleaved 1F1B with sends, gradient reductions and the
// optimizer: about 65,000 operations. For `meshplan bench`; never prints.
#pragma once

#include <cstdint>

namespace meshplan::sim {

struct SimBenchResult {
  int64_t ops = 0;
  int64_t dependencies = 0;
  int64_t events = 0;
  int repetitions = 0;
  // Best (minimum) wall time over the repetitions, seconds, one thread.
  double build_s = 0;       // schedule + operation graph
  double simulate_s = 0;    // the event loop alone
  double summarize_s = 0;   // bubble, busy split, in-flight peaks, critical path
  double total_s = 0;       // the three together, as simulate_pipeline() spends them
  double events_per_s = 0;  // events / simulate_s
  double step_s = 0;        // the simulated step time (a checksum for the run)
  // The Chrome trace of the timeline (write_chrome_trace into memory): bytes and best time.
  int64_t trace_bytes = 0;
  double trace_s = 0;
};

// REQUIRES: repetitions >= 1. One untimed warm-up run precedes the timed ones.
SimBenchResult run_simulator_benchmark(int repetitions = 5);

}  // namespace meshplan::sim
