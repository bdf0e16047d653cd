// calibrate/cpu_benchmarker.cc: a real (small) CPU calibration yields a profile that parses.
#include "calibrate/cpu_benchmarker.h"

#include <doctest/doctest.h>

#include "calibrate/calibration_run.h"

namespace meshplan::calibrate {
namespace {

TEST_CASE("cpu GEMM and copy bandwidth are positive and checked") {
  CpuBenchmarker cpu;
  auto g = cpu.gemm({64, 32, 16, "t"}, "fp32", {1, 3});
  REQUIRE(g.ok());
  CHECK(g->median_s > 0);
  CHECK(g->p95_s >= g->median_s);
  auto h = cpu.hbm(1 << 20, {1, 3});
  REQUIRE(h.ok());
  CHECK(h->copy_bytes_per_s > 0);
  CHECK_FALSE(cpu.gemm({64, 64, 64, "t"}, "bf16", {1, 1}).ok());
  CHECK_FALSE(cpu.gemm({1 << 14, 1 << 14, 1 << 14, "t"}, "fp32", {1, 1}).ok());  // too large
  CHECK(cpu.collective_group_sizes().empty());
}

TEST_CASE("a quick cpu calibration produces a profile that parses and says it has no collectives") {
  CpuBenchmarker cpu;
  CalibrationPlan plan = cpu_plan(true);
  plan.hbm_bytes = 1 << 20;
  auto r = run_calibration(cpu, plan);
  REQUIRE(r.ok());
  REQUIRE(r->gemm.count("fp32") == 1);
  for (const auto& s : r->gemm.at("fp32").samples) CHECK(s.status == "ok");
  CHECK(r->collectives.empty());
  CHECK(r->notes[0] == "backend has no collectives: none measured");
  auto back = parse_profile_yaml(render_profile_yaml(*r), "cpu.yaml");
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : format_diagnostics(back.errors())));
  CHECK(render_profile_yaml(*back) == render_profile_yaml(*r));
}

}  // namespace
}  // namespace meshplan::calibrate
