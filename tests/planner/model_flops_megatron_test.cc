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
