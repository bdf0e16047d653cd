// Every number the cost model takes from a calibration profile, resolved once for one GPU and
// one precision: the profile's value where it has one, else a documented default, each tagged
// with where it came from (issue 10). The GEMM, attention, collective and memory-bound models
// and the serving step model read these; the report's assumptions print them with their tags.
// Profile samples (GEMM shapes, attention kernels, collective fits) stay in the profile: the
// models interpolate them; what is resolved here is every scalar with a default behind it.
#pragma once

#include <string>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/profile.h"

namespace meshplan {

// Where a number came from: a calibration run, an imported log (nccl-tests), a published
// figure written into a profile, or meshplan's documented default.
enum class Origin { measured, imported, published, default_value };
const char* to_string(Origin origin);  // "measured" | "imported" | "published" | "default"

struct Calibrated {
  double value = 0;
  Origin origin = Origin::default_value;
  // A default's source (paper, datasheet); for a profile value, the file a merged profile took
  // its section from ("" when the profile was not merged).
  std::string source;
};

// "measured", "published", "imported", or "default: <source>": how a report names the origin.
std::string origin_tag(const Calibrated& value);

struct ResolvedCalibration {
  std::string gemm_dtype;  // "bf16", or "fp8" when the precision is fp8 and the GPU runs it
  // Best GEMM throughput over the dtype's dense peak: the efficiency of the GEMM model's
  // fallback curve (burst). Default 0.80.
  Calibrated gemm_max_efficiency;
  // The dtype's sustained throughput in FLOP/s (a back-to-back run); 0 (default) when not
  // measured, and then no ceiling applies.
  Calibrated gemm_sustained_flops_per_s;
  // Sustained over burst compute (the clock a power-limited GPU holds); default 1.
  Calibrated sustained_compute_ratio;
  // Fused attention throughput over the bf16 peak, where the profile has no kernel samples.
  Calibrated attention_efficiency;
  // Achieved HBM bandwidth, bytes/s; default 90% of the datasheet's.
  Calibrated hbm_bytes_per_s;
  // Ring bus bandwidth over link bandwidth, innermost network level and the others.
  Calibrated intra_node_bus_efficiency, inter_node_bus_efficiency;
  // Extra FP8 GEMM time for quantizing operands under the recipe, as a share; default 0.
  Calibrated fp8_quantization_overhead;
  // GPU-to-GPU throughput spread (σ); default 0 (no stragglers).
  Calibrated gpu_compute_spread;
};

// `fp8_recipe`: delayed | current | block (the FP8 scaling recipe whose overhead applies).
ResolvedCalibration resolve_calibration(const CalibrationProfile& profile, const GpuSpec& gpu,
                                        Precision precision,
                                        const std::string& fp8_recipe = "delayed");

}  // namespace meshplan
