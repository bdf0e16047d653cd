#include "planner/calibration.h"

#include <algorithm>

#include "core/profile_merge.h"

namespace meshplan {
namespace {

// The defaults, each with its source.
struct Default {
  double value;
  const char* source;
};
// A100's 268 of 312 TFLOP/s is 0.86, H100's 792 of 989 is 0.80 (REFERENCE.md §3); the lower.
constexpr Default kGemmEfficiency{0.80, "H100 792 of 989 TFLOP/s, REFERENCE.md §3"};
// FlashAttention-2 reaches 50-73% of A100 peak (Dao 2023, arXiv 2307.08691); FlashAttention-3
// 75% of H100 forward, FA2 35-40% on H100 (Shah et al. 2024, arXiv 2407.08608).
constexpr Default kAttentionEfficiency{0.5, "FlashAttention-2/3 papers"};
// STREAM-style copies reach 85-92% of the datasheet bandwidth on A100/H100.
constexpr Default kHbmEfficiency{0.9, "of the datasheet; STREAM copies reach 85-92%"};
// Ring bus bandwidth over link bandwidth: NVLink4 360-370 of 450 GB/s (0.81); NDR 46-48 of
// 50 GB/s (0.94) (REFERENCE.md §3).
constexpr Default kIntraNodeBusEfficiency{0.8, "NVLink4 360-370 of 450 GB/s, REFERENCE.md §3"};
constexpr Default kInterNodeBusEfficiency{0.94, "NDR 46-48 of 50 GB/s, REFERENCE.md §3"};

Origin origin_named(const std::string& how) {
  if (how == "measured") return Origin::measured;
  if (how == "imported") return Origin::imported;
  return Origin::published;  // the profile format's default for `how`
}

Calibrated fallback(const Default& d) { return {d.value, Origin::default_value, d.source}; }

// `value`, a profile's section, tagged with where the section came from (core/profile_merge.h
// section_origin: a merged profile's credit for it, else the profile's provenance.how).
// `section` is a credit key: "gemm bf16", "hbm", "attention_efficiency", ….
Calibrated profile_value(const CalibrationProfile& profile, const std::string& section,
                         double value) {
  const SectionOrigin origin = section_origin(profile, section);
  return {value, origin_named(origin.how), origin.file};
}

// The profile's value of `section` when positive, else the default.
Calibrated either(const CalibrationProfile& p, const std::string& section, double value,
                  const Calibrated& otherwise) {
  return value > 0 ? profile_value(p, section, value) : otherwise;
}

}  // namespace

const char* to_string(Origin origin) {
  switch (origin) {
    case Origin::measured:
      return "measured";
    case Origin::imported:
      return "imported";
    case Origin::published:
      return "published";
    case Origin::default_value:
      return "default";
  }
  return "default";
}

std::string origin_tag(const Calibrated& value) {
  if (value.origin != Origin::default_value) return to_string(value.origin);
  return value.source.empty() ? "default" : "default: " + value.source;
}

ResolvedCalibration resolve_calibration(const CalibrationProfile& p, const GpuSpec& gpu,
                                        Precision precision, const std::string& fp8_recipe) {
  ResolvedCalibration r;
  r.gemm_dtype = gpu.runs_fp8(precision) ? "fp8" : "bf16";
  const std::string gemm_section = "gemm " + r.gemm_dtype;
  const auto table = p.gemm.find(r.gemm_dtype);
  const bool has_table = table != p.gemm.end();
  r.gemm_max_efficiency = either(p, gemm_section, has_table ? table->second.max_efficiency : 0,
                                 fallback(kGemmEfficiency));
  r.gemm_sustained_flops_per_s =
      either(p, gemm_section, has_table ? table->second.sustained_flops_per_s : 0,
             {0, Origin::default_value, "not measured: no ceiling"});
  r.sustained_compute_ratio = either(p, "sustained_compute_ratio", p.sustained_compute_ratio,
                                     {1, Origin::default_value, "burst throughput"});
  r.attention_efficiency =
      either(p, "attention_efficiency", p.attention_efficiency, fallback(kAttentionEfficiency));
  r.hbm_bytes_per_s = either(
      p, "hbm", p.hbm_bytes_per_s,
      {kHbmEfficiency.value * gpu.hbm_bytes_per_s, Origin::default_value, kHbmEfficiency.source});
  r.intra_node_bus_efficiency = either(p, "intra_node_bus_efficiency", p.intra_node_bus_efficiency,
                                       fallback(kIntraNodeBusEfficiency));
  r.inter_node_bus_efficiency = either(p, "inter_node_bus_efficiency", p.inter_node_bus_efficiency,
                                       fallback(kInterNodeBusEfficiency));
  const auto overhead = p.fp8_quantization_overhead.find(fp8_recipe);
  r.fp8_quantization_overhead =
      overhead != p.fp8_quantization_overhead.end()
          ? profile_value(p, "fp8_quantization_overhead " + fp8_recipe, overhead->second)
          : Calibrated{0, Origin::default_value, "recipe not measured"};
  r.gpu_compute_spread = either(p, "gpu_compute_spread", p.gpu_compute_spread,
                                {0, Origin::default_value, "no spread given"});
  return r;
}

}  // namespace meshplan
