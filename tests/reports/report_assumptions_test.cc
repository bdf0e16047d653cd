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
        "for the FP8 weights and transposes cached across micro-batches.");
  REQUIRE(apply_grad_reduce_dtype("bf16", o).ok());
  CHECK(report_assumptions(o, CalibrationProfile{}).front() ==
        "Weights 2 B, gradients 2 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients reduced in bf16, as the job sets); FP8 training adds 2 B per linear-layer "
        "parameter for the FP8 weights and transposes cached across micro-batches.");
  o.memory.fp8_params = true;
  CHECK(report_assumptions(o, CalibrationProfile{}).front() ==
        "Weights 2 B, gradients 2 B, optimizer states 12 B per parameter (mixed-precision Adam; "
        "gradients reduced in bf16, as the job sets); FP8 parameters: FP8 weights and their "
        "transposes replace the 2-byte weights of the linear layers.");
}

}  // namespace
}  // namespace meshplan
