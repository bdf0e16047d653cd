#include "serving/load_curve.h"

#include <algorithm>

#include "serving/request_replay.h"

namespace meshplan::serving {

namespace {

LoadPoint point_of(double concurrency, double rate, const ServingEstimate& e) {
  return {concurrency,      rate,       e.output_tokens_per_s, e.replay.ttft_s, e.replay.tpot_s,
          e.slo_attainment, e.meets_slo};
}

// The layout replayed at one load: `concurrency` in flight (closed loop), Poisson arrivals at
// `rate` requests/s (open loop), or, with neither, every request at once.
std::optional<LoadPoint> point_at(ServingProblem at, const ServingLayout& layout,
                                  double concurrency, double rate) {
  at.workload.load = concurrency > 0 ? LoadKind::concurrency
                     : rate > 0      ? LoadKind::request_rate
                                     : LoadKind::offline;
  at.workload.concurrency = concurrency;
  at.workload.request_rate_per_s = rate;
  const std::optional<ServingEstimate> r = evaluate_serving(at, layout);
  if (!r) return std::nullopt;
  return point_of(concurrency, rate, *r);
}

// `e` is the plan's own replay at the asked rate: that point is taken from it, as is the
// saturation rate where its overload check asked for it already.
std::vector<LoadPoint> rate_curve(const ServingProblem& at, const ServingEstimate& e) {
  const double asked = at.workload.request_rate_per_s;
  const double saturation = e.saturation_requests_per_s > 0
                                ? e.saturation_requests_per_s
                                : saturation_requests_per_s(at, e.layout);
  std::vector<double> rates;
  for (double share : kRateShares)
    if (share * saturation > 0) rates.push_back(share * saturation);
  rates.push_back(asked);
  std::sort(rates.begin(), rates.end());
  std::vector<LoadPoint> out;
  for (double rate : rates)
    if (rate == asked)
      out.push_back(point_of(0, rate, e));
    else if (std::optional<LoadPoint> l = point_at(at, e.layout, 0, rate))
      out.push_back(*l);
  if (std::optional<LoadPoint> l = point_at(at, e.layout, 0, 0)) out.push_back(*l);
  return out;
}

}  // namespace

std::vector<LoadPoint> load_curve(const ServingProblem& p, const ServingEstimate& e) {
  const ServingProblem at = as_evaluated(p, e);
  if (p.workload.load == LoadKind::request_rate) return rate_curve(at, e);
  std::vector<LoadPoint> out;
  const int64_t replicas = e.layout.replicas;
  int64_t per_replica_cap = std::min(e.layout.max_batch, e.memory.max_concurrency);
  // A set number of requests (--requests, a trace's) in flight at once is the offline point
  // already: the curve stops where every replica holds its share of them.
  if (p.workload.requests > 0 || p.workload.trace)
    per_replica_cap =
        std::clamp<int64_t>(replay_request_count(p.workload) / replicas, 1, per_replica_cap);
  auto point = [&](double concurrency) {
    if (std::optional<LoadPoint> l = point_at(at, e.layout, concurrency, 0)) out.push_back(*l);
  };
  for (int64_t c = 1; c < per_replica_cap; c *= 2) point(static_cast<double>(c * replicas));
  point(static_cast<double>(per_replica_cap * replicas));
  point(0);
  return out;
}

}  // namespace meshplan::serving
