#include "serving/load_curve.h"

#include <algorithm>

namespace meshplan::serving {

std::vector<LoadPoint> load_curve(const ServingProblem& p, const ServingEstimate& e) {
  std::vector<LoadPoint> out;
  const int64_t replicas = e.layout.replicas;
  const int64_t per_replica_cap = std::min(e.layout.max_batch, e.memory.max_concurrency);
  ServingProblem at = as_evaluated(p, e);
  auto point = [&](double concurrency) {
    at.workload.load = concurrency > 0 ? LoadKind::concurrency : LoadKind::offline;
    at.workload.concurrency = concurrency;
    at.workload.request_rate_per_s = 0;
    const std::optional<ServingEstimate> r = evaluate_serving(at, e.layout);
    if (!r) return;
    out.push_back({concurrency, r->output_tokens_per_s, r->replay.ttft_s, r->replay.tpot_s});
  };
  for (int64_t c = 1; c < per_replica_cap; c *= 2) point(static_cast<double>(c * replicas));
  point(static_cast<double>(per_replica_cap * replicas));
  point(0);
  return out;
}

}  // namespace meshplan::serving
