// core/profile_comparison.cc: two calibration profiles side by side (calibrate compare).
#include "core/profile_comparison.h"

#include <doctest/doctest.h>

#include <cmath>

namespace meshplan {
namespace {

GemmSample sample(int64_t m, int64_t n, int64_t k, double tflops, double heuristic_tflops = 0,
                  const std::string& status = "ok") {
  GemmSample s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.flops_per_s = tflops * 1e12;
  s.heuristic_flops_per_s = heuristic_tflops * 1e12;
  s.status = status;
  return s;
}

CollectiveFit fit(const std::string& level, int64_t group, double busbw, double latency_s) {
  CollectiveFit f;
  f.collective = "all_reduce";
  f.level = level;
  f.group_size = group;
  f.busbw_bytes_per_s = busbw;
  f.latency_s = latency_s;
  return f;
}

// Base: two shapes measured and one failed; a bf16 table only.
CalibrationProfile base_profile() {
  CalibrationProfile p;
  p.name = "first";
  p.provenance.how = "measured";
  p.provenance.gpu = "NVIDIA H200";
  p.gemm["bf16"].max_efficiency = 0.8;
  p.gemm["bf16"].sustained_flops_per_s = 660e12;
  p.gemm["bf16"].samples = {sample(1024, 1024, 1024, 100, 100), sample(2048, 1024, 1024, 200),
                            sample(4096, 1024, 1024, 0, 0, "failed: not supported")};
  p.hbm_bytes_per_s = 4000e9;
  p.attention = {{"cudnn", 128, 4096, true, 500e12, 400e12, 0, "run 1"}};
  p.collectives = {fit("nvlink", 8, 360e9, 10e-6), fit("ib", 16, 40e9, 20e-6)};
  return p;
}

// Other: the same shapes (the failed one measured now), one more, and an fp8 table.
CalibrationProfile other_profile() {
  CalibrationProfile p;
  p.name = "repeat";
  p.provenance.how = "measured";
  p.gemm["bf16"].max_efficiency = 0.84;
  p.gemm["bf16"].sustained_flops_per_s = 660e12 * 1.02;
  p.gemm["bf16"].samples = {sample(1024, 1024, 1024, 110, 99), sample(2048, 1024, 1024, 180, 150),
                            sample(4096, 1024, 1024, 300, 300), sample(8192, 1024, 1024, 50)};
  p.gemm["fp8"].samples = {sample(1024, 1024, 1024, 400)};
  p.hbm_bytes_per_s = 4200e9;
  p.sustained_compute_ratio = 0.95;
  p.attention = {{"cudnn", 128, 4096, true, 550e12, 0, 0, "run 2"},
                 {"cudnn", 128, 8192, true, 600e12, 500e12, 0, "run 2"}};
  p.collectives = {fit("nvlink", 8, 180e9, 20e-6)};
  return p;
}

TEST_CASE("ratio summary: numpy-style quantiles, geometric mean, first smallest and largest") {
  // Sorted 0.5, 1, 2, 4: the median is the mean of 1 and 2; p10 sits at rank 0.3 (0.5 + 0.3 ×
  // 0.5), p90 at rank 2.7 (2 + 0.7 × 2); the geometric mean is (4 × 0.5 × 1 × 2)^(1/4) = √2.
  const RatioSummary s = summarize_ratios({1.0, 2.0, 4.0, 0.5}, {"a", "b", "c", "d"});
  CHECK(s.count == 4);
  CHECK(s.median == doctest::Approx(1.5));
  CHECK(s.p10 == doctest::Approx(0.65));
  CHECK(s.p90 == doctest::Approx(3.4));
  CHECK(s.geomean == doctest::Approx(std::sqrt(2.0)));
  CHECK(s.min == 0.5);
  CHECK(s.min_at == "d");
  CHECK(s.max == 4.0);
  CHECK(s.max_at == "c");
  const RatioSummary ties = summarize_ratios({2.0, 1.0, 2.0, 1.0}, {"a", "b", "c", "d"});
  CHECK(ties.min_at == "b");
  CHECK(ties.max_at == "a");
  CHECK(ties.median == doctest::Approx(1.5));
  const RatioSummary one = summarize_ratios({1.25}, {"x"});
  CHECK(one.median == 1.25);
  CHECK(one.p10 == 1.25);
  CHECK(one.p90 == 1.25);
  CHECK(summarize_ratios({}, {}).count == 0);
}

TEST_CASE("profiles compared: GEMM shapes both measured, the heuristic where both timed it") {
  const ProfileComparison c = compare_profiles(base_profile(), other_profile());
  CHECK(c.base_name == "first");
  CHECK(c.other_name == "repeat");
  REQUIRE(c.gemm.size() == 2);  // bf16 and fp8, in name order
  const GemmComparison& bf16 = c.gemm[0];
  CHECK(bf16.dtype == "bf16");
  CHECK(bf16.base_samples == 2);  // the failed sample is not counted
  CHECK(bf16.other_samples == 4);
  // Common: 1024³ (110/100) and 2048×1024×1024 (180/200); 4096 failed in the base, 8192 is new.
  CHECK(bf16.throughput.count == 2);
  CHECK(bf16.throughput.median == doctest::Approx(1.0));
  CHECK(bf16.throughput.max == doctest::Approx(1.1));
  CHECK(bf16.throughput.max_at == "1024x1024x1024");
  CHECK(bf16.throughput.min == doctest::Approx(0.9));
  CHECK(bf16.throughput.min_at == "2048x1024x1024");
  CHECK(bf16.throughput.geomean == doctest::Approx(std::sqrt(1.1 * 0.9)));
  // The base did not time 2048×1024×1024's heuristic choice: only 1024³ compares (99/100).
  CHECK(bf16.heuristic.count == 1);
  CHECK(bf16.heuristic.median == doctest::Approx(0.99));
  CHECK(bf16.max_efficiency.ratio() == doctest::Approx(0.84 / 0.8));
  CHECK(bf16.sustained_tflops.base == doctest::Approx(660));
  CHECK(bf16.sustained_tflops.ratio() == doctest::Approx(1.02));
  const GemmComparison& fp8 = c.gemm[1];
  CHECK(fp8.dtype == "fp8");
  CHECK(fp8.base_samples == 0);
  CHECK(fp8.other_samples == 1);
  CHECK(fp8.throughput.count == 0);
  CHECK(fp8.max_efficiency.ratio() == 0);  // neither gives it
}

TEST_CASE("profiles compared: scalars, attention points and collective fits both give") {
  const ProfileComparison c = compare_profiles(base_profile(), other_profile());
  REQUIRE(!c.scalars.empty());
  CHECK(c.scalars[0].name == "HBM bandwidth (GB/s)");
  CHECK(c.scalars[0].base == doctest::Approx(4000));
  CHECK(c.scalars[0].ratio() == doctest::Approx(1.05));
  CHECK(c.scalars[1].name == "sustained compute ratio");
  CHECK(c.scalars[1].ratio() == 0);  // the base does not give it
  REQUIRE(c.attention.size() == 1);
  CHECK(c.attention[0].kernel == "cudnn");
  CHECK(c.attention[0].base_samples == 1);
  CHECK(c.attention[0].other_samples == 2);
  CHECK(c.attention[0].forward.count == 1);
  CHECK(c.attention[0].forward.median == doctest::Approx(1.1));
  CHECK(c.attention[0].forward.max_at == "d128 s4096 causal");
  CHECK(c.attention[0].backward.count == 0);  // the repeat gave no backward at that point
  CHECK(c.base_collectives == 2);
  CHECK(c.other_collectives == 1);
  CHECK(c.collective_busbw.count == 1);
  CHECK(c.collective_busbw.median == doctest::Approx(0.5));
  CHECK(c.collective_busbw.min_at == "all_reduce x8 on nvlink");
  CHECK(c.collective_latency.median == doctest::Approx(0.5));  // 10 µs over 20 µs
}

}  // namespace
}  // namespace meshplan
