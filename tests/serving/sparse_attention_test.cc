// DeepSeek Sparse Attention (ModelSpec::sparse_attention), hand-derived: the indexer's
// parameters, the keys each query attends to, the indexer's FLOPs, its KV cache and what a
// decode reads. DeepSeek-V3.2: 61 layers, hidden 7,168, q_lora_rank 1,536, 128 heads of
// qk 192 / v 128, an indexer of 64 heads × 128 choosing 2,048 keys.
#include <doctest/doctest.h>

#include "core/attention_span.h"
#include "core/layer_geometry.h"
#include "planner/activation_memory.h"
#include "planner/flop_count.h"
#include "planner/param_count.h"
#include "planner/profile_lookup.h"
#include "serving/decode_step_price.h"
#include "serving/gemm_roofline.h"
#include "serving/kv_cache.h"
#include "serving/step_time.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using meshplan::testing::shipped_model;

namespace {

ModelSpec from_config(const std::string& file) {
  Result<ModelSpec> r = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/hf/" + file);
  REQUIRE(r.ok());
  return *r;
}

// One layer's indexer: wq_b 1,536 → 64 × 128, wk 7,168 → 128, weights_proj 7,168 → 64 and the
// key's LayerNorm (weight and bias, 2 × 128).
constexpr int64_t kIndexerParams = 1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128;

}  // namespace

TEST_CASE(
    "sparse attention: DeepSeek-V3.2's config.json is DeepSeek-V3 plus a 13,959,424-weight "
    "indexer per layer") {
  static_assert(kIndexerParams == 13'959'424);
  const ModelSpec v32 = from_config("deepseek-v3.2.json");
  REQUIRE(v32.sparse_attention.has_value());
  CHECK(v32.sparse_attention->index_heads == 64);
  CHECK(v32.sparse_attention->index_head_dim == 128);
  CHECK(v32.sparse_attention->top_k == 2048);
  const ModelSpec v3 = from_config("deepseek-v3.json");
  CHECK(total_params(v32) == total_params(v3) + 61 * kIndexerParams);
  CHECK(total_params(v32) == 671'877'929'216);
  // The shipped YAML says the same.
  const ModelSpec yaml = shipped_model("deepseek-v3.2");
  CHECK(total_params(yaml) == total_params(v32));
  CHECK(yaml.sparse_attention->top_k == 2048);
  CHECK(yaml.fp8_weight_block.has_value());
}

TEST_CASE("sparse attention: the indexer's maps are replicated on every TP rank") {
  const ModelSpec m = shipped_model("deepseek-v3.2");
  int found = 0;
  for (const LinearMap& map : attention_linears(m)) {
    const std::string name = map.name;
    if (name.rfind("index_", 0) != 0) continue;
    ++found;
    CHECK(map.split == TpSplit::replicated);
    CHECK(map.rank_out(8) == static_cast<double>(map.out));
  }
  CHECK(found == 3);
}

TEST_CASE("sparse attention: a query attends to min(position, top_k) keys") {
  const ModelSpec m = shipped_model("deepseek-v3.2");
  // 4,096 tokens: s·k − k²/2 pairs = 8,388,608 − 2,097,152 = 6,291,456, 1,536 a query.
  CHECK(mean_keys_per_query(m, 0, 4096, true) == 1536);
  CHECK(mean_keys_per_query(m, 60, 4096, true) == 1536);
  // Shorter than top_k: the whole causal prefix, s/2.
  CHECK(mean_keys_per_query(m, 0, 1024, true) == 512);
  // 131,072 tokens: k − k²/(2s) = 2,048 − 16 = 2,032.
  CHECK(mean_keys_per_query(m, 0, 131072, true) == 2032);
  CHECK(attention_kernel_span(m, 0, 131072) == 2048);
  CHECK(local_layer_share(m) == 1);
  // DeepSeek-V3 attends to the whole prefix.
  CHECK(mean_keys_per_query(shipped_model("deepseek-v3"), 0, 4096, true) == 2048);
}

TEST_CASE("sparse attention: the indexer scores the whole prefix, 2 · 64 · 128 FLOPs a key") {
  const ModelSpec m = shipped_model("deepseek-v3.2");
  CHECK(indexer_flops_per_query(m, 4096, true) == 2.0 * 64 * 128 * 2048);
  CHECK(indexer_flops_per_query(m, 4096, false) == 2.0 * 64 * 128 * 4096);
  CHECK(indexer_flops_per_query(shipped_model("deepseek-v3"), 4096, true) == 0);
  // A layer's core attention at 4,096 tokens: 128 heads × (192 + 128) over 1,536 keys, plus the
  // indexer over 2,048.
  FlopOptions causal;
  causal.causal_attention = true;
  const double tokens = 4096;
  const LayerFlops f = layer_forward_flops(m, 3, tokens, 4096, causal);
  CHECK(f.attention_core ==
        doctest::Approx(2 * tokens * 1536 * 128 * 320 + tokens * 2.0 * 64 * 128 * 2048));
  // The indexer's three projections are dense GEMMs of the layer: 2 FLOPs a weight a token.
  const LayerFlops v3 = layer_forward_flops(shipped_model("deepseek-v3"), 3, tokens, 4096, causal);
  CHECK(f.dense_gemms - v3.dense_gemms ==
        doctest::Approx(2 * tokens * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64)));
}

TEST_CASE("sparse attention: the indexer caches 132 bytes a token a layer beside the latent") {
  const ModelSpec m = shipped_model("deepseek-v3.2");
  CHECK(serving::indexer_bytes_per_token_layer(m) == 128 + 4);  // FP8 key, one FP32 scale
  // In FP8 the latent takes FlashMLA's sparse layout: 512 FP8 values, 4 FP32 scales, 64 BF16
  // RoPE values.
  CHECK(serving::kv_bytes_per_token_layer(m, 8, serving::KvFormat::fp8) == 512 + 4 * 4 + 64 * 2);
  CHECK(serving::kv_bytes_per_token(m, 8, 1, serving::KvFormat::fp8) == (656 + 132) * 61);
  CHECK(serving::kv_bytes_per_token(m, 8, 1, serving::KvFormat::bf16) == (2 * 576 + 132) * 61);
  CHECK(serving::kv_bytes_per_token(m, 8, 2, serving::KvFormat::fp8) == (656 + 132) * 31);
  // DeepSeek-V3 (no sparse attention) keeps 576 FP8 elements.
  CHECK(serving::kv_bytes_per_token_layer(shipped_model("deepseek-v3"), 8,
                                          serving::KvFormat::fp8) == 576);
  CHECK(serving::indexer_bytes_per_token_layer(shipped_model("deepseek-v3")) == 0);
}

TEST_CASE(
    "sparse attention: a decode reads top_k latents and every index key, and moves an FP32 "
    "logit per key") {
  serving::DecodeAttention a;
  a.kv_bytes_per_token_layer = 576;  // FP8 latent
  a.index_bytes_per_token_layer = 132;
  a.index_logit_bytes = 8;  // written by the scoring kernel, read by top-k
  a.index_flops_per_key = 2.0 * 64 * 128;
  a.heads_local = 16;  // 128 heads over tp 8
  a.qk_plus_v_dim = 576 + 512;
  a.hbm_bytes_per_s = 1e12;
  a.flops_per_s = 1e20;  // reads bound it
  a.kernel_latency_s = 0;
  // One sequence 8,192 tokens into its context: 2,048 latents and 8,192 index keys and logits.
  const double read_s = (2048.0 * 576 + 8192.0 * (132 + 8)) / 1e12;
  CHECK(a.layer_s(2048, 8192, 2048 * 576, true) == doctest::Approx(read_s));
  a.hbm_bytes_per_s = 1e20;
  a.flops_per_s = 1e12;  // FLOPs bound it
  const double flops = 2.0 * 2048 * 16 * 1088 + 8192.0 * 2 * 64 * 128;
  CHECK(a.layer_s(2048, 8192, 2048 * 576, true) == doctest::Approx(flops / 1e12));
}

TEST_CASE("sparse attention: GLM-5's config.json (glm_moe_dsa) counts 743.9B, its card's 744B") {
  const ModelSpec m = from_config("glm-5-fp8.json");
  REQUIRE(m.sparse_attention.has_value());
  REQUIRE(m.mla.has_value());
  CHECK(m.sparse_attention->index_heads == 32);
  CHECK(m.rope_theta == 1e6);  // rope_parameters.rope_theta (transformers 5)
  CHECK(m.fp8_weight_block.has_value());
  // MLA: q_a 6,144 → 2,048, q_b → 64 × (192 + 64), kv_a → 512 + 64, kv_b 512 → 64 × (192 +
  // 256), o 64 × 256 → 6,144, the q_a and kv_a norms; the indexer: 2,048 → 32 × 128, 6,144 →
  // 128, 6,144 → 32, its key's LayerNorm; two 6,144-wide norms.
  const int64_t attention = int64_t{6144} * 2048 + 2048 * 64 * 256 + 6144 * 576 + 512 * 64 * 448 +
                            64 * 256 * 6144 + 2048 + 512;
  const int64_t indexer = 2048 * 32 * 128 + 6144 * 128 + 6144 * 32 + 2 * 128;
  const int64_t common = attention + indexer + 2 * 6144;
  const int64_t dense = common + 3 * int64_t{6144} * 12288;
  // Router 6,144 → 256, 256 routed experts and one shared, SwiGLU of width 2,048.
  const int64_t moe = common + 6144 * 256 + 257 * 3 * int64_t{6144} * 2048;
  const int64_t total = 3 * dense + 75 * moe + 2 * int64_t{154880} * 6144 + 6144;
  CHECK(total_params(m) == total);
  CHECK(total_params(m) == 743'911'199'232);
  CHECK(m.mtp_layers == 1);  // counted apart (mtp_params)
}

TEST_CASE("sparse attention: a decode step runs the indexer's ten small kernels a layer") {
  const ClusterSpec c = testing::shipped_cluster("dgx-h200-64n");
  Result<CalibrationProfile> p = resolve_profile(c, "", ProfileSearchPath{});
  REQUIRE(p.ok());
  serving::ServingLayout l;
  l.tp = 8;
  serving::StepBatch b;
  b.decodes = b.sampled = 1;
  b.decode_context_tokens = 8192;
  const auto indexer_op = [](const std::vector<serving::StepOp>& ops) {
    for (const serving::StepOp& op : ops)
      if (std::string(op.name).rfind("indexer", 0) == 0) return op.seconds;
    return -1.0;
  };
  const ModelSpec v32 = shipped_model("deepseek-v3.2");
  const serving::StepOps ops =
      serving::StepTimeModel(v32, c, p.value(), l, serving::ServingOptions{}, {}).step_ops(b);
  // One token: each kernel's fixed cost and a few kilobytes (3 of 64 × 128 BF16 queries read and
  // written, 5 of a 128-wide key, the head weights, 2,048 top-k indices).
  const double bytes = 3 * 2.0 * 64 * 128 * 2 + 5 * 2.0 * 128 * 2 + 2.0 * 64 * 4 + 2048.0 * 4;
  CHECK(indexer_op(ops.dense) ==
        doctest::Approx(10 * serving::kKernelLatencyS +
                        bytes / serving::read_bandwidth(p.value(), c.gpu)));
  CHECK(indexer_op(ops.moe) == indexer_op(ops.dense));
  const serving::StepOps v3 = serving::StepTimeModel(shipped_model("deepseek-v3"), c, p.value(), l,
                                                     serving::ServingOptions{}, {})
                                  .step_ops(b);
  CHECK(indexer_op(v3.moe) == -1.0);
  // The step model's decode attention: the index cache's 132 bytes a key and an 8-byte logit.
  const serving::DecodeAttention a =
      serving::StepTimeModel(v32, c, p.value(), l, serving::ServingOptions{}, {})
          .decode_price(1, 1)
          .attention;
  CHECK(a.index_bytes_per_token_layer == 132);
  CHECK(a.index_logit_bytes == 8);
}

TEST_CASE(
    "sparse attention: training keeps the indexer's queries, head weights, int64 top-k indices "
    "and keys") {
  const ModelSpec v32 = shipped_model("deepseek-v3.2"), v3 = shipped_model("deepseek-v3");
  ActivationShape a;
  a.seq_len = 4096;
  // 4,096 rows × (64 × 128 BF16 queries + 64 BF16 weights + 2,048 int64 indices) + BF16 keys
  // (128 wide) for the 4,096 keys and the key norm's 4,096 inputs.
  constexpr double kOneRank = 4096.0 * (2 * 64 * 128 + 2 * 64 + 8 * 2048) + 2 * 128 * (4096 + 4096);
  static_assert(kOneRank == 136'839'168);
  CHECK(indexer_activation_bytes(v32, a) == kOneRank);
  CHECK(indexer_activation_bytes(v3, a) == 0);
  // What a layer stores grows by exactly that, in the attention's share recompute keeps.
  const LayerActivations with = layer_activations(v32, 5, a), without = layer_activations(v3, 5, a);
  CHECK(with.attention_other - without.attention_other == doctest::Approx(kOneRank));
  CHECK(with.mlp == without.mlp);
  CHECK(with.attention_scores == without.attention_scores);
  // TP 8 with sequence parallelism: the rank's 512 query rows, every key, and the gathered
  // layer input (7,168) and query latent (1,536) the indexer's replicated linears keep.
  a.tp = 8;
  a.sp = true;
  CHECK(indexer_activation_bytes(v32, a) == 512.0 * (2 * 64 * 128 + 2 * 64 + 8 * 2048) +
                                                2 * 128 * (4096 + 4096) +
                                                2 * 4096.0 * (7168 + 1536));
  // Sequences shorter than top_k keep one index per key.
  a = ActivationShape{};
  a.seq_len = 1024;
  CHECK(indexer_activation_bytes(v32, a) ==
        1024.0 * (2 * 64 * 128 + 2 * 64 + 8 * 1024) + 2 * 128 * (1024 + 1024));
}

TEST_CASE(
    "sparse attention: a prompt chunk computes every query's top_k slots, a window only the "
    "keys it has") {
  const ModelSpec v32 = shipped_model("deepseek-v3.2");
  // 128 prompt tokens on an empty cache: 128 × 2,048 slots, though a query has at most 128 keys.
  CHECK(serving::chunk_local_keys(v32, {128, 0}) == 128.0 * 2048);
  CHECK(serving::chunk_local_keys(v32, {1024, 8192}) == 1024.0 * 2048);
  // A sliding window (Mistral-style, 4,096) counts the keys each query has: 1 + 2 + … + 128.
  ModelSpec slide = shipped_model("llama3-8b");
  slide.window = AttentionWindow{4096, WindowKind::sliding, 0};
  CHECK(serving::chunk_local_keys(slide, {128, 0}) == 128.0 * 129 / 2);
}

TEST_CASE(
    "sparse attention: vLLM pads a rank's query heads to FlashMLA's 64 on Hopper, 128 on "
    "Blackwell") {
  const auto heads = [](const char* model, const char* cluster, serving::Engine engine,
                        int64_t tp) {
    const ClusterSpec c = testing::shipped_cluster(cluster);
    Result<CalibrationProfile> p = resolve_profile(c, "", ProfileSearchPath{});
    REQUIRE(p.ok());
    serving::ServingLayout l;
    l.tp = tp;
    serving::ServingOptions o;
    o.engine = engine;
    return serving::StepTimeModel(shipped_model(model), c, p.value(), l, o, {})
        .decode_price(1, 1)
        .attention.heads_local;
  };
  // 128 heads over tp 8: 16 a rank, computed as 64 (H200) or 128 (B200) under vLLM.
  CHECK(heads("deepseek-v3.2", "dgx-h200-64n", serving::Engine::vllm, 8) == 64);
  CHECK(heads("deepseek-v3.2", "dgx-b200-64n", serving::Engine::vllm, 8) == 128);
  CHECK(heads("deepseek-v3.2", "dgx-h200-64n", serving::Engine::vllm, 2) == 64);
  // Other engines, and models without sparse attention, keep their heads.
  CHECK(heads("deepseek-v3.2", "dgx-h200-64n", serving::Engine::sglang, 8) == 16);
  CHECK(heads("deepseek-v3", "dgx-h200-64n", serving::Engine::vllm, 8) == 16);
}
