#include "planner/model_flops_megatron.h"

#include <doctest/doctest.h>

#include "planner/model_flops_eq3.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

// 2 layers, hidden 8, 2 heads of dim 4 sharing 1 KV group, FFN 16, vocab 100, seq 4.
ModelSpec tiny() {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 1;
  m.head_dim = 4;
  m.ffn_hidden = 16;
  m.vocab = 100;
  m.mlp = MlpKind::gelu;
  m.training.seq_len = 4;
  return m;
}

}  // namespace

TEST_CASE("Megatron pads the vocabulary to a multiple of 128·tp") {
  CHECK(megatron_padded_vocab(100, 1) == 128);
  CHECK(megatron_padded_vocab(100, 2) == 256);
  CHECK(megatron_padded_vocab(131072, 8) == 131072);
  CHECK(megatron_padded_vocab(50257, 1) == 50304);
}

TEST_CASE("Megatron's num_floating_point_operations on a hand-sized model") {
  // 12·B·s·L·h² = 12·1·4·2·64 = 6144, times
  //   attention (1 + 1/2 + 4/8)·(4·2/8) = 2, MLP 16/8 = 2, logits 128/(2·2·8) = 4: 8.
  CHECK(megatron_flops_per_step(tiny(), 1, 1) == doctest::Approx(49152));
  // TP 2 pads the vocabulary to 256: logits 8, total 12.
  CHECK(megatron_flops_per_step(tiny(), 1, 2) == doctest::Approx(73728));
  // SwiGLU counts its MLP 3/2 times: 3 instead of 2; and B = 2 doubles it all.
  ModelSpec swiglu = tiny();
  swiglu.mlp = MlpKind::swiglu;
  CHECK(megatron_flops_per_step(swiglu, 2, 1) == doctest::Approx(2 * 6144 * 9));
}

TEST_CASE("for GPT-3-style models it is eq. 3 without the recompute pass") {
  // Model FLOPs of Narayanan et al. 2021 (three passes, no recompute; DESIGN.md §3):
  // 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)), V already a multiple of 128.
  ModelSpec m = gpt_like(24, 2048, 16, 51200, 2048);
  const double B = 8, s = 2048, L = 24, h = 2048, V = 51200;
  const double expected = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  CHECK(megatron_flops_per_step(m, 8, 1) == doctest::Approx(expected).epsilon(1e-12));
  CHECK(megatron_flops_per_step(m, 8, 1) < eq3_flops_per_step(m, 8));
}

TEST_CASE("Megatron-LM's count since 8873b55d halves the scores-and-values term (causal)") {
  // 6144 times attention (1 + 1/2 + 4/16)·(4·2/8) = 1.75, MLP 2, logits 4: 7.75.
  CHECK(megatron_flops_per_step(tiny(), 1, 1, MegatronFlops::causal) ==
        doctest::Approx(6144 * 7.75));
  // An MoE model's dense layers count their own width there, not the experts'; r0.8 counts
  // every layer as MoE. One dense layer of FFN 32, then one MoE layer of 2 experts of 8 a token.
  ModelSpec moe = tiny();
  moe.ffn_hidden = 32;
  moe.moe = MoeSpec{};
  moe.moe->experts = 4;
  moe.moe->top_k = 2;
  moe.moe->expert_ffn_hidden = 8;
  moe.moe->first_dense_layers = 1;
  // r0.8: attention 2, MLP 2·8/8 = 2, logits 4: 8. Causal: 1.75 + (32/8 + 2)/2 = 3, + 4: 8.75.
  CHECK(megatron_flops_per_step(moe, 1, 1) == doctest::Approx(6144 * 8));
  CHECK(megatron_flops_per_step(moe, 1, 1, MegatronFlops::causal) == doctest::Approx(6144 * 8.75));
}

TEST_CASE("the MoE model zoo's 4K table reports TFLOP/s by the causal count") {
  // Qwen3-235B-A22B (94 layers, hidden 4096, 64 heads of 128, 4 KV groups, 128 experts of 1536,
  // top-8, SwiGLU, vocabulary 151,936), 2048 × 4096 tokens a step, TP 2: its EP 32 layout took
  // 19.7 s a step on 256 H100s and the table says 245 TFLOP/s per GPU
  // (yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md at e8650517).
  ModelSpec m = shipped_model("qwen3-235b-a22b");
  m.training.seq_len = 4096;
  const double causal = megatron_flops_per_step(m, 2048, 2, MegatronFlops::causal) / 256 / 19.7;
  const double full = megatron_flops_per_step(m, 2048, 2) / 256 / 19.7;
  CHECK(causal / 1e12 == doctest::Approx(246.2).epsilon(0.001));
  CHECK(full / 1e12 == doctest::Approx(277.7).epsilon(0.001));
}
