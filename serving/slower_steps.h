// How a plan fares if the engine is slower than the model predicts: the best layout replayed
// with every engine step and KV transfer a fraction longer. Predicted throughput misses measured
// runs by about 10% on average (README, `validate --serving`); near saturation that much moves
// latencies several-fold (the MLPerf Server rows of the development set), and a search that
// picks the fewest GPUs meeting the SLO picks a layout near its edge. This says whether the plan
// still meets the SLO with that margin.
#pragma once

#include <optional>

#include "serving/serving_plan.h"

namespace meshplan::serving {

// The default slowdown (--slowdown): 10%, about the mean |error| of predicted output tokens/s
// over the development set (tests/data/serving_runs.yaml: 10.6% over 36 rows on 2026-12-02;
// TensorRT-LLM's perf-overview tables 11.4% over 299).
constexpr double kDefaultSlowdown = 0.10;

struct SlowerSteps {
  double fraction = 0;  // every step and transfer this much longer (0.1: 10%)
  double output_tokens_per_s = 0;
  LatencyStats ttft_s, tpot_s;
  double slo_attainment = 1;
  bool meets_slo = true;
  bool overloaded = false;
  // Under an open loop: the most requests/s the slower engine sustains, where its replay asked
  // (ServingEstimate::saturation_requests_per_s; 0: not asked).
  double saturation_requests_per_s = 0;
};

// Whether a slowdown changes more than the units of `p`'s answer: under an open loop (a request
// rate, a trace's arrivals) queueing grows faster than the steps, and under an SLO the verdict
// may turn. Offline or at a concurrency without an SLO every time is simply longer.
bool slowdown_matters(const ServingProblem& p);

// REQUIRES: `e` evaluated on `p`; fraction > 0. `e`'s layout replayed with every engine step and
// KV transfer (1 + fraction)× as long; the serving front end's latency unchanged. Computed as
// the same replay in a time unit (1 + fraction)× longer: the load's arrivals (1 + fraction)×
// denser, the front end and the SLO's objectives shorter in proportion, and the answer's times
// scaled back; the replay reads time only through steps, transfers, arrivals and the front end,
// so the two are the same replay. nullopt where the layout leaves no room (as evaluate_serving).
std::optional<SlowerSteps> slower_steps(const ServingProblem& p, const ServingEstimate& e,
                                        double fraction);

}  // namespace meshplan::serving
