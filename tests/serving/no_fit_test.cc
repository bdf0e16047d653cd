// Where no serving layout fits: the nearest layout's shortfall and what would make one fit.
#include "serving/no_fit.h"

#include <doctest/doctest.h>

#include "serving/engine_preset.h"
#include "tests/serving/serving_test_problem.h"

using namespace meshplan::serving;

namespace {

// `model` on `gpus` of `cluster`, vLLM, BF16 weights and KV cache, `requests` requests of
// isl + osl tokens all at once.
ServingProblem offline(const std::string& model, const std::string& cluster, int64_t gpus,
                       int64_t isl, int64_t osl, int64_t requests) {
  ServingProblem p = meshplan::testing::shipped_serving_problem(model, cluster, gpus);
  p.workload.isl = isl;
  p.workload.osl = osl;
  p.workload.load = LoadKind::offline;
  p.workload.requests = requests;
  return p;
}

// vLLM's rule on the nearest layout's memory: 0.9 of the GPU for everything, less the rest.
double vllm_budget(const ServingMemory& m) {
  return 0.9 * m.capacity_bytes - m.weight_bytes - m.activation_bytes - m.reserved_bytes;
}

}  // namespace

TEST_CASE(
    "no fit: llama3-405b in BF16 on one node is short by its weights and fits in INT4 or FP8") {
  const ServingProblem p = offline("llama3-405b", "dgx-h100-1n", 8, 2000, 500, 100);
  const std::optional<NoFit> f = explain_no_fit(p);
  REQUIRE(f.has_value());
  CHECK(f->nearest.replica_gpus() == 8);
  CHECK(f->weights == WeightFormat::bf16);
  // One request: 2,500 tokens in 16-token blocks, 2,512; per token and GPU at tp 8, 126 layers
  // × 1 KV head × 128 × 2 (K, V) × 2 bytes = 64,512 bytes.
  CHECK(f->memory.tokens_per_request == 2512);
  CHECK(f->request_kv_bytes == doctest::Approx(2512.0 * 64512));
  CHECK(f->signed_budget_bytes == doctest::Approx(vllm_budget(f->memory)));
  CHECK(f->signed_budget_bytes < 0);  // 810 GB of weights over 8 GPUs exceed 0.9 of 80 GB
  CHECK(f->short_bytes() == doctest::Approx(f->request_kv_bytes - f->signed_budget_bytes));
  // INT4 (0.52 bytes a weight, some 210 GB) needs 4 GPUs, FP8 (some 410 GB) the node's 8; no
  // more GPUs at BF16 within the node.
  REQUIRE(f->remedies.size() == 2);
  CHECK(f->remedies[0].flags == "--weights int4");
  CHECK(f->remedies[0].weights == WeightFormat::int4);
  CHECK(f->remedies[0].layout.replica_gpus() == 4);
  CHECK(f->remedies[0].max_concurrency > 0);
  CHECK(f->remedies[1].flags == "--weights fp8");
  CHECK(f->remedies[1].layout.replica_gpus() == 8);
}

TEST_CASE(
    "no fit: more GPUs in a larger cluster are named after the lighter formats needing fewer") {
  // 810 GB of BF16 weights fit 16 GPUs (tp8 pp2), as FP8 fits 8: FP8 is named, on fewer GPUs.
  const ServingProblem p = offline("llama3-405b", "dgx-h100-64n", 8, 2000, 500, 100);
  const std::optional<NoFit> f = explain_no_fit(p);
  REQUIRE(f.has_value());
  REQUIRE(f->remedies.size() == 3);
  CHECK(f->remedies[0].flags == "--weights int4");
  CHECK(f->remedies[1].flags == "--weights fp8");
  CHECK(f->remedies[2].flags == "--gpus 16");
  CHECK(f->remedies[2].weights == WeightFormat::bf16);
  CHECK(f->remedies[2].layout.replica_gpus() == 16);
}

TEST_CASE("no fit: a 500000-token request on one GPU fits with an FP8 KV cache or a second GPU") {
  const ServingProblem p = offline("llama3-8b", "dgx-h100-1n", 1, 500000, 100, 10);
  const std::optional<NoFit> f = explain_no_fit(p);
  REQUIRE(f.has_value());
  // 500,100 tokens in blocks of 16: 500,112; at tp 1, 32 layers × 8 KV heads × 128 × 2 × 2 =
  // 131,072 bytes a token: 61.05 GiB, more than the 53.5 GiB vLLM's rule leaves.
  CHECK(f->memory.tokens_per_request == 500112);
  CHECK(f->request_kv_bytes == doctest::Approx(500112.0 * 131072));
  CHECK(f->signed_budget_bytes == doctest::Approx(vllm_budget(f->memory)));
  CHECK(f->signed_budget_bytes > 0);
  REQUIRE(f->remedies.size() == 3);
  CHECK(f->remedies[0].flags == "--weights int4");
  CHECK(f->remedies[1].flags == "--kv fp8");
  CHECK(f->remedies[1].kv == KvFormat::fp8);
  CHECK(f->remedies[1].layout.replica_gpus() == 1);
  CHECK(f->remedies[2].flags == "--gpus 2");
  CHECK(f->remedies[2].layout.tp == 2);
}

TEST_CASE("no fit: nothing to explain where a layout fits and nothing to offer past the cluster") {
  CHECK_FALSE(explain_no_fit(offline("llama3-8b", "dgx-h100-1n", 1, 2000, 500, 10)).has_value());
  // 2,000,100 tokens of llama3-405b's cache are some 120 GiB per GPU at tp 8 (pp splits the
  // layers as tp the heads): more than any format leaves on one node.
  const std::optional<NoFit> f =
      explain_no_fit(offline("llama3-405b", "dgx-h100-1n", 8, 2000000, 100, 10));
  REQUIRE(f.has_value());
  CHECK(f->remedies.empty());
}

TEST_CASE("no fit: a given layout's shortfall is taken at the weight format asked") {
  ServingProblem p = offline("llama3-405b", "dgx-h100-1n", 8, 128, 128, 10);
  const ServingLayout tp1{1, 1, 1, 1, 0, false};
  const NoFit f = layout_shortfall(p, tp1);
  CHECK(f.nearest.tp == 1);
  CHECK(f.weights == WeightFormat::bf16);
  // 256 tokens × 126 layers × 8 KV heads × 128 × 2 × 2 bytes.
  CHECK(f.request_kv_bytes == doctest::Approx(256.0 * 516096));
  p.options.weights = WeightFormat::fp8;
  CHECK(layout_shortfall(p, tp1).memory.weight_bytes < f.memory.weight_bytes);
}
