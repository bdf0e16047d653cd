// calibrate/model_gemm_shapes.cc: per-layer GEMM shapes at a TP degree.
#include "calibrate/model_gemm_shapes.h"

#include <doctest/doctest.h>

#include <algorithm>

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
  CHECK(shapes[12] == GemmShape{8192, 64128, 4096, "fwd logits", true});
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

TEST_CASE("deepseek-v3 at tp=8: MLA's down-projections whole, up-projections split, then MoE") {
  auto shapes = model_gemm_shapes(testing::shipped_model("deepseek-v3"), 8, 4096);
  // q_a 7168 → 1536 and kv_a 7168 → 512 + 64 on every rank; q_b 1536 → 128·192/8 = 3072;
  // kv_b 512 → 128·256/8 = 4096; attn_out 128·128/8 = 2048 → 7168; the dense layers' SwiGLU
  // (ffn 18432): up 7168 → 2·18432/8 = 4608, down 18432/8 = 2304 → 7168. The MoE layers: the
  // router 7168 → 256 (replicated); each routed expert (ffn 2048: up 7168 → 2·2048/8 = 512, down
  // 256 → 7168) at 4096·8/256 = 128 rows (ep 1); the shared expert at every token's row;
  // logits 129280/8 = 16160. Thirteen maps, three variants each (39), less the shared down
  // projection's forward and input gradient, which repeat the router's (4096×7168×256 and
  // 4096×256×7168): 37.
  REQUIRE(shapes.size() == 37);
  CHECK(shapes[0] == GemmShape{4096, 1536, 7168, "fwd q_a"});
  CHECK(shapes[2] == GemmShape{7168, 1536, 4096, "wgrad q_a"});
  CHECK(shapes[3] == GemmShape{4096, 3072, 1536, "fwd q_b"});
  CHECK(shapes[6] == GemmShape{4096, 576, 7168, "fwd kv_a"});
  CHECK(shapes[9] == GemmShape{4096, 4096, 512, "fwd kv_b"});
  CHECK(shapes[10] == GemmShape{4096, 512, 4096, "dgrad kv_b"});
  CHECK(shapes[12] == GemmShape{4096, 7168, 2048, "fwd attn_out"});
  CHECK(shapes[15] == GemmShape{4096, 4608, 7168, "fwd mlp_up"});
  CHECK(shapes[18] == GemmShape{4096, 7168, 2304, "fwd mlp_down"});
  CHECK(shapes[21] == GemmShape{4096, 256, 7168, "fwd router"});
  CHECK(shapes[24] == GemmShape{128, 512, 7168, "fwd expert mlp_up ep1"});
  CHECK(shapes[26] == GemmShape{7168, 512, 128, "wgrad expert mlp_up ep1"});
  CHECK(shapes[27] == GemmShape{128, 7168, 256, "fwd expert mlp_down ep1"});
  CHECK(shapes[30] == GemmShape{4096, 512, 7168, "fwd shared mlp_up"});
  CHECK(shapes[33] == GemmShape{256, 7168, 4096, "wgrad shared mlp_down"});
  CHECK(shapes[34] == GemmShape{4096, 16160, 7168, "fwd logits", true});
}

TEST_CASE("mixtral: each routed expert at the rows it gets at each EP degree that divides 8") {
  auto shapes = model_gemm_shapes(testing::shipped_model("mixtral-8x7b"), 1, 4096, {1, 3, 8});
  // 4096 tokens · top-2 over 8 experts: 1024 rows each at ep 1, 8192 at ep 8 (each rank's
  // one expert gets the rows of all eight ranks); ep 3 does not divide 8. Up 4096 → 2·14336,
  // down 14336 → 4096; no dense MLP (every layer is MoE). Square-ish repeats: qkv's weight
  // gradient is its forward (4096×6144×4096), attn_out's three variants are 4096³, the
  // router's and the logits' weight gradients are their forwards.
  const auto has = [&](GemmShape s) {
    return std::find(shapes.begin(), shapes.end(), s) != shapes.end();
  };
  CHECK(has({1024, 28672, 4096, "fwd expert mlp_up ep1"}));
  CHECK(has({8192, 28672, 4096, "fwd expert mlp_up ep8"}));
  CHECK(has({4096, 28672, 1024, "wgrad expert mlp_up ep1"}));
  CHECK(has({1024, 4096, 14336, "fwd expert mlp_down ep1"}));
  CHECK(has({8192, 4096, 14336, "fwd expert mlp_down ep8"}));
  CHECK(has({4096, 8, 4096, "fwd router", true}));
  for (const GemmShape& s : shapes) CHECK(s.label.find("ep3") == std::string::npos);
  // qkv (2), attn_out (1), router (2), two expert maps at two degrees (12), logits (2).
  CHECK(shapes.size() == 19);
}

// GemmShape::bf16_only: the frameworks run the LM head and the MoE router in BF16 whatever the
// job's precision (planner/layer_cost.h), so calibrate measures them in bf16 alone; a shape
// another map also has (MHA at 4096: the router's weight gradient is not one) stays in every dtype.
TEST_CASE("the LM head's and the router's shapes are measured in bf16 alone, shared ones in all") {
  auto shapes = model_gemm_shapes(testing::shipped_model("mixtral-8x7b"), 1, 4096);
  for (const GemmShape& s : shapes) {
    CAPTURE(s.label);
    const bool head_or_router =
        s.label.find("logits") != std::string::npos || s.label.find("router") != std::string::npos;
    CHECK(s.bf16_only == head_or_router);
    CHECK(measured_in(s, "bf16"));
    CHECK(measured_in(s, "fp8") == !head_or_router);
  }
  std::vector<GemmShape> out = {{8, 8, 8, "fwd logits", true}, {8, 8, 16, "fwd qkv"}};
  append_unique_shapes(out, {{8, 8, 8, "fwd qkv"}, {8, 8, 16, "fwd router", true}});
  CHECK(out == std::vector<GemmShape>{{8, 8, 8, "fwd logits", false}, {8, 8, 16, "fwd qkv"}});
}

TEST_CASE("a sweep lists each model's shapes at each tp and token count once, in that order") {
  const ModelSpec m = llama3_8b();
  auto sweep = model_gemm_sweep({m, m}, {1, 2}, {4096, 8192});
  std::vector<GemmShape> expected;
  for (int64_t tp : {1, 2})
    for (int64_t tokens : {4096, 8192})
      append_unique_shapes(expected, model_gemm_shapes(m, tp, tokens));
  CHECK(sweep == expected);  // the second copy of the model adds nothing
  CHECK(sweep.front() == model_gemm_shapes(m, 1, 4096).front());
}

TEST_CASE("appending skips shapes already listed, whatever their label") {
  std::vector<GemmShape> out = {{8, 8, 8, "a"}};
  append_unique_shapes(out, {{8, 8, 8, "b"}, {8, 8, 16, "c"}, {8, 8, 16, "d"}});
  CHECK(out == std::vector<GemmShape>{{8, 8, 8, "a"}, {8, 8, 16, "c"}});
}

}  // namespace
}  // namespace meshplan::calibrate
