#include "serving/slower_steps.h"

#include <memory>
#include <vector>

#include "serving/engine_preset.h"

namespace meshplan::serving {

namespace {

LatencyStats scaled(LatencyStats s, double factor) {
  for (double* v : {&s.mean, &s.p50, &s.p90, &s.p99}) *v *= factor;
  return s;
}

// `p` in a time unit `factor`× longer: arrivals denser, the front end and objectives shorter.
ServingProblem in_longer_unit(ServingProblem p, double factor) {
  p.workload.request_rate_per_s *= factor;
  if (p.workload.load == LoadKind::trace && p.workload.trace) {
    auto requests = std::make_shared<std::vector<TracedRequest>>(*p.workload.trace);
    for (TracedRequest& r : *requests) r.arrival_s /= factor;
    p.workload.trace = std::move(requests);
  }
  p.options.front_end_s = front_end_s(p.options) / factor;
  p.options.slo.ttft_s /= factor;
  p.options.slo.tpot_s /= factor;
  p.options.slo.margin = 0;  // the margin's own replay checks the objectives as they are
  // The memos of replays under the load as asked: the disaggregated pools' is keyed without the
  // load's rate. The offline replays the saturation memo keeps are the same in either unit
  // (steps unchanged, no arrivals, the front end outside their duration): kept.
  p.pool_replay_memo = nullptr;
  p.estimate_memo = nullptr;
  p.record_steps = false;
  return p;
}

}  // namespace

bool slowdown_matters(const ServingProblem& p) {
  return p.workload.open_loop() || p.options.slo.any();
}

std::optional<SlowerSteps> slower_steps(const ServingProblem& p, const ServingEstimate& e,
                                        double fraction) {
  const double factor = 1 + fraction;
  const std::optional<ServingEstimate> r =
      evaluate_serving(in_longer_unit(as_evaluated(p, e), factor), e.layout);
  if (!r) return std::nullopt;
  SlowerSteps s;
  s.fraction = fraction;
  s.output_tokens_per_s = r->output_tokens_per_s / factor;
  s.ttft_s = scaled(r->replay.ttft_s, factor);
  s.tpot_s = scaled(r->replay.tpot_s, factor);
  s.slo_attainment = r->slo_attainment;
  s.meets_slo = r->meets_slo;
  s.overloaded = r->overloaded;
  s.saturation_requests_per_s = r->saturation_requests_per_s / factor;
  return s;
}

}  // namespace meshplan::serving
