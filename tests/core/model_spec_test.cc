#include "core/model_spec.h"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "planner/param_count.h"

using namespace meshplan;

namespace {

ModelSpec load(const std::string& relative) {
  Result<ModelSpec> r = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

}  // namespace

TEST_CASE("MoE layers in a range: the closed form counts what walking the layers counts") {
  ModelSpec m;
  m.moe = MoeSpec{};
  for (int64_t first = 0; first < 4; ++first) {
    for (int64_t step = 1; step < 5; ++step) {
      m.moe->first_dense_layers = first;
      m.moe->layer_step = step;
      for (int64_t begin = 0; begin < 12; ++begin) {
        for (int64_t end = begin; end < 14; ++end) {
          int64_t walked = 0;
          for (int64_t layer = begin; layer < end; ++layer) walked += m.is_moe_layer(layer);
          CAPTURE(first);
          CAPTURE(step);
          CAPTURE(begin);
          CAPTURE(end);
          CHECK(m.moe_layers_in(begin, end) == walked);
        }
      }
    }
  }
}

TEST_CASE("llama4 YAML models: 400,711,848,960 and 107,769,861,120 parameters, 17.2B active") {
  const ModelSpec maverick = load("models/llama4-maverick.yaml");
  CHECK(maverick.first_moe_layer() == 1);
  CHECK(maverick.moe_layers() == 24);
  CHECK(total_params(maverick) == 400'711'848'960);
  CHECK(active_params(maverick) == 17'184'691'200);
  const ModelSpec scout = load("models/llama4-scout.yaml");
  CHECK(scout.moe_layers() == 48);
  CHECK(total_params(scout) == 107'769'861'120);
}

TEST_CASE("shipped llama3 YAML models reproduce the published parameter totals") {
  CHECK(total_params(load("models/llama3-8b.yaml")) == 8'030'261'248);
  CHECK(total_params(load("models/llama3-70b.yaml")) == 70'553'706'496);
  CHECK(total_params(load("models/llama3-405b.yaml")) == 405'853'388'800);
}

TEST_CASE("mixtral-8x7b counts 46,702,792,704 parameters and 12.9B active") {
  ModelSpec m = load("models/mixtral-8x7b.yaml");
  CHECK(total_params(m) == 46'702'792'704);
  // Two of eight experts per token: 32 layers × 6 experts × 3·4096·14336 fewer.
  CHECK(active_params(m) == 46'702'792'704 - 32LL * 6 * 3 * 4096 * 14336);
  CHECK(active_params(m) == 12'879'925'248);
}

TEST_CASE("gpt3-175b follows Megatron's eq. 2 plus the final LayerNorm") {
  ModelSpec m = load("models/gpt3-175b.yaml");
  // 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h)) = 12lh² + 13lh + (V+s)h; final LayerNorm adds 2h.
  const int64_t l = 96, h = 12288, V = 51200, s = 2048;
  CHECK(total_params(m) == 12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h);
}

TEST_CASE("deepseek-v3 main model has about 671B parameters and 37B active") {
  ModelSpec m = load("models/deepseek-v3.yaml");
  CHECK(total_params(m) == 671'026'404'352);
  CHECK(active_params(m) > 37.0e9);
  CHECK(active_params(m) < 38.0e9);
}

TEST_CASE("qwen3-235b-a22b has about 235B parameters and 22B active") {
  ModelSpec m = load("models/qwen3-235b-a22b.yaml");
  CHECK(total_params(m) == 235'093'634'560);
  CHECK(active_params(m) > 22.0e9);
  CHECK(active_params(m) < 22.5e9);
}

TEST_CASE("qwen3-32b has 32,762,123,264 parameters, counted by hand from its config") {
  ModelSpec m = load("models/qwen3-32b.yaml");
  // Per layer: q 5120·8192 + k, v 2·5120·1024 + o 8192·5120 + SwiGLU 3·5120·25600 + two norms
  // 2·5120 + q/k norms 2·128 = 487,598,336; 64 layers, untied 151936·5120 embedding and head,
  // final norm 5120.
  const int64_t layer =
      5120 * 8192 + 2 * 5120 * 1024 + 8192 * 5120 + 3 * 5120 * 25600 + 2 * 5120 + 2 * 128;
  CHECK(layer == 487'598'336);
  CHECK(total_params(m) == 64 * layer + 2 * int64_t{151936} * 5120 + 5120);
  CHECK(total_params(m) == 32'762'123'264);
}

TEST_CASE("mixtral-8x22b has 140,620,634,112 parameters, counted by hand from its config") {
  ModelSpec m = load("models/mixtral-8x22b.yaml");
  // Per layer: q, o 2·6144·6144 + k, v 2·6144·1024 + 8 experts · 3·6144·16384 + router 6144·8
  // + two norms 2·6144; 56 layers, untied 32000·6144 embedding and head, final norm 6144.
  const int64_t layer =
      2 * 6144 * 6144 + 2 * 6144 * 1024 + int64_t{8} * 3 * 6144 * 16384 + 6144 * 8 + 2 * 6144;
  CHECK(layer == 2'504'060'928);
  CHECK(total_params(m) == 56 * layer + 2 * int64_t{32000} * 6144 + 6144);
  CHECK(total_params(m) == 140'620'634'112);
}

TEST_CASE("llama2-70b has 68,976,648,192 parameters, counted by hand from its config") {
  ModelSpec m = load("models/llama2-70b.yaml");
  // Per layer: q, o 2·8192·8192 + k, v 2·8192·1024 + SwiGLU 3·8192·28672 + two norms 2·8192;
  // 80 layers, untied 32000·8192 embedding and head, final norm 8192 (the published 69.0B).
  const int64_t layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + int64_t{3} * 8192 * 28672 + 2 * 8192;
  CHECK(layer == 855'654'400);
  CHECK(total_params(m) == 80 * layer + 2 * int64_t{32000} * 8192 + 8192);
  CHECK(total_params(m) == 68'976'648'192);
}

TEST_CASE("Hugging Face config.json files map onto the same specs as our YAML") {
  const char* pairs[][2] = {{"tests/data/hf/llama-3.1-8b.json", "models/llama3-8b.yaml"},
                            {"tests/data/hf/mixtral-8x7b.json", "models/mixtral-8x7b.yaml"},
                            {"tests/data/hf/mixtral-8x22b.json", "models/mixtral-8x22b.yaml"},
                            {"tests/data/hf/qwen3-235b-a22b.json", "models/qwen3-235b-a22b.yaml"},
                            {"tests/data/hf/qwen3-32b.json", "models/qwen3-32b.yaml"},
                            {"tests/data/hf/deepseek-v3.json", "models/deepseek-v3.yaml"},
                            {"tests/data/hf/minimax-m2.5.json", "models/minimax-m2.5.yaml"},
                            {"tests/data/hf/gpt-oss-120b.json", "models/gpt-oss-120b.yaml"},
                            {"tests/data/hf/deepseek-v3.2.json", "models/deepseek-v3.2.yaml"},
                            {"tests/data/hf/glm-5-fp8.json", "models/glm-5.yaml"}};
  for (auto& p : pairs) {
    CAPTURE(p[0]);
    ModelSpec hf = load(p[0]);
    ModelSpec yaml = load(p[1]);
    CHECK(total_params(hf) == total_params(yaml));
    CHECK(hf.layers == yaml.layers);
    CHECK(hf.kv_heads == yaml.kv_heads);
    CHECK(hf.moe.has_value() == yaml.moe.has_value());
    CHECK(hf.mla.has_value() == yaml.mla.has_value());
    CHECK(hf.rope_theta == yaml.rope_theta);  // 500000, 1e6 (Mixtral, Qwen3), 10000 (DeepSeek)
    CHECK(hf.window.has_value() == yaml.window.has_value());
    CHECK(hf.mxfp4_experts == yaml.mxfp4_experts);
    CHECK(hf.context_tokens == yaml.context_tokens);
  }
}

TEST_CASE("defaults: kv_heads = heads, head_dim = hidden/heads, ffn_hidden = 4·hidden for gelu") {
  Result<ModelSpec> r =
      parse_model_yaml("name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\n", "x.yaml");
  REQUIRE(r.ok());
  CHECK(r->kv_heads == 4);
  CHECK(r->head_dim == 16);
  CHECK(r->ffn_hidden == 256);
  CHECK(r->mlp == MlpKind::gelu);
  CHECK(r->attention == AttentionKind::flash);
  CHECK(r->training.seq_len == 4096);
  CHECK(r->rope_theta == 10000);
}

TEST_CASE("rope_theta: the RoPE base, a number of at least 1") {
  Result<ModelSpec> r = parse_model_yaml(
      "name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nrope_theta: 500000\n", "x.yaml");
  REQUIRE(r.ok());
  CHECK(r->rope_theta == 500000);
  Result<ModelSpec> bad = parse_model_yaml(
      "name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nrope_theta: 0\n", "x.yaml");
  REQUIRE(!bad.ok());
  CHECK(format_diagnostics(bad.errors()).find("x.yaml:6:13: error: field 'rope_theta' = '0'") !=
        std::string::npos);
}

TEST_CASE(
    "fp8_weight_block: [n, k] as Hugging Face's weight_block_size, the same from both files") {
  const std::string base = "name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\n";
  Result<ModelSpec> r = parse_model_yaml(base + "fp8_weight_block: [128, 64]\n", "x.yaml");
  REQUIRE(r.ok());
  REQUIRE(r->fp8_weight_block.has_value());
  CHECK(r->fp8_weight_block->n == 128);
  CHECK(r->fp8_weight_block->k == 64);
  Result<ModelSpec> one = parse_model_yaml(base + "fp8_weight_block: 128\n", "x.yaml");
  REQUIRE(!one.ok());
  const std::string error = format_diagnostics(one.errors());
  CHECK(error.substr(0, error.find('\n')) ==
        "x.yaml:6:19: error: field 'fp8_weight_block' = '128': must be a list of two integers "
        "[n, k] (Hugging Face quantization_config.weight_block_size)");
  // The shipped models that name their FP8 release's blocks agree with its config.json.
  CHECK(load("models/qwen3-235b-a22b.yaml").fp8_weight_block->n ==
        load("tests/data/hf/qwen3-235b-a22b-fp8.json").fp8_weight_block->n);
  CHECK(load("models/deepseek-v3.yaml").fp8_weight_block->k == 128);
  CHECK_FALSE(load("models/llama3-70b.yaml").fp8_weight_block.has_value());
}

TEST_CASE("qk_norm: true norms each head (2 · head_dim), per_layer all of Q and K, else refused") {
  const std::string base = "name: x\nlayers: 1\nhidden: 64\nheads: 4\nkv_heads: 2\nvocab: 100\n";
  auto norms = [&](const std::string& value) {
    Result<ModelSpec> r = parse_model_yaml(base + "qk_norm: " + value + "\n", "x.yaml");
    REQUIRE(r.ok());
    return layer_params(r.value(), 0).total();
  };
  CHECK(norms("true") - norms("false") == 2 * 16);
  CHECK(norms("per_layer") - norms("false") == 64 + 32);  // Q 4 · 16, K 2 · 16
  Result<ModelSpec> bad = parse_model_yaml(base + "qk_norm: per_head\n", "x.yaml");
  REQUIRE(!bad.ok());
  CHECK(format_diagnostics(bad.errors()).find("field 'qk_norm' = 'per_head'") != std::string::npos);
}

TEST_CASE(
    "attention_sinks, moe.router_bias and qkv_bias in YAML: models/gpt-oss-120b.yaml counts its "
    "sinks and router bias, a Qwen2 YAML its Q/K/V biases") {
  const ModelSpec r = load("models/gpt-oss-120b.yaml");
  CHECK(total_params(r) == 116'829'156'672);  // the card: 116.83B
  CHECK(r.attention_sinks);
  CHECK(r.moe->router_bias);
  CHECK(r.mxfp4_experts);
  // Without the sinks and the router bias: 36 layers × (64 + 128) fewer.
  std::ifstream in(std::string(MESHPLAN_SOURCE_DIR) + "/models/gpt-oss-120b.yaml");
  std::string plain((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  plain.replace(plain.find("attention_sinks: true"), 21, "attention_sinks: false");
  plain.replace(plain.find("router_bias: true"), 17, "router_bias: false");
  Result<ModelSpec> p = parse_model_yaml(plain, "gpt-oss-120b.yaml");
  REQUIRE(p.ok());
  CHECK(total_params(r) - total_params(p.value()) == 36 * (64 + 128));
  // Qwen2-7B's Q/K/V biases (tests/data/hf/qwen2-7b.json): 28 layers × (3,584 + 2 · 512).
  const std::string qwen2 =
      "name: qwen2-7b\nlayers: 28\nhidden: 3584\nheads: 28\nkv_heads: 4\nffn_hidden: 18944\n"
      "vocab: 152064\nmlp: swiglu\nnorm: rmsnorm\nqkv_bias: true\n";
  Result<ModelSpec> q = parse_model_yaml(qwen2, "qwen2-7b.yaml");
  REQUIRE(q.ok());
  CHECK(total_params(q.value()) == total_params(load("tests/data/hf/qwen2-7b.json")));
  std::string no_bias = qwen2;
  no_bias.replace(no_bias.find("qkv_bias: true"), 14, "qkv_bias: false");
  CHECK(total_params(q.value()) -
            total_params(parse_model_yaml(no_bias, "qwen2-7b.yaml").value()) ==
        28 * (3584 + 2 * 512));
}

TEST_CASE("context_tokens: the longest request served, bounded and given by learned positions") {
  const std::string base = "name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\n";
  Result<ModelSpec> rope = parse_model_yaml(base + "context_tokens: 32768\n", "x.yaml");
  REQUIRE(rope.ok());
  CHECK(rope->context_tokens == 32768);
  Result<ModelSpec> unstated = parse_model_yaml(base, "x.yaml");
  REQUIRE(unstated.ok());
  CHECK(unstated->context_tokens == 0);
  const std::string learned = base + "position_embedding: learned\nmax_positions: 2048\n";
  Result<ModelSpec> table = parse_model_yaml(learned, "x.yaml");
  REQUIRE(table.ok());
  CHECK(table->context_tokens == 2048);
  CHECK(load("models/gpt3-175b.yaml").context_tokens == 2048);
  Result<ModelSpec> past = parse_model_yaml(learned + "context_tokens: 4096\n", "x.yaml");
  REQUIRE(!past.ok());
  CHECK(format_diagnostics(past.errors())
            .starts_with("x.yaml:8:17: error: field 'context_tokens' = '4096': must be at most "
                         "max_positions (2048): the learned position table has no row for a "
                         "later position\n"));
  Result<ModelSpec> zero = parse_model_yaml(base + "context_tokens: 0\n", "x.yaml");
  REQUIRE(!zero.ok());
}

TEST_CASE("mtp_layers: multi-token-prediction modules, as config.json's num_nextn_predict_layers") {
  const std::string base = "name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\n";
  Result<ModelSpec> r = parse_model_yaml(base + "mtp_layers: 1\n", "x.yaml");
  REQUIRE(r.ok());
  CHECK(r->mtp_layers == 1);
  CHECK(parse_model_yaml(base, "x.yaml")->mtp_layers == 0);
  Result<ModelSpec> bad = parse_model_yaml(base + "mtp_layers: -1\n", "x.yaml");
  REQUIRE(!bad.ok());
  const std::string error = format_diagnostics(bad.errors());
  CHECK(error.substr(0, error.find('\n')) ==
        "x.yaml:6:13: error: field 'mtp_layers' = '-1': must be an integer between 0 and 100000");
  // DeepSeek-V3's config.json and the shipped YAML with the key count the same module.
  ModelSpec yaml = load("models/deepseek-v3.yaml");
  yaml.mtp_layers = 1;
  CHECK(mtp_params(yaml) == mtp_params(load("tests/data/hf/deepseek-v3.json")));
}
