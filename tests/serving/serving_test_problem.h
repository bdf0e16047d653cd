// A serving problem on shipped specs for the serving tests: the model and cluster by name, the
// cluster's own profile, `gpus` of its GPUs; each test sets the workload and options it asks.
#pragma once

#include <cstdint>
#include <string>

#include "planner/profile_lookup.h"
#include "serving/serving_plan.h"
#include "tests/test_inputs.h"

namespace meshplan::testing {

inline serving::ServingProblem shipped_serving_problem(const std::string& model,
                                                       const std::string& cluster, int64_t gpus) {
  serving::ServingProblem p;
  p.model = shipped_model(model);
  p.cluster = shipped_cluster(cluster);
  Result<CalibrationProfile> profile = resolve_profile(p.cluster, "", ProfileSearchPath{});
  REQUIRE(profile.ok());
  p.profile = profile.value();
  p.gpus = gpus;
  return p;
}

// `p` under Poisson arrivals at `rate_per_s`: `requests` requests of isl + osl tokens each.
inline serving::ServingProblem poisson_workload(serving::ServingProblem p, int64_t isl, int64_t osl,
                                                double rate_per_s, int64_t requests) {
  p.workload.isl = isl;
  p.workload.osl = osl;
  p.workload.load = serving::LoadKind::request_rate;
  p.workload.request_rate_per_s = rate_per_s;
  p.workload.requests = requests;
  return p;
}

}  // namespace meshplan::testing
