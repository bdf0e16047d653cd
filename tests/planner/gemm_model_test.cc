#include "planner/gemm_model.h"

#include <doctest/doctest.h>

#include <cmath>

#include "tests/test_inputs.h"

using namespace meshplan;

namespace {
// 8192 × 8192 outputs in 128 × 256 tiles: 64 · 32 = 2,048 tiles, ceil(2048 / 132) = 16 waves on
// an H100's 132 SMs, so 2048 / (16 · 132) of the SMs are busy on average.
constexpr double kWaves8192 = 2048.0 / (16 * 132);

// A bf16 profile (best efficiency 0.8, 3 TB/s) with one measured 4096³ sample: `best` FLOP/s
// from the fastest algorithm, `heuristic` from cuBLASLt's first choice (0: not measured).
CalibrationProfile one_sample_profile(double best, double heuristic = 0) {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  p.gemm["bf16"].samples.push_back({4096, 4096, 4096, best, heuristic, 0, "ok"});
  return p;
}
}  // namespace

TEST_CASE(
    "fallback GEMM time: compute at the best efficiency over whole waves plus one pass through "
    "HBM") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  GpuSpec gpu = *find_gpu("H100-SXM-80GB");
  GemmModel g(p, gpu, Precision::bf16);
  const double m = 8192, n = 8192, k = 1024;
  const double expected =
      2 * m * n * k / (0.8 * 989e12 * kWaves8192) + (m * k + k * n + m * n) * 2 / 3e12;
  CHECK(g.time_s(m, n, k) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("a GPU of unknown SM count has no wave quantization") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  GpuSpec gpu = *find_gpu("H100-SXM-80GB");
  gpu.sm_count = 0;
  GemmModel g(p, gpu, Precision::bf16);
  CHECK(g.time_s(128, 256, 1024) ==
        doctest::Approx(2.0 * 128 * 256 * 1024 / (0.8 * 989e12) +
                        (128.0 * 1024 + 1024.0 * 256 + 128.0 * 256) * 2 / 3e12)
            .epsilon(1e-12));
}

TEST_CASE("a batched GEMM's tiles share waves: 132 one-tile GEMMs take one wave, not 132") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  const double flops = 2.0 * 128 * 128 * 4096,
               bytes = (128.0 * 4096 + 4096.0 * 128 + 128.0 * 128) * 2;
  // A 128×128 output is one tile, which alone keeps 1 of 132 SMs busy; 132 of them fill
  // exactly one wave.
  CHECK(g.time_s(128, 128, 4096) ==
        doctest::Approx(flops / (0.8 * 989e12 / 132) + bytes / 3e12).epsilon(1e-12));
  CHECK(g.time_s(128, 128, 4096, 132) ==
        doctest::Approx(132 * (flops / (0.8 * 989e12) + bytes / 3e12)).epsilon(1e-12));
}

TEST_CASE("the sustained compute ratio slows the compute term only") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  p.sustained_compute_ratio = 0.848;
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  const double m = 8192, n = 8192, k = 1024;
  CHECK(g.time_s(m, n, k) == doctest::Approx(2 * m * n * k / (0.8 * 0.848 * 989e12 * kWaves8192) +
                                             (m * k + k * n + m * n) * 2 / 3e12)
                                 .epsilon(1e-12));
}

TEST_CASE("a measured sustained throughput caps the fallback's compute rate, samples keep theirs") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.83;
  p.sustained_compute_ratio = 0.95;
  p.gemm["bf16"].sustained_flops_per_s = 676e12;
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  const double m = 8192, n = 8192, k = 1024;
  // 0.83 · 0.95 · 989 = 779.8 TFLOP/s would exceed the 676 the GPU held: the fallback runs at 676.
  CHECK(g.max_efficiency() * g.peak_flops_per_s() == doctest::Approx(676e12).epsilon(1e-12));
  CHECK(g.time_s(m, n, k) ==
        doctest::Approx(2 * m * n * k / (676e12 * kWaves8192) + (m * k + k * n + m * n) * 2 / 3e12)
            .epsilon(1e-12));
  // Below the ceiling it changes nothing.
  p.gemm["bf16"].sustained_flops_per_s = 900e12;
  GemmModel above(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  CHECK(above.max_efficiency() == doctest::Approx(0.83).epsilon(1e-12));
  // A sample is still priced at its own rate times the ratio: 700 · 0.95 = 665 TFLOP/s.
  p.gemm["bf16"].sustained_flops_per_s = 676e12;
  p.gemm["bf16"].samples.push_back({4096, 4096, 4096, 700e12, 0, 0, "ok"});
  GemmModel anchored(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  CHECK(anchored.time_s(4096, 4096, 4096) ==
        doctest::Approx(2.0 * 4096 * 4096 * 4096 / (700e12 * 0.95)).epsilon(1e-9));
}

TEST_CASE("fp8 quantization overhead follows the scaling recipe the profile measured") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["fp8"].max_efficiency = 0.7;
  p.fp8_quantization_overhead = {{"delayed", 0.0}, {"current", 0.21}};
  const GpuSpec gpu = *find_gpu("H100-SXM-80GB");
  GemmModel delayed(p, gpu, Precision::fp8, "delayed"), current(p, gpu, Precision::fp8, "current"),
      block(p, gpu, Precision::fp8, "block");
  CHECK(current.time_s(8192, 8192, 4096) ==
        doctest::Approx(1.21 * delayed.time_s(8192, 8192, 4096)).epsilon(1e-12));
  // A recipe the profile did not measure adds nothing.
  CHECK(block.time_s(8192, 8192, 4096) ==
        doctest::Approx(delayed.time_s(8192, 8192, 4096)).epsilon(1e-12));
  // bf16 GEMMs are never quantized.
  p.gemm["bf16"].max_efficiency = 0.8;
  GemmModel bf16(p, gpu, Precision::bf16, "current");
  CHECK(
      bf16.time_s(8192, 8192, 4096) ==
      doctest::Approx(GemmModel(p, gpu, Precision::bf16).time_s(8192, 8192, 4096)).epsilon(1e-12));
}

TEST_CASE("a measured sample is reproduced exactly and corrects its neighbourhood") {
  CalibrationProfile p = one_sample_profile(500e12);
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  CHECK(g.time_s(4096, 4096, 4096) ==
        doctest::Approx(2.0 * 4096 * 4096 * 4096 / 500e12).epsilon(1e-12));
  // Twice as large in one dimension: slower than the fallback (the sample ran below it)…
  CHECK(g.time_s(8192, 4096, 4096) > g.fallback_time_s(8192, 4096, 4096));
  // …and beyond 8× in log-distance the sample no longer matters.
  CHECK(g.time_s(65536, 4096, 4096) ==
        doctest::Approx(g.fallback_time_s(65536, 4096, 4096)).epsilon(1e-12));
}

TEST_CASE("a measured sample is a burst figure: the sustained ratio slows it like the peak") {
  CalibrationProfile p = one_sample_profile(500e12);
  p.sustained_compute_ratio = 0.9;
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  CHECK(g.time_s(4096, 4096, 4096) ==
        doctest::Approx(2.0 * 4096 * 4096 * 4096 / (500e12 * 0.9)).epsilon(1e-12));
}

TEST_CASE("a sample is priced at the heuristic's choice, which frameworks run, not the best") {
  CalibrationProfile p = one_sample_profile(500e12, 450e12);
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  CHECK(g.time_s(4096, 4096, 4096) ==
        doctest::Approx(2.0 * 4096 * 4096 * 4096 / 450e12).epsilon(1e-12));
}

TEST_CASE("fp8 uses the fp8 peak and one-byte operands") {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["fp8"].max_efficiency = 0.7;
  GemmModel g(p, *find_gpu("H100-SXM-80GB"), Precision::fp8);
  const double m = 8192, n = 8192, k = 256;
  CHECK(g.time_s(m, n, k) == doctest::Approx(2 * m * n * k / (0.7 * 1979e12 * kWaves8192) +
                                             ((m * k + k * n) * 1 + m * n * 2) / 3e12)
                                 .epsilon(1e-12));
}

TEST_CASE("the shipped H100 profile prices a large bf16 GEMM at the sustained MAMF best") {
  Result<CalibrationProfile> p =
      load_profile(std::string(MESHPLAN_SOURCE_DIR) + "/profiles/h100-published.yaml");
  REQUIRE(p.ok());
  GemmModel g(p.value(), *find_gpu("H100-SXM-80GB"), Precision::bf16);
  // 16384³: 128 · 64 = 8,192 tiles in 63 waves; the compute term is 2·16384³ over
  // 0.803 · 0.848 · 989 TFLOP/s × 8192 / (63 · 132), plus 3 · 16384² · 2 bytes at 2,575 GB/s.
  const double s = 16384;
  const double compute = 2 * s * s * s / (0.803 * 0.848 * 989e12 * 8192.0 / (63 * 132));
  CHECK(g.time_s(s, s, s) == doctest::Approx(compute + 3 * s * s * 2 / 2575e9).epsilon(1e-12));
}

TEST_CASE("dropless routing pads each expert's rows to whole 128-row tiles, in expectation") {
  // An expert with Poisson(1) rows runs one tile unless it receives none: 1 − e^−1 of a tile,
  // where an equal group of one row runs one.
  CHECK(routed_row_tile_factor(1) == doctest::Approx(1 - std::exp(-1.0)).epsilon(1e-12));
  // Poisson(32) almost never passes 128 rows: one tile either way.
  CHECK(routed_row_tile_factor(32) == doctest::Approx(1).epsilon(1e-9));
  // Poisson(128): one tile plus a second whenever it passes 128 rows, P(C > 128) = 0.4765156
  // (the pmf summed directly, in Python's float64), so 1.4765 tiles for equal groups' one.
  CHECK(routed_row_tile_factor(128) == doctest::Approx(1.4765155513).epsilon(1e-9));
  // Poisson(512): four tiles, a fifth with P(C > 512) plus a sixth with P(C > 640):
  // 1.1220622509 (the same sum) over four.
  CHECK(routed_row_tile_factor(512) == doctest::Approx(1.1220622509).epsilon(1e-9));
  // Large means take the normal approximation: Poisson(8192) (sd 90.5) passes 64 tiles about
  // half the time, P = 0.4961 exactly, so 64.4961 / 64 = 1.0077514.
  CHECK(routed_row_tile_factor(8192) == doctest::Approx(1.0077514).epsilon(1e-4));
}
