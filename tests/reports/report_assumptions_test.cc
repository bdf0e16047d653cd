// reports/report_layout_sections.cc: the report's assumptions state the gradient dtype the
// numbers used, the framework preset's or the one the job set.
#include <doctest/doctest.h>

#include "planner/framework_preset.h"
#include "reports/report_sections.h"

namespace meshplan {
namespace {

TEST_CASE("the assumptions name the gradient bytes and whose dtype they are") {
  CostOptions o;
  apply_framework(find_framework("nemo").value(), o);
  const std::string preset = report_assumptions(o, CalibrationProfile{}).front();
  CHECK(preset ==
        "Weights 2 B, gradients 4 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients in the nemo preset's dtype); FP8 training adds 2 B per linear-layer parameter "
        "for the FP8 weights and transposes cached across micro-batches"
        "; 20520 B of delayed-scaling state per FP8 GEMM (amax history 1024); linear-layer inputs "
        "saved for the backward in FP8.");
  REQUIRE(apply_grad_reduce_dtype("bf16", o).ok());
  CHECK(report_assumptions(o, CalibrationProfile{}).front() ==
        "Weights 2 B, gradients 2 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients reduced in bf16, as the job sets); FP8 training adds 2 B per linear-layer "
        "parameter for the FP8 weights and transposes cached across micro-batches"
        "; 20520 B of delayed-scaling state per FP8 GEMM (amax history 1024); linear-layer inputs "
        "saved for the backward in FP8.");
  o.memory.fp8_params = true;
  CHECK(report_assumptions(o, CalibrationProfile{}).front() ==
        "Weights 2 B, gradients 2 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients reduced in bf16, as the job sets); FP8 parameters: FP8 weights and their "
        "transposes replace the 2-byte weights of the linear layers"
        "; 20520 B of delayed-scaling state per FP8 GEMM (amax history 1024); linear-layer inputs "
        "saved for the backward in FP8.");
}

TEST_CASE("the assumptions state the framework's FP8 scaling state and saved inputs") {
  CostOptions o;  // Megatron-Core: amax history 1, 5 × 4 × (2 + 1) = 60 B per GEMM
  CHECK(report_assumptions(o, CalibrationProfile{})
            .front()
            .ends_with("; 60 B of delayed-scaling state per FP8 GEMM (amax history 1); "
                       "linear-layer inputs saved "
                       "for the backward in FP8."));
  apply_framework(find_framework("torchtitan").value(), o);  // torchao: current scaling
  CHECK(
      report_assumptions(o, CalibrationProfile{})
          .front()
          .ends_with(
              "; no scaling state (current scaling); linear-layer inputs saved for the backward in "
              "BF16."));
}

TEST_CASE("the assumptions name the sustained GEMM ceiling when the profile measured one") {
  CalibrationProfile p;
  p.gemm["bf16"].max_efficiency = 0.844;
  p.sustained_compute_ratio = 0.95;
  const auto gemm_line = [&] {
    for (const std::string& a : report_assumptions(CostOptions{}, p))
      if (a.starts_with("GEMM efficiency")) return a;
    return std::string();
  };
  CHECK(gemm_line() ==
        "GEMM efficiency (bf16, burst, outside samples): 0.84 (profile); sustained/burst compute "
        "0.95 (profile); wave quantization over the GPU's SMs.");
  p.gemm["bf16"].sustained_flops_per_s = 667.5e12;
  CHECK(gemm_line() ==
        "GEMM efficiency (bf16, burst, outside samples): 0.84 (profile); sustained/burst compute "
        "0.95 (profile), at most the 667.5 TFLOP/s the GPU sustained (profile); wave quantization "
        "over the GPU's SMs.");
}

}  // namespace
}  // namespace meshplan
