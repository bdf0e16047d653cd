#include "planner/gemm_model.h"

#include <doctest/doctest.h>

#include "tests/test_inputs.h"

using namespace meshplan;

TEST_CASE("fallback GEMM time: compute at the best efficiency plus one pass through HBM") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  GpuSpec gpu = *find_gpu("H100-SXM-80GB");
  GemmModel g(p, gpu, Precision::bf16);
  const double m = 8192, n = 8192, k = 1024;
  const double expected = 2 * m * n * k / (0.8 * 989e12) + (m * k + k * n + m * n) * 2 / 3e12;
  CHECK(g.time_s(m, n, k) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("a measured sample is reproduced exactly and corrects its neighbourhood") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  p.gemm["bf16"].samples.push_back({4096, 4096, 4096, 500e12, 0, 0, "ok"});
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  CHECK(g.time_s(4096, 4096, 4096) == doctest::Approx(2.0 * 4096 * 4096 * 4096 / 500e12).epsilon(1e-12));
  // Twice as large in one dimension: slower than the fallback (the sample ran below it)…
  CHECK(g.time_s(8192, 4096, 4096) > g.fallback_time_s(8192, 4096, 4096));
  // …and beyond 8× in log-distance the sample no longer matters.
  CHECK(g.time_s(65536, 4096, 4096) == doctest::Approx(g.fallback_time_s(65536, 4096, 4096)).epsilon(1e-12));
}

TEST_CASE("fp8 uses the fp8 peak and one-byte operands") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["fp8"].max_efficiency = 0.7;
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::fp8);
  const double m = 8192, n = 8192, k = 256;
  CHECK(g.time_s(m, n, k) ==
        doctest::Approx(2 * m * n * k / (0.7 * 1979e12) + ((m * k + k * n) * 1 + m * n * 2) / 3e12).epsilon(1e-12));
}

TEST_CASE("the shipped H100 profile's fp8 fallback lies within the published K-sweep spread") {
  Result<CalibrationProfile> p = load_profile(std::string(MESHPLAN_SOURCE_DIR) + "/profiles/h100-published.yaml");
  REQUIRE(p.ok());
  CalibrationProfile no_samples = p.value();
  no_samples.gemm["fp8"].samples.clear();
  GemmModel g(no_samples, *find_gpu("H100-SXM-80GB"), Precision::fp8);
  auto tflops = [&](double k) { return 2.0 * 8192 * 8192 * k / g.time_s(8192, 8192, k) / 1e12; };
  CHECK(tflops(256) > 376);
  CHECK(tflops(256) < 569);
  CHECK(tflops(1024) > 927);
  CHECK(tflops(1024) < 1129);
  CHECK(tflops(4096) > 1250);
  CHECK(tflops(4096) < 1467);
}
