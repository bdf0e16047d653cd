// TTFT, TPOT and throughput of one layout against load: closed-loop concurrency doubling from 1
// per replica up to the requests its KV cache and max batch admit, then offline (unbounded
// load). The saturation point is the offline throughput; the curve shows what latency each
// load below it costs.
#pragma once

#include <vector>

#include "serving/serving_plan.h"

namespace meshplan::serving {

struct LoadPoint {
  double concurrency = 0;  // all replicas; 0: offline
  double output_tokens_per_s = 0;
  LatencyStats ttft_s, tpot_s;
};

// REQUIRES: `e` evaluated on `p` (its layout fits). Requests per point: the workload's, else
// the replay defaults (10 × concurrency, 1000 offline).
std::vector<LoadPoint> load_curve(const ServingProblem& p, const ServingEstimate& e);

}  // namespace meshplan::serving
