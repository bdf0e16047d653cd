// serving/fp8_block_split.h: the tensor-parallel splits SGLang refuses for a block-quantized FP8
// checkpoint, with the shard sizes its own errors report (Qwen3-235B-A22B-FP8 on tp 8: 1536 / 8 =
// 192; DeepSeek-R1's dense MLP on tp 32: 18432 / 32 = 576, sgl-project/sglang#3345). vLLM and
// TensorRT-LLM load them.
#include "serving/fp8_block_split.h"

#include <doctest/doctest.h>

#include <string>

#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::serving;

namespace {

ModelSpec load(const std::string& relative) {
  Result<ModelSpec> r = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

ServingLayout layout(int64_t tp, int64_t ep, bool attention_dp = false) {
  ServingLayout l;
  l.tp = tp;
  l.ep = ep;
  l.attention_dp = attention_dp;
  return l;
}

const std::string kRefuses =
    "refuses to load the model's FP8 checkpoint, quantized in 128 × 128 blocks "
    "(fp8_weight_block), split so: ";

}  // namespace

TEST_CASE("Qwen3-235B-A22B-FP8: experts split 8 ways are refused, 4 ways or whole are loaded") {
  const ModelSpec m = load("tests/data/hf/qwen3-235b-a22b-fp8.json");
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 1)) ==
        kRefuses +
            "its experts' gate/up output shard is 1536 / 8 = 192, not a multiple of 128 (a larger "
            "ep splits each expert fewer ways)");
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 8)).empty());
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 2)).empty());  // 384
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(4, 1)).empty());
  // vLLM (block refinement; AIConfigurator measured vLLM 0.18.0 on such a split) and
  // TensorRT-LLM (block scales sized by ceiling division) load it; BF16 weights have no blocks.
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::vllm, layout(8, 1)).empty());
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::trtllm, layout(8, 1)).empty());
  CHECK(fp8_block_refusal(m, WeightFormat::bf16, Engine::sglang, layout(8, 1)).empty());
  CHECK(fp8_block_refusal(load("models/qwen3-235b-a22b.yaml"), WeightFormat::fp8, Engine::sglang,
                          layout(8, 1)) ==
        fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 1)));
}

TEST_CASE("Qwen3-30B-A3B-FP8: its 768-wide experts load on tp 2, not on tp 4") {
  const ModelSpec m = load("tests/data/hf/qwen3-30b-a3b-fp8.json");
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(2, 1)).empty());
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(4, 1)) ==
        kRefuses +
            "its experts' gate/up output shard is 768 / 4 = 192, not a multiple of 128 (a larger "
            "ep splits each expert fewer ways)");
}

TEST_CASE("DeepSeek-V3 loads on every tp of a node, its dense MLP is refused on tp 32") {
  const ModelSpec m = load("models/deepseek-v3.yaml");
  for (int64_t tp : {1, 2, 4, 8}) {
    CAPTURE(tp);
    CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(tp, 1)).empty());
    CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(tp, 1, true)).empty());
  }
  // MLA's projections split 32 ways are whole blocks (128 × 192 / 32 = 768, 128 × 256 / 32 =
  // 1024, 128 × 128 / 32 = 512); the first three layers' dense MLP is not.
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(32, 32)) ==
        kRefuses + "its dense MLP gate/up output shard is 18432 / 32 = 576, not a multiple of 128");
  // Under attention-DP attention and dense layers stay whole: only the experts split (2048 / 32).
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(32, 1, true)) ==
        kRefuses +
            "its experts' gate/up output shard is 2048 / 32 = 64, not a multiple of 128 (a larger "
            "ep splits each expert fewer ways)");
}

TEST_CASE("attention shards: KV heads replicated past their count hold one head each") {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 512;
  m.heads = 8;
  m.kv_heads = 2;
  m.head_dim = 64;
  m.ffn_hidden = 1024;
  m.fp8_weight_block = WeightBlock{128, 128};
  // tp 2: Q 512 / 2 = 256, K/V 128 / 2 = 64.
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(2, 1)) ==
        kRefuses + "its k_proj and v_proj output shard is 128 / 2 = 64, not a multiple of 128");
  // tp 4: two KV heads over four ranks, one 64-wide head on each.
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(4, 1)) ==
        kRefuses +
            "its k_proj and v_proj output (one KV head per rank) shard is 128 / 2 = 64, not a "
            "multiple of 128");
  m.head_dim = 128;
  m.heads = 4;
  // o_proj's input: 512 / 8 = 64 (q_proj's output is checked first: the same 64).
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 1)) ==
        kRefuses + "its q_proj output shard is 512 / 8 = 64, not a multiple of 128");
  m.fp8_weight_block = WeightBlock{64, 128};
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 1)) ==
        "refuses to load the model's FP8 checkpoint, quantized in 64 × 128 blocks "
        "(fp8_weight_block), split so: its o_proj input shard is 512 / 8 = 64, not a multiple of "
        "128");
}

TEST_CASE("MiniMax-M2.5's FP8 release: 1536-wide experts refused on tp 8, loaded with ep 8") {
  const ModelSpec m = load("tests/data/hf/minimax-m2.5.json");
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 1)) ==
        kRefuses +
            "its experts' gate/up output shard is 1536 / 8 = 192, not a multiple of 128 (a larger "
            "ep splits each expert fewer ways)");
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(8, 8)).empty());
  CHECK(fp8_block_refusal(m, WeightFormat::fp8, Engine::sglang, layout(4, 1)).empty());
}
