// What one planning question is about: a model, a cluster (or the first `gpus` of it), the
// training overrides and, when asked for, the calibration profile. The CLI and `regress` load
// their inputs through load_scenario, so both read files, apply overrides and check the GPU
// count the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/cluster_spec.h"
#include "core/diagnostic.h"
#include "core/model_spec.h"
#include "core/profile.h"
#include "core/result.h"
#include "planner/profile_lookup.h"

namespace meshplan {

struct ScenarioRequest {
  std::string model_path;    // model YAML or Hugging Face config.json
  std::string cluster_path;  // cluster YAML
  int64_t seq_len = 0;       // 0: the model's training.seq_len
  int64_t global_batch = 0;  // 0: the model's training.global_batch
  std::string precision;     // bf16 | fp8; "": the model's training.precision
  int64_t gpus = 0;          // 0: every GPU of the cluster
  // Where the GPU count was given and the field it is reported under, for the error when it
  // exceeds the cluster ({"--gpus", 0, 0, ""} and "gpus" on the command line).
  SourceLocation gpus_where;
  std::string gpus_field = "gpus";
  // With `with_profile`, the profile resolve_profile picks for the cluster ("" : the
  // cluster's own `profile:`, else the defaults).
  bool with_profile = false;
  std::string profile_path;
  ProfileSearchPath profile_search;  // where the cluster's `profile:` name is looked up
};

struct Scenario {
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;       // the model's training section with the overrides applied
  int64_t gpus = 0;            // GPUs the layout must fill
  CalibrationProfile profile;  // empty unless the request asked for it
  // The request's profile_path file alone, where it was merged over the cluster's profile.
  std::optional<CalibrationProfile> profile_override;
};

// Loads the model and the cluster (every error of both), applies the overrides, checks the
// GPU count against the cluster, then resolves the profile when asked for. Errors are returned
// in that order; the first failing step's errors only.
Result<Scenario> load_scenario(const ScenarioRequest& request);

}  // namespace meshplan
