// Defaults used when a profile lacks a number, and how a cluster finds its profile.
#pragma once

#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/profile.h"
#include "core/result.h"

namespace meshplan {

// Best GEMM efficiency when the profile has none: A100's 268 of 312 TFLOP/s is 0.86, H100's
// 792 of 989 is 0.80 (REFERENCE.md §3); we take the lower.
constexpr double kDefaultGemmEfficiency = 0.80;
// Fused (flash) attention forward+backward: FlashAttention-2 reaches 50-73% of A100 peak
// (Dao 2023, arXiv 2307.08691); FlashAttention-3 75% of H100 forward, FA2 35-40% on H100
// (Shah et al. 2024, arXiv 2407.08608). Default 0.5.
constexpr double kDefaultAttentionEfficiency = 0.5;
// Achieved HBM copy bandwidth as a share of the datasheet figure (STREAM-style copies reach
// 85-92% on A100/H100).
constexpr double kDefaultHbmEfficiency = 0.9;
// Ring bus bandwidth over link bandwidth: NVLink4 360-370 of 450 GB/s (0.81); NDR 46-48 of 50
// GB/s (0.94) (REFERENCE.md §3).
constexpr double kDefaultIntraNodeBusEfficiency = 0.8;
constexpr double kDefaultInterNodeBusEfficiency = 0.94;

double hbm_bandwidth(const CalibrationProfile& p, const GpuSpec& gpu);
// The profile's sustained_compute_ratio, or 1 (burst throughput) when it has none.
double sustained_compute_ratio(const CalibrationProfile& p);
// Extra FP8 GEMM time for quantizing operands under `recipe`, as a share of the GEMM's time;
// 0 when the profile did not measure that recipe.
double fp8_quantization_overhead(const CalibrationProfile& p, const std::string& recipe);
double attention_efficiency(const CalibrationProfile& p);

// Folders holding profiles (<name>.yaml), searched for a cluster's `profile: <name>` in order:
// `first` (the CLI's --profile-dir, then $MESHPLAN_DATA/profiles), the profiles/ folder beside
// the cluster file's folder (<cluster dir>/../profiles), then `last` (the installed
// share/meshplan/profiles, the source tree's profiles/). The caller knows where those are; no
// library has a path built in.
struct ProfileSearchPath {
  std::vector<std::string> first, last;
};

// The profile for a cluster: the cluster's `profile:` name, looked up along `search`, else an
// empty profile (every number from the defaults above, said in notes). `override_path`
// (--profile) is merged over it section by section (core/profile_merge.h: an imported two-GPU
// NCCL log replaces only that collective's fit, a one-node GEMM calibration only the GEMMs), its
// provenance saying which sections came from which file; with no cluster profile it is taken
// alone.
Result<CalibrationProfile> resolve_profile(const ClusterSpec& c, const std::string& override_path,
                                           const ProfileSearchPath& search);

// What makes a profile suspect for a cluster, one sentence each: an interrupted calibration
// (complete: false, with what is missing), measured on another GPU
// (the cluster's catalog family, "H100" of H100-SXM-80GB, is not in the profile's GPU name),
// collective fits only on network levels the cluster does not have.
std::vector<std::string> profile_warnings(const CalibrationProfile& p, const ClusterSpec& c);

}  // namespace meshplan
