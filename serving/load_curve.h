// TTFT, TPOT and throughput of one layout against load: closed-loop concurrency doubling from 1
// per replica up to the requests its KV cache and max batch admit (and, where the workload sets
// the number of requests, up to each replica's share of them), then offline (unbounded
// load). The saturation point is the offline throughput; the curve shows what latency each
// load below it costs. Under a request rate (an open loop) the load is the rate instead:
// Poisson arrivals at kRateShares of the saturation rate (the offline replay's requests/s) and
// at the workload's own rate, ascending, then offline.
#pragma once

#include <vector>

#include "serving/serving_plan.h"

namespace meshplan::serving {

struct LoadPoint {
  double concurrency = 0;         // closed-loop point: requests in flight, all replicas
  double request_rate_per_s = 0;  // open-loop point: Poisson requests/s, all replicas
  double output_tokens_per_s = 0;
  LatencyStats ttft_s, tpot_s;
  // The share of requests within the SLO, and whether the point meets it (ServingEstimate's).
  double slo_attainment = 1;
  bool meets_slo = true;
  // Neither concurrency nor rate: the offline point (every request at once), the saturation.
  bool offline() const { return concurrency <= 0 && request_rate_per_s <= 0; }
  // The load on the curve's axis: the concurrency, or the rate of an open-loop point.
  double load() const { return concurrency > 0 ? concurrency : request_rate_per_s; }
};

// Whether `load` is an open-loop curve (its points are request rates, not concurrencies).
inline bool is_rate_curve(const std::vector<LoadPoint>& load) {
  for (const LoadPoint& l : load)
    if (l.request_rate_per_s > 0) return true;
  return false;
}

// Shares of the saturation rate an open-loop curve replays.
constexpr double kRateShares[] = {0.125, 0.25, 0.5, 0.75, 0.9};

// REQUIRES: `e` evaluated on `p` (its layout fits). Requests per point: the workload's, else
// the replay defaults (10 × concurrency, 1000 offline and under a rate).
std::vector<LoadPoint> load_curve(const ServingProblem& p, const ServingEstimate& e);

}  // namespace meshplan::serving
