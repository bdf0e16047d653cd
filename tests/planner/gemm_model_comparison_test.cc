// planner/gemm_model_comparison.cc: two profiles' GEMM times as the cost model prices them.
#include "planner/gemm_model_comparison.h"

#include <doctest/doctest.h>

namespace meshplan {
namespace {

GemmSample sample(int64_t m, int64_t n, int64_t k, double tflops) {
  GemmSample s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.flops_per_s = tflops * 1e12;
  return s;
}

CalibrationProfile profile(const std::string& name, double scale) {
  CalibrationProfile p;
  p.name = name;
  p.hbm_bytes_per_s = 3000e9;
  p.gemm["bf16"].max_efficiency = 0.8;
  p.gemm["bf16"].samples = {sample(2048, 4096, 4096, 600 * scale),
                            sample(8192, 8192, 8192, 700 * scale),
                            sample(4096, 1024, 14336, 550 * scale)};
  p.gemm["fp16"].max_efficiency = 0.8;  // a dtype the cost model does not price
  return p;
}

TEST_CASE("GEMM models compared: samples 1.25x as fast price their shapes 1.25x as fast") {
  // At a sample's own shape the model's time is that sample's time (the fallback scaled by the
  // sample's own ratio), so every ratio is the samples' 1.25 (sustained ratio and cap absent).
  const GpuSpec& h100 = *find_gpu("H100-SXM-80GB");
  ProfileComparison c;
  compare_gemm_models(profile("first", 1.0), profile("faster", 1.25), h100, c);
  CHECK(c.model_gpu == "H100-SXM-80GB");
  REQUIRE(c.gemm_model.size() == 1);  // bf16; fp16 is not priced, fp8 in neither
  CHECK(c.gemm_model[0].dtype == "bf16");
  const RatioSummary& s = c.gemm_model[0].speedup;
  CHECK(s.count == 3);
  CHECK(s.min == doctest::Approx(1.25));
  CHECK(s.max == doctest::Approx(1.25));
  CHECK(s.min_at == "2048x4096x4096");  // ties go to the first shape, in m, n, k order
}

TEST_CASE("GEMM models compared: the shapes either profile measured, a profile against itself 1") {
  CalibrationProfile base = profile("first", 1.0);
  CalibrationProfile other = base;
  other.gemm["bf16"].samples.push_back(sample(1024, 1024, 1024, 300));
  other.gemm["bf16"].samples.push_back(GemmSample{.m = 512, .n = 512, .k = 8, .status = "failed"});
  other.gemm["fp8"].max_efficiency = 0.7;
  ProfileComparison c;
  compare_gemm_models(base, base, *find_gpu("H200-SXM-141GB"), c);
  REQUIRE(c.gemm_model.size() == 1);
  CHECK(c.gemm_model[0].speedup.count == 3);
  CHECK(c.gemm_model[0].speedup.min == doctest::Approx(1.0));
  CHECK(c.gemm_model[0].speedup.max == doctest::Approx(1.0));
  compare_gemm_models(base, other, *find_gpu("H200-SXM-141GB"), c);
  REQUIRE(c.gemm_model.size() == 2);          // fp8 is in the other profile
  CHECK(c.gemm_model[0].speedup.count == 4);  // the failed shape is not priced
  CHECK(c.gemm_model[1].dtype == "fp8");
  CHECK(c.gemm_model[1].speedup.count == 0);  // no shape measured in fp8
}

}  // namespace
}  // namespace meshplan
