// core/layer_geometry.cc: the linear maps of a layer, with widths derived by hand from the
// shipped model files.
#include "core/layer_geometry.h"

#include <doctest/doctest.h>

#include <string>

#include "tests/test_inputs.h"

namespace meshplan {
namespace {

int64_t sum_weights(const std::vector<LinearMap>& maps) {
  int64_t n = 0;
  for (const LinearMap& map : maps) n += map.copies * (map.weights() + map.biases());
  return n;
}

TEST_CASE("llama3-8b: fused GQA qkv, attention out, SwiGLU up and down") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const std::vector<LinearMap> maps = layer_linears(m, 0);
  REQUIRE(maps.size() == 4);
  // qkv: 4096 → 32·128 + 2·8·128 = 6144, of which 2048 are K/V columns over 8 KV heads.
  CHECK(std::string(maps[0].name) == "qkv");
  CHECK(maps[0].in == 4096);
  CHECK(maps[0].out == 6144);
  CHECK(maps[0].kv_out == 2048);
  CHECK(maps[0].kv_groups == 8);
  CHECK(maps[0].split == TpSplit::column);
  CHECK(std::string(maps[1].name) == "attn_out");
  CHECK(maps[1].split == TpSplit::row);
  CHECK(maps[1].weights() == 4096 * 4096);
  CHECK(maps[2].out == 2 * 14336);  // gate and up fused
  CHECK(maps[3].in == 14336);
  CHECK(maps[3].split == TpSplit::row);
  // 25,165,824 + 16,777,216 + 117,440,512 + 58,720,256 per layer.
  CHECK(sum_weights(maps) == 218'103'808);
}

TEST_CASE("llama3-8b: the maps and the norms add up to the published 8,030,261,248") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  int64_t n = embedding_linear(m).weights() + lm_head_linear(m).weights();
  CHECK(n == 2 * 128256 * 4096);
  for (int64_t i = 0; i < m.layers; ++i) n += sum_weights(layer_linears(m, i));
  const int64_t norms = 32 * 2 * 4096 + 4096;  // two RMSNorms per layer, one final
  CHECK(n + norms == 8'030'261'248);
}

TEST_CASE("per-rank widths: column splits the output, K/V columns at most kv_heads ways") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const LinearMap qkv = attention_linears(m)[0];
  CHECK(qkv.rank_out(2) == 4096.0 / 2 + 2048.0 / 2);
  CHECK(qkv.rank_out(16) == 4096.0 / 16 + 2048.0 / 8);  // K/V heads replicated 2 ways
  CHECK(qkv.rank_in(16) == 4096);
  const LinearMap out = attention_linears(m)[1];
  CHECK(out.rank_in(4) == 1024);
  CHECK(out.rank_out(4) == 4096);
}

TEST_CASE("deepseek-v3: MLA down-projections replicated, up-projections split") {
  const ModelSpec m = testing::shipped_model("deepseek-v3");
  const std::vector<LinearMap> a = attention_linears(m);
  REQUIRE(a.size() == 5);
  CHECK(std::string(a[0].name) == "q_a");  // 7168 → q_lora_rank 1536
  CHECK((a[0].in == 7168 && a[0].out == 1536 && a[0].split == TpSplit::replicated));
  CHECK(std::string(a[1].name) == "q_b");  // 1536 → 128 heads · (128 + 64)
  CHECK((a[1].in == 1536 && a[1].out == 24576 && a[1].split == TpSplit::column));
  CHECK(std::string(a[2].name) == "kv_a");  // 7168 → kv_lora_rank 512 + rope 64
  CHECK((a[2].in == 7168 && a[2].out == 576 && a[2].split == TpSplit::replicated));
  CHECK(std::string(a[3].name) == "kv_b");  // 512 → 128 · (128 + 128)
  CHECK((a[3].in == 512 && a[3].out == 32768 && a[3].kv_out == 32768));
  CHECK(std::string(a[4].name) == "attn_out");  // 128 · 128 → 7168
  CHECK((a[4].in == 16384 && a[4].out == 7168 && a[4].split == TpSplit::row));
  CHECK(a[3].rank_out(8) == 4096);
  CHECK(a[4].rank_in(8) == 2048);
  CHECK(a[0].rank_out(8) == 1536);
}

TEST_CASE("deepseek-v3: dense first layers, then router, 256 experts and one shared expert") {
  const ModelSpec m = testing::shipped_model("deepseek-v3");
  const std::vector<LinearMap> dense = ffn_linears(m, 2);
  REQUIRE(dense.size() == 2);
  CHECK(dense[0].out == 2 * 18432);
  const std::vector<LinearMap> moe = ffn_linears(m, 3);
  REQUIRE(moe.size() == 5);
  CHECK((moe[0].role == LinearRole::router && moe[0].in == 7168 && moe[0].out == 256));
  CHECK((moe[1].role == LinearRole::expert && moe[1].copies == 256 && moe[1].out == 4096));
  CHECK((moe[2].role == LinearRole::expert && moe[2].in == 2048 && moe[2].out == 7168));
  CHECK((moe[3].role == LinearRole::shared && moe[3].copies == 1));
  // One expert: 3 · 7168 · 2048 = 44,040,192 weights.
  CHECK(moe[1].weights() + moe[2].weights() == 44'040'192);
}

TEST_CASE("GELU MLP with biases: one up matrix, biases on both") {
  ModelSpec m = testing::gpt_like(2, 1024, 16, 50000, 2048);
  m.bias = true;
  const std::vector<LinearMap> f = mlp_linears(m, m.ffn_hidden);
  CHECK(f[0].out == 4096);
  CHECK(f[0].biases() == 4096);
  CHECK(f[1].biases() == 1024);
  const LinearMap e = embedding_linear(m);
  CHECK((e.in == 50000 && e.out == 1024 && e.split == TpSplit::row));
}

}  // namespace
}  // namespace meshplan
