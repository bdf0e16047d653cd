#include "planner/scenario.h"

#include <fmt/format.h>

#include "planner/profile_lookup.h"

namespace meshplan {

Result<Scenario> load_scenario(const ScenarioRequest& request) {
  Result<ModelSpec> model = load_model(request.model_path);
  Result<ClusterSpec> cluster = load_cluster(request.cluster_path);
  std::vector<Diagnostic> errors;
  if (!model) errors.insert(errors.end(), model.errors().begin(), model.errors().end());
  if (!cluster) errors.insert(errors.end(), cluster.errors().begin(), cluster.errors().end());
  if (!errors.empty()) return errors;
  Scenario out{model.value(), cluster.value(), model->training, cluster->gpus(), {}, {}};
  if (request.seq_len > 0) out.training.seq_len = request.seq_len;
  if (request.global_batch > 0) out.training.global_batch = request.global_batch;
  if (!request.precision.empty())
    out.training.precision = request.precision == "fp8" ? Precision::fp8 : Precision::bf16;
  if (request.gpus > out.gpus) {
    return Diagnostic{request.gpus_where, request.gpus_field, std::to_string(request.gpus),
                      fmt::format("must not exceed the cluster's {} GPUs", out.gpus)};
  }
  if (request.gpus > 0) out.gpus = request.gpus;
  if (request.with_profile) {
    Result<CalibrationProfile> profile = resolve_profile(
        out.cluster, request.profile_path, request.profile_search, &out.profile_override);
    if (!profile) return profile.errors();
    out.profile = std::move(profile).value();
  }
  return out;
}

}  // namespace meshplan
