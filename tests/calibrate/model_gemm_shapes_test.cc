// calibrate/model_gemm_shapes.cc: per-layer GEMM shapes at a TP degree.
#include "calibrate/model_gemm_shapes.h"

#include <doctest/doctest.h>

#include "tests/test_inputs.h"

namespace meshplan::calibrate {
namespace {

ModelSpec llama3_8b() { return testing::shipped_model("llama3-8b"); }

TEST_CASE("llama3-8b at tp=2: qkv, attention out, swiglu up/gate, down and logits") {
  auto shapes = model_gemm_shapes(llama3_8b(), 2, 8192);  // 2 sequences of 4096
  // qkv: out = (4096 + 2·1024)/2 = 3072; attn_out: in = 4096/2 = 2048;
  // mlp_up: out = 2·14336/2 = 14336; mlp_down: in = 14336/2 = 7168; logits: 128256/2 = 64128.
  REQUIRE(shapes.size() == 15);
  CHECK(shapes[0] == GemmShape{8192, 3072, 4096, "fwd qkv"});
  CHECK(shapes[1] == GemmShape{8192, 4096, 3072, "dgrad qkv"});
  CHECK(shapes[2] == GemmShape{4096, 3072, 8192, "wgrad qkv"});
  CHECK(shapes[3] == GemmShape{8192, 4096, 2048, "fwd attn_out"});
  CHECK(shapes[5] == GemmShape{2048, 4096, 8192, "wgrad attn_out"});
  CHECK(shapes[6] == GemmShape{8192, 14336, 4096, "fwd mlp_up"});
  CHECK(shapes[9] == GemmShape{8192, 4096, 7168, "fwd mlp_down"});
  CHECK(shapes[12] == GemmShape{8192, 64128, 4096, "fwd logits"});
}

TEST_CASE("repeated shapes are listed once") {
  ModelSpec m = llama3_8b();
  m.kv_heads = 32;  // MHA: qkv out = 3·4096
  m.mlp = MlpKind::gelu;
  m.ffn_hidden = 4096;  // square MLP: up and down repeat attention-out's shapes
  auto shapes = model_gemm_shapes(m, 1, 8192);
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t j = i + 1; j < shapes.size(); ++j)
      CHECK_FALSE(
          (shapes[i].m == shapes[j].m && shapes[i].n == shapes[j].n && shapes[i].k == shapes[j].k));
  // qkv (3); attention out, MLP up and down share 8192x4096x4096 (fwd = dgrad) and the wgrad
  // 4096x4096x8192 (2); logits (3).
  CHECK(shapes.size() == 3 + 2 + 3);
}

}  // namespace
}  // namespace meshplan::calibrate
