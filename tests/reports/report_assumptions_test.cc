// reports/report_layout_sections.cc: the report's assumptions state the gradient dtype the
// numbers used, the framework preset's or the one the job set.
#include <doctest/doctest.h>

#include "planner/framework_preset.h"
#include "reports/report_sections.h"

namespace meshplan {
namespace {

// The assumptions for one H100 in bf16, the profile's values resolved as the report does.
std::vector<std::string> assumptions(const CostOptions& o, const CalibrationProfile& p) {
  const GpuSpec& h100 = *find_gpu("H100-SXM-80GB");
  return report_assumptions(o, p, resolve_calibration(p, h100, Precision::bf16, o.fp8_recipe));
}

TEST_CASE("the assumptions name the gradient bytes and whose dtype they are") {
  CostOptions o;
  apply_framework(find_framework("nemo").value(), o);
  const std::string preset = assumptions(o, CalibrationProfile{}).front();
  CHECK(preset ==
        "Weights 2 B, gradients 4 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients in the nemo preset's dtype); FP8 training adds 2 B per linear-layer parameter "
        "for the FP8 weights and transposes cached across micro-batches"
        "; 20520 B of delayed-scaling state per FP8 GEMM (amax history 1024); linear-layer inputs "
        "saved for the backward in FP8.");
  REQUIRE(apply_grad_reduce_dtype("bf16", o).ok());
  CHECK(assumptions(o, CalibrationProfile{}).front() ==
        "Weights 2 B, gradients 2 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients reduced in bf16, as the job sets); FP8 training adds 2 B per linear-layer "
        "parameter for the FP8 weights and transposes cached across micro-batches"
        "; 20520 B of delayed-scaling state per FP8 GEMM (amax history 1024); linear-layer inputs "
        "saved for the backward in FP8.");
  o.memory.fp8_params = true;
  CHECK(assumptions(o, CalibrationProfile{}).front() ==
        "Weights 2 B, gradients 2 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients reduced in bf16, as the job sets); FP8 parameters: FP8 weights and their "
        "transposes replace the 2-byte weights of the linear layers"
        "; 20520 B of delayed-scaling state per FP8 GEMM (amax history 1024); linear-layer inputs "
        "saved for the backward in FP8.");
}

TEST_CASE("the assumptions state the framework's FP8 scaling state and saved inputs") {
  CostOptions o;  // Megatron-Core: amax history 1, 5 × 4 × (2 + 1) = 60 B per GEMM
  CHECK(assumptions(o, CalibrationProfile{})
            .front()
            .ends_with("; 60 B of delayed-scaling state per FP8 GEMM (amax history 1); "
                       "linear-layer inputs saved "
                       "for the backward in FP8."));
  apply_framework(find_framework("torchtitan").value(), o);  // torchao: current scaling
  CHECK(
      assumptions(o, CalibrationProfile{})
          .front()
          .ends_with(
              "; no scaling state (current scaling); linear-layer inputs saved for the backward in "
              "BF16."));
}

TEST_CASE("the assumptions name the sustained GEMM ceiling when the profile measured one") {
  CalibrationProfile p;
  p.provenance.how = "measured";
  p.gemm["bf16"].max_efficiency = 0.844;
  p.sustained_compute_ratio = 0.95;
  const auto gemm_line = [&] {
    for (const std::string& a : assumptions(CostOptions{}, p))
      if (a.starts_with("GEMM efficiency")) return a;
    return std::string();
  };
  CHECK(gemm_line() ==
        "GEMM efficiency (bf16, burst, outside samples): 0.84 (measured); sustained/burst "
        "compute 0.95 (measured); wave quantization over the GPU's SMs.");
  p.gemm["bf16"].sustained_flops_per_s = 667.5e12;
  CHECK(gemm_line() ==
        "GEMM efficiency (bf16, burst, outside samples): 0.84 (measured); sustained/burst "
        "compute 0.95 (measured), at most the 667.5 TFLOP/s the GPU sustained (measured); wave "
        "quantization over the GPU's SMs.");
}

TEST_CASE("each calibrated number says whether it was measured, published or a default") {
  // A profile merged from a published base and a measured GEMM/HBM run: each section is tagged
  // by the layer its credit line names; what neither gives is the documented default.
  CalibrationProfile p;
  p.provenance.how = "measured";
  p.provenance.sources = {"merged: gemm bf16, hbm from measured.yaml (measured)",
                          "merged: intra_node_bus_efficiency from h100-published.yaml (published)"};
  p.gemm["bf16"].max_efficiency = 0.83;
  p.hbm_bytes_per_s = 3021e9;
  p.intra_node_bus_efficiency = 0.81;
  const std::vector<std::string> lines = assumptions(CostOptions{}, p);
  auto line = [&](const std::string& start) {
    for (const std::string& a : lines)
      if (a.starts_with(start)) return a;
    return std::string();
  };
  CHECK(line("GEMM efficiency") ==
        "GEMM efficiency (bf16, burst, outside samples): 0.83 (measured); sustained/burst "
        "compute 1.00 (default: burst throughput); wave quantization over the GPU's SMs.");
  CHECK(line("HBM bandwidth") == "HBM bandwidth: 3021 GB/s (measured).");
  CHECK(line("Ring bus") ==
        "Ring bus efficiency: innermost level 0.81 (published), other levels 0.94 (default: NDR "
        "46-48 of 50 GB/s, REFERENCE.md §3).");
  CHECK(line("Fused attention efficiency") ==
        "Fused attention efficiency: 0.50 (default: FlashAttention-2/3 papers).");
}

TEST_CASE("an empty profile resolves every number to its default, HBM from the datasheet") {
  const GpuSpec& h100 = *find_gpu("H100-SXM-80GB");
  const ResolvedCalibration c = resolve_calibration(CalibrationProfile{}, h100, Precision::fp8);
  CHECK(c.gemm_dtype == "fp8");
  CHECK(c.gemm_max_efficiency.value == 0.80);
  CHECK(c.gemm_max_efficiency.origin == Origin::default_value);
  CHECK(c.hbm_bytes_per_s.value == doctest::Approx(0.9 * h100.hbm_bytes_per_s));
  CHECK(c.sustained_compute_ratio.value == 1);
  CHECK(c.fp8_quantization_overhead.value == 0);
  CHECK(c.intra_node_bus_efficiency.value == 0.8);
  CHECK(c.inter_node_bus_efficiency.value == 0.94);
  CHECK(origin_tag(c.attention_efficiency) == "default: FlashAttention-2/3 papers");
}

}  // namespace
}  // namespace meshplan
