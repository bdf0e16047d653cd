#include "simulator/simulator_bench.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <limits>
#include <sstream>

#include "simulator/pipeline_simulation.h"
#include "simulator/trace_json.h"

namespace meshplan::sim {
namespace {

// Illustrative per-layer costs of a 405B-class layer at tp = 8, one 8K-token micro-batch on
// H100s (about 20 ms forward); only their unevenness matters for the benchmark.
constexpr double kLayerForwardS = 20e-3;
constexpr double kEmbeddingForwardS = 2e-3;
constexpr double kLogitsForwardS = 25e-3;

PipelineProblem benchmark_problem() {
  PipelineProblem p;
  p.pp = 16;
  p.vpp = 8;
  p.micro_batches = 128;
  p.schedule = Schedule::interleaved;
  p.p2p_s = 0.4e-3;
  p.optimizer_s = 15e-3;
  const std::vector<int64_t> layers = chunk_layers(126, p.pp, p.vpp);
  for (size_t c = 0; c < layers.size(); ++c) {
    double f = static_cast<double>(layers[c]) * kLayerForwardS;
    if (c == 0) f += kEmbeddingForwardS;
    if (c + 1 == layers.size()) f += kLogitsForwardS;
    p.chunks.push_back(ChunkCosts{f, f, f, 0, 0.3 * f, 0});
  }
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

SimBenchResult run_simulator_benchmark(int repetitions) {
  assert(repetitions >= 1);
  const PipelineProblem problem = benchmark_problem();
  SimBenchResult r;
  r.repetitions = repetitions;
  r.build_s = r.simulate_s = r.summarize_s = r.total_s = r.trace_s =
      std::numeric_limits<double>::infinity();
  for (int rep = -1; rep < repetitions; ++rep) {  // rep -1: warm-up
    const auto t0 = std::chrono::steady_clock::now();
    Result<PipelineGraph> built = build_pipeline_graph(problem);
    assert(built.ok());
    const double build = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    Result<Timeline> timeline = simulate(built->graph);
    assert(timeline.ok());
    const double sim = seconds_since(t1);
    const auto t2 = std::chrono::steady_clock::now();
    const SimulationResult summary =
        summarize(built->graph, *timeline, problem.pp,
                  static_cast<int>(built->order.placement.stage_chunks[0].size()));
    const double sum = seconds_since(t2);
    const auto t3 = std::chrono::steady_clock::now();
    std::ostringstream trace;
    write_chrome_trace(trace, built->graph, *timeline);
    const double traced = seconds_since(t3);
    if (rep < 0) continue;
    r.trace_s = std::min(r.trace_s, traced);
    r.trace_bytes = static_cast<int64_t>(trace.tellp());
    r.build_s = std::min(r.build_s, build);
    r.simulate_s = std::min(r.simulate_s, sim);
    r.summarize_s = std::min(r.summarize_s, sum);
    r.total_s = std::min(r.total_s, build + sim + sum);
    r.ops = built->graph.op_count();
    r.dependencies = static_cast<int64_t>(built->graph.dependencies().size());
    r.events = timeline->events;
    r.step_s = summary.step_s;
  }
  r.events_per_s = r.simulate_s > 0 ? static_cast<double>(r.events) / r.simulate_s : 0;
  return r;
}

}  // namespace meshplan::sim
