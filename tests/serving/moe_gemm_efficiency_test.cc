// The engines' fused-MoE efficiencies (engine_preset.h MoeGemmEfficiency) come from the measured
// kernel times of tests/data/aiconfigurator_moe_kernels.csv: each figure is the median, over
// that engine's and weight format's rows whose roofline is compute-bound, of the roofline's
// compute time at the dense rate over the measured time. A figure edited by hand, a row dropped
// from the file or a change to the roofline's arithmetic fails here.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "planner/profile_lookup.h"
#include "serving/engine_preset.h"
#include "serving/gemm_roofline.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::serving;
using meshplan::testing::shipped_cluster;
using meshplan::testing::shipped_model;

namespace {

struct KernelRow {
  std::string framework, dtype;
  double tokens = 0, hidden = 0, inter = 0, top_k = 0, experts = 0, tp = 0, latency_s = 0;
};

std::vector<KernelRow> kernel_rows() {
  std::ifstream in(std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/aiconfigurator_moe_kernels.csv");
  REQUIRE(in.good());
  std::vector<KernelRow> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      CHECK(line ==
            "framework,version,kernel_source,moe_dtype,model,num_tokens,hidden_size,inter_size,"
            "topk,num_experts,moe_tp_size,latency_ms");
      header = false;
      continue;
    }
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) f.push_back(cell);
    REQUIRE(f.size() == 12);
    rows.push_back({f[0], f[3], std::stod(f[5]), std::stod(f[6]), std::stod(f[7]), std::stod(f[8]),
                    std::stod(f[9]), std::stod(f[10]), std::stod(f[11]) * 1e-3});
  }
  return rows;
}

// The row's two expert GEMMs (the fused gate/up, split by columns; down, split by rows) as the
// serving step prices them for ep 1 (StepTimeModel::linear_s: every expert touched at these token
// counts, tokens · top_k / experts rows each).
struct ExpertRoofline {
  double compute_s = 0, read_s = 0;
};

ExpertRoofline expert_roofline(const GemmRoofline& g, const KernelRow& r, double weight_bytes) {
  const double rows = r.tokens * r.top_k / r.experts, inter = r.inter / r.tp;
  return {g.compute_s(rows, 2 * inter, r.hidden, r.experts) +
              g.compute_s(rows, r.hidden, inter, r.experts),
          g.read_s(rows, 2 * inter, r.hidden, r.experts, weight_bytes) +
              g.read_s(rows, r.hidden, inter, r.experts, weight_bytes)};
}

// engine × format × width point (MoeWidthCurve: the power of two nearest the row's expert width,
// 2^9 and 2^14 taking the narrower and wider rows) → the median of compute time over measured
// time on compute-bound rows, at most 1. MXFP4 rows (w4a16_mxfp4, the gpt-oss shapes only) are
// timed at the BF16 rate with their 0.5 + 1/32 bytes a weight, and cover a few widths: a point
// without rows takes the nearest point with rows (the narrower on a tie).
std::map<std::string, std::array<double, 6>> measured_efficiencies() {
  const ClusterSpec cluster = shipped_cluster("dgx-h200-64n");
  Result<CalibrationProfile> p = resolve_profile(cluster, "", ProfileSearchPath{});
  REQUIRE(p.ok());
  const GpuSpec& gpu = cluster.gpu;
  const GemmRoofline bf16(p.value(), gpu, Precision::bf16,
                          resolve_calibration(p.value(), gpu, Precision::bf16));
  const GemmRoofline fp8(p.value(), gpu, Precision::fp8,
                         resolve_calibration(p.value(), gpu, Precision::fp8));
  std::map<std::string, std::array<std::vector<double>, 6>> ratios;
  for (const KernelRow& r : kernel_rows()) {
    const bool is_bf16 = r.dtype == "bfloat16", is_mxfp4 = r.dtype == "w4a16_mxfp4";
    const ExpertRoofline e = expert_roofline(is_bf16 || is_mxfp4 ? bf16 : fp8, r,
                                             is_bf16    ? 2
                                             : is_mxfp4 ? 0.5 + 1.0 / 32
                                                        : 1);
    if (e.compute_s < e.read_s) continue;  // bound by the weights' reads, not the math
    const long point = std::clamp(std::lround(std::log2(r.inter / r.tp)) - 9L, 0L, 5L);
    ratios[r.framework + " " + r.dtype][static_cast<size_t>(point)].push_back(e.compute_s /
                                                                              r.latency_s);
  }
  std::map<std::string, std::array<double, 6>> medians;
  for (auto& [key, points] : ratios) {
    const bool sparse = key.ends_with("w4a16_mxfp4");
    for (size_t i = 0; i < points.size(); ++i) {
      CAPTURE(key);
      CAPTURE(i);
      size_t from = i;
      for (size_t d = 1; sparse && points[from].empty() && d < points.size(); ++d)
        if (i >= d && !points[i - d].empty())
          from = i - d;
        else if (i + d < points.size() && !points[i + d].empty())
          from = i + d;
      std::vector<double>& v = points[from];
      REQUIRE(!v.empty());
      std::sort(v.begin(), v.end());
      const size_t n = v.size();
      medians[key][i] = std::min(1.0, n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
    }
  }
  return medians;
}

void check_curve(const MoeWidthCurve& curve, const std::array<double, 6>& measured) {
  for (size_t i = 0; i < measured.size(); ++i) {
    CAPTURE(i);
    CHECK(curve.share[i] == doctest::Approx(measured[i]).epsilon(0.005));
  }
}

}  // namespace

TEST_CASE(
    "moe gemm efficiency: each engine's curves are the medians of the measured kernel table") {
  const std::map<std::string, std::array<double, 6>> m = measured_efficiencies();
  for (const auto& [key, v] : m)
    MESSAGE(key << ": " << v[0] << ", " << v[1] << ", " << v[2] << ", " << v[3] << ", " << v[4]
                << ", " << v[5]);
  const MoeGemmEfficiency& sglang = engine_preset(Engine::sglang).moe_gemm;
  const MoeGemmEfficiency& vllm = engine_preset(Engine::vllm).moe_gemm;
  const MoeGemmEfficiency& trtllm = engine_preset(Engine::trtllm).moe_gemm;
  REQUIRE(m.size() == 10);  // SGLang's table has no per-tensor FP8 rows, nor MXFP4
  check_curve(sglang.bf16, m.at("SGLang bfloat16"));
  check_curve(sglang.fp8_block, m.at("SGLang fp8_block"));
  // SGLang's per-tensor FP8 runs the same Triton kernel without the block scales' loads: the
  // block-scaled curve stands for it, a bound from below.
  CHECK(sglang.fp8.share == sglang.fp8_block.share);
  check_curve(vllm.bf16, m.at("VLLM bfloat16"));
  check_curve(vllm.fp8, m.at("VLLM fp8"));
  check_curve(vllm.fp8_block, m.at("VLLM fp8_block"));
  check_curve(trtllm.bf16, m.at("TRTLLM bfloat16"));
  check_curve(trtllm.fp8, m.at("TRTLLM fp8"));
  check_curve(trtllm.fp8_block, m.at("TRTLLM fp8_block"));
  check_curve(vllm.mxfp4, m.at("VLLM w4a16_mxfp4"));
  check_curve(trtllm.mxfp4, m.at("TRTLLM w4a16_mxfp4"));
  // SGLang's MXFP4 MoE on Hopper runs the Triton kernels vLLM's does (triton_kernels matmul_ogs):
  // vLLM's curve stands for it, unmeasured.
  CHECK(sglang.mxfp4.share == vllm.mxfp4.share);
}

TEST_CASE("moe gemm efficiency: a curve is linear in log2 of the width between its points") {
  MoeWidthCurve c;
  c.share = {0.2, 0.4, 0.5, 0.7, 0.8, 0.9};
  CHECK(c.at(512) == 0.2);
  CHECK(c.at(100) == 0.2);  // narrower than 2^9: the first point
  CHECK(c.at(1024) == doctest::Approx(0.4));
  CHECK(c.at(std::sqrt(2.0) * 1024) == doctest::Approx(0.45));  // halfway to 2^11
  CHECK(c.at(16384) == 0.9);
  CHECK(c.at(1 << 20) == 0.9);  // wider than 2^14: the last point
}

TEST_CASE(
    "moe gemm efficiency: block-scaled FP8 where the model's checkpoint is, BF16 and INT4 apart") {
  ServingOptions o;
  o.engine = Engine::vllm;
  const MoeGemmEfficiency& e = engine_preset(Engine::vllm).moe_gemm;
  const ModelSpec block = shipped_model("deepseek-v3"), plain = shipped_model("mixtral-8x7b");
  REQUIRE(block.fp8_weight_block.has_value());
  REQUIRE(!plain.fp8_weight_block.has_value());
  o.weights = WeightFormat::bf16;
  CHECK(moe_gemm_efficiency(o, block, 2048) == e.bf16.at(2048));
  o.weights = WeightFormat::fp8;
  CHECK(moe_gemm_efficiency(o, block, 2048) == e.fp8_block.at(2048));
  CHECK(moe_gemm_efficiency(o, plain, 1792) == e.fp8.at(1792));
  CHECK(e.fp8.at(1792) != e.fp8_block.at(1792));
  o.weights = WeightFormat::int4;
  CHECK(moe_gemm_efficiency(o, plain, 1792) == 1);
  o.weights = WeightFormat::mxfp4;
  CHECK(moe_gemm_efficiency(o, plain, 1792) == e.mxfp4.at(1792));
}
