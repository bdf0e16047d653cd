#include "planner/gemm_memo.h"

#include <doctest/doctest.h>

#include "tests/test_inputs.h"

using namespace meshplan;

namespace {
// A bf16 profile with measured samples, so that time_s interpolates between them (the walk the
// memo saves).
CalibrationProfile sampled_profile() {
  CalibrationProfile p;
  p.hbm_bytes_per_s = 3e12;
  p.gemm["bf16"].max_efficiency = 0.8;
  p.gemm["bf16"].samples.push_back({4096, 4096, 4096, 700e12, 0, 0, "ok"});
  p.gemm["bf16"].samples.push_back({1024, 8192, 2048, 550e12, 0, 0, "ok"});
  p.gemm["bf16"].samples.push_back({16384, 1024, 8192, 610e12, 0, 0, "ok"});
  return p;
}
}  // namespace

TEST_CASE("a remembered GEMM time is the model's own, bit for bit, however often it is asked") {
  const CalibrationProfile p = sampled_profile();
  const GemmModel model(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  GemmMemo memo(model);
  int shapes = 0;
  for (int pass = 0; pass < 3; ++pass) {
    shapes = 0;
    for (double m : {1.0, 37.0, 512.0, 4096.0, 16384.0})
      for (double n : {128.0, 4096.0, 7168.0})
        for (double k : {64.0, 2048.0, 8192.0})
          for (double batch : {1.0, 8.0}) {
            CHECK(memo.time_s(m, n, k, batch) == model.time_s(m, n, k, batch));
            ++shapes;
          }
  }
  CHECK(memo.size() == static_cast<size_t>(shapes));  // 90 shapes, each kept once
  // The batch count is part of the shape: 8 GEMMs share waves that one does not.
  CHECK(memo.time_s(512, 4096, 2048, 8) != memo.time_s(512, 4096, 2048, 1));
}

TEST_CASE("the GEMM memo empties itself rather than hold more than kMaxShapes answers") {
  const CalibrationProfile p = sampled_profile();
  const GemmModel model(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  GemmMemo memo(model);
  const auto limit = static_cast<int64_t>(GemmMemo::kMaxShapes);
  for (int64_t i = 1; i <= limit; ++i) memo.time_s(static_cast<double>(i), 4096, 4096);
  CHECK(memo.size() == GemmMemo::kMaxShapes);
  // The next new shape starts it again; the answers stay the model's.
  CHECK(memo.time_s(static_cast<double>(limit + 1), 4096, 4096) ==
        model.time_s(static_cast<double>(limit + 1), 4096, 4096));
  CHECK(memo.size() == 1);
  CHECK(memo.time_s(7, 4096, 4096) == model.time_s(7, 4096, 4096));
  CHECK(memo.size() == 2);
}

TEST_CASE("a remembered row-tile factor is routed_row_tile_factor's own, bit for bit") {
  const CalibrationProfile p = sampled_profile();
  const GemmModel model(p, *find_gpu("H100-SXM-80GB"), Precision::bf16);
  GemmMemo memo(model);
  for (int pass = 0; pass < 2; ++pass)
    for (double rows : {0.5, 3.0, 127.5, 128.0, 512.0, 8192.0, 100000.0})
      CHECK(memo.row_tile_factor(rows) == routed_row_tile_factor(rows));
  // gemm_model.h's figures: E[ceil(C/128)] over ceil(mean/128) for Poisson counts C.
  CHECK(memo.row_tile_factor(128) == doctest::Approx(1.48).epsilon(0.005));
  CHECK(memo.row_tile_factor(512) == doctest::Approx(1.12).epsilon(0.005));
  CHECK(memo.row_tile_factor(8192) == doctest::Approx(1.01).epsilon(0.005));
  // GEMM shapes and row counts are kept apart.
  CHECK(memo.size() == 0);
}
