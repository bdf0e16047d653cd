// core/hf_config.cc: real config.json files (tests/data/hf, sources in its README.md) give the
// parameter counts their model cards and checkpoints publish; fields the spec cannot express
// are refused by name.
#include <doctest/doctest.h>

#include <string>

#include "core/model_spec.h"
#include "planner/param_count.h"
#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

ModelSpec load(const std::string& name) {
  Result<ModelSpec> r = load_model(std::string(MESHPLAN_TEST_DATA) + "/hf/" + name);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

// The first line of the error for a config.json text.
std::string error_of(const std::string& text) {
  Result<ModelSpec> r = parse_hf_config(text, "config.json");
  if (r.ok()) return "ok";
  std::string all = format_diagnostics(r.errors());
  return all.substr(0, all.find('\n'));
}

const char* kTinyLlama = R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
 "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128)";

}  // namespace

TEST_CASE("Qwen2-7B counts its Q/K/V biases: 7,615,616,512 as in its safetensors") {
  ModelSpec m = load("qwen2-7b.json");
  CHECK(m.qkv_bias);
  CHECK_FALSE(m.bias);
  // 28 layers x (3,584 + 512 + 512) bias elements.
  CHECK(layer_params(m, 0).total() - 233'053'184 == 4'608);
  CHECK(total_params(m) == 7'615'616'512);
}

TEST_CASE("Gemma 2 9B: head_dim 256, four norms per layer, tied embeddings: 9,241,705,984") {
  ModelSpec m = load("gemma-2-9b.json");
  CHECK(m.head_dim == 256);
  CHECK(m.q_width() == 4096);  // 16 heads x 256, not hidden_size 3,584
  CHECK(m.post_norms);
  CHECK(m.tied_embeddings);
  CHECK(total_params(m) == 9'241'705'984);
}

TEST_CASE("Gemma 3 1B adds per-head q/k norms: 999,885,952") {
  ModelSpec m = load("gemma-3-1b-pt.json");
  CHECK(m.qk_norm == QkNorm::per_head);
  CHECK(m.kv_heads == 1);
  CHECK(total_params(m) == 999'885'952);
}

TEST_CASE("local attention as transformers builds it: Gemma 2/3 windows, Llama 4 chunks, Phi-3") {
  const ModelSpec g2 = load("gemma-2-9b.json");
  REQUIRE(g2.window.has_value());
  CHECK(g2.window->tokens == 4096);
  CHECK(g2.window->kind == WindowKind::sliding);
  CHECK(g2.window->global_every == 2);  // even layers slide (modeling_gemma2)
  const ModelSpec g3 = load("gemma-3-1b-pt.json");
  REQUIRE(g3.window.has_value());
  CHECK(g3.window->tokens == 512);
  CHECK(g3.window->global_every == 6);  // sliding_window_pattern
  // Scout lists its NoPE (global) layers; Maverick leaves the default interval of 4.
  for (const char* name :
       {"llama-4-scout-17b-16e-text.json", "llama-4-maverick-17b-128e-text.json"}) {
    CAPTURE(name);
    const ModelSpec l4 = load(name);
    REQUIRE(l4.window.has_value());
    CHECK(l4.window->tokens == 8192);
    CHECK(l4.window->kind == WindowKind::chunked);
    CHECK(l4.window->global_every == 4);
  }
  const ModelSpec phi3 = load("phi-3-mini-4k-instruct.json");
  REQUIRE(phi3.window.has_value());
  CHECK(phi3.window->tokens == 2047);
  CHECK(phi3.window->global_every == 0);
  // Qwen2 carries sliding_window but use_sliding_window false; Mixtral's is null.
  CHECK_FALSE(load("qwen2-7b.json").window.has_value());
  CHECK_FALSE(load("mixtral-8x7b.json").window.has_value());
}

TEST_CASE("layer_types gives the pattern, one without a fixed interval is refused by name") {
  const std::string head =
      R"({"model_type": "gemma2", "num_hidden_layers": 4, "hidden_size": 64,
 "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128, "sliding_window": 16, )";
  const Result<ModelSpec> every_third = parse_hf_config(
      head + R"("layer_types": ["sliding_attention", "sliding_attention", "full_attention",
 "sliding_attention"]})",
      "config.json");
  REQUIRE(every_third.ok());
  CHECK(every_third.value().window->global_every == 3);
  CHECK(error_of(head + R"("layer_types": ["sliding_attention", "full_attention",
 "full_attention", "sliding_attention"]})") ==
        "config.json:2:95: error: field 'layer_types' = '[…]': must put full attention on every "
        "N-th layer (N − 1, 2N − 1, …) or on none: meshplan models local attention at a fixed "
        "interval");
  CHECK(error_of(R"({"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64,
 "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
 "use_sliding_window": true, "sliding_window": 16, "max_window_layers": 1})")
            .find("field 'use_sliding_window' = 'true': sliding windows from layer "
                  "max_window_layers on") != std::string::npos);
}

TEST_CASE("Phi-3-mini's fused projections hold the same matrices: 3,821,079,552") {
  ModelSpec m = load("phi-3-mini-4k-instruct.json");
  CHECK(m.mlp == MlpKind::swiglu);
  CHECK(total_params(m) == 3'821'079'552);
}

TEST_CASE("Pythia-160M (gpt_neox): LayerNorm, biases, GeLU MLP: 162,322,944") {
  ModelSpec m = load("pythia-160m.json");
  CHECK(m.norm == NormKind::layernorm);
  CHECK(m.mlp == MlpKind::gelu);
  CHECK(m.bias);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(total_params(m) == 162'322'944);
}

TEST_CASE("DeepSeek-V2-Lite: MLA without a query LoRA, 64 experts: 15,706,484,224") {
  ModelSpec m = load("deepseek-v2-lite.json");
  REQUIRE(m.mla.has_value());
  CHECK(m.mla->q_lora_rank == 0);
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->first_dense_layers == 1);
  CHECK(m.mtp_layers == 0);
  CHECK(mtp_params(m) == 0);
  CHECK(total_params(m) == 15'706'484'224);
}

TEST_CASE("DeepSeek routers: V3 sigmoid, x2.5, noaux_tc bias, V2-Lite softmax, x1, none") {
  const ModelSpec v3 = load("deepseek-v3.json");
  CHECK(v3.moe->sigmoid_router);
  CHECK(v3.moe->routed_scaling == 2.5);
  CHECK(v3.moe->expert_bias);
  const ModelSpec lite = load("deepseek-v2-lite.json");
  CHECK_FALSE(lite.moe->sigmoid_router);
  CHECK(lite.moe->routed_scaling == 1.0);
  CHECK_FALSE(lite.moe->expert_bias);
  // The shipped YAML says the same as the config it came from.
  const ModelSpec shipped = testing::shipped_model("deepseek-v3");
  CHECK(shipped.moe->sigmoid_router);
  CHECK(shipped.moe->routed_scaling == 2.5);
  CHECK(shipped.moe->expert_bias);
}

TEST_CASE("DeepSeek-V3's MTP module is counted apart from the 671B main model") {
  ModelSpec m = load("deepseek-v3.json");
  CHECK(m.mtp_layers == 1);
  CHECK(total_params(m) == 671'026'404'352);
  // One MoE layer, eh_proj 2·7168·7168 = 102,760,448, and three 7,168-wide norms.
  CHECK(mtp_params(m) == layer_params(m, 60).total() + 102'760'448 + 3 * 7'168);
  CHECK(mtp_params(m) > 11.0e9);
  CHECK(mtp_params(m) < 12.0e9);
}

// Llama 4 per layer: attention 2·5120·5120 + 2·5120·1024 = 62,914,560; two norms 10,240; an
// expert or the shared expert 3·5120·8192 = 125,829,120; a dense MLP 3·5120·16384 =
// 251,658,240; the router 5120 per expert. Embedding and LM head 2·202,048·5120 plus the final
// norm: 2,068,976,640.
TEST_CASE("Llama 4 Scout: an MoE block with a shared expert on every layer: 107,769,861,120") {
  ModelSpec m = load("llama-4-scout-17b-16e-text.json");
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->experts == 16);
  CHECK(m.moe->shared_experts == 1);
  CHECK(m.moe->layer_step == 1);
  CHECK(m.qk_norm == QkNorm::none);  // L2 norms without weights
  CHECK(m.moe_layers() == 48);
  // 48 × (62,914,560 + 10,240 + 17 × 125,829,120 + 16 × 5120) + 2,068,976,640.
  CHECK(total_params(m) == 107'769'861'120);
  // Card: 17B active. Less 48 × 15 idle experts.
  CHECK(active_params(m) == 107'769'861'120 - 48 * 15 * int64_t{125'829'120});
}

TEST_CASE("Llama 4 Maverick: MoE on every second layer, dense MLPs between: 400,711,848,960") {
  ModelSpec m = load("llama-4-maverick-17b-128e-text.json");
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->layer_step == 2);
  CHECK(m.ffn_hidden == 16384);
  CHECK(m.moe->expert_ffn_hidden == 8192);
  CHECK_FALSE(m.is_moe_layer(0));
  CHECK(m.is_moe_layer(1));
  CHECK(m.is_moe_layer(47));
  CHECK(m.moe_layers() == 24);
  CHECK(m.dense_layers() == 24);
  // 24 × (62,914,560 + 10,240 + 129 × 125,829,120 + 128 × 5120)
  // + 24 × (62,914,560 + 10,240 + 251,658,240) + 2,068,976,640.
  CHECK(total_params(m) == 400'711'848'960);
  // Card: 17B active. Less 24 × 127 idle experts: 17,184,691,200.
  CHECK(active_params(m) == 17'184'691'200);
}

TEST_CASE("Llama 4: the multimodal config is refused, and moe_layers must be the interleave") {
  CHECK(error_of(R"({"model_type": "llama4"})") ==
        "config.json:1:2: error: field 'model_type' = '\"llama4\"': llama4 is the multimodal "
        "config: pass its text model instead (the text_config object, model_type llama4_text, "
        "saved as its own file)");
  const std::string tiny = R"({"model_type": "llama4_text", "hidden_size": 64,
    "intermediate_size": 32, "intermediate_size_mlp": 128, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
    "num_local_experts": 4, "num_experts_per_tok": 1)";
  CHECK(error_of(tiny + R"(, "interleave_moe_layer_step": 2, "moe_layers": [1, 3]})") == "ok");
  CHECK(error_of(tiny + R"(, "interleave_moe_layer_step": 2, "moe_layers": [0, 2]})") ==
        "config.json:4:87: error: field 'moe_layers' = '[…]': must be every "
        "interleave_moe_layer_step-th layer (1, 3, …): meshplan models MoE layers at a fixed "
        "interval");
  CHECK(error_of(tiny + R"(, "interleave_moe_layer_step": 5})") ==
        "config.json:4:55: error: field 'interleave_moe_layer_step' = '5': must be an integer "
        "between 1 and 4");
}

TEST_CASE("fields whose counts the spec cannot express are refused by name") {
  CHECK(
      error_of(std::string(kTinyLlama) + R"(, "attention_bias": true})")
          .find("field 'attention_bias' = 'true': true is not supported: meshplan models biases on "
                "all linear layers or on Q/K/V only (Qwen2), not on Q/K/V/O alone") !=
      std::string::npos);
  CHECK(error_of(std::string(kTinyLlama) + R"(, "mlp_bias": true})")
            .find("field 'mlp_bias' = 'true': true is not supported") != std::string::npos);
  CHECK(error_of(std::string(kTinyLlama) + R"(, "moe_layer_freq": 2})")
            .find("field 'moe_layer_freq' = '2': must be 1") != std::string::npos);
  CHECK(error_of(std::string(kTinyLlama) + R"(, "attention_bias": false})") == "ok");
}

TEST_CASE("multimodal gemma3 is refused: its text model is what meshplan reads") {
  CHECK(error_of(R"({"model_type": "gemma3"})").find("pass its text model instead") !=
        std::string::npos);
}

TEST_CASE("a multimodal wrapper around a text model meshplan reads names that text model") {
  // Kimi K2.5's config (kimi_k25) wraps its language model, a kimi_k2, in text_config.
  CHECK(error_of(R"({"model_type": "kimi_k25", "text_config": {"model_type": "kimi_k2"}})") ==
        "config.json:1:2: error: field 'model_type' = '\"kimi_k25\"': kimi_k25 is a multimodal "
        "config: pass its text model instead (the text_config object, model_type kimi_k2, saved "
        "as its own file)");
  // A text model meshplan does not read: the list, as for any unknown type.
  CHECK(error_of(R"({"model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text"}})")
            .find("must be one of llama|") != std::string::npos);
}

TEST_CASE("an unsupported model_type lists the supported ones") {
  CHECK(error_of(R"({"model_type": "gpt2"})") ==
        "config.json:1:2: error: field 'model_type' = '\"gpt2\"': must be one of "
        "llama|mistral|phi3|qwen2|qwen3|mixtral|qwen3_moe|deepseek_v2|deepseek_v3|deepseek_v32|"
        "kimi_k2|glm4_moe|glm_moe_dsa|minimax_m2|gemma2|gemma3_text|gpt_neox|llama4_text|gpt_oss");
}

TEST_CASE("Qwen2-72B's Q/K/V biases add 80 x 10,240 parameters") {
  // Qwen2-72B's shape (hidden 8192, 64 heads, 8 KV heads of 128): biases 8192 + 2 x 1024 per layer.
  const std::string config = R"({"model_type": "qwen2", "hidden_size": 8192,
    "intermediate_size": 29568, "num_hidden_layers": 80, "num_attention_heads": 64,
    "num_key_value_heads": 8, "vocab_size": 152064, "tie_word_embeddings": false})";
  Result<ModelSpec> r = parse_hf_config(config, "config.json");
  REQUIRE(r.ok());
  ModelSpec without = r.value();
  without.qkv_bias = false;
  CHECK(total_params(r.value()) - total_params(without) == 80 * 10'240);
}

TEST_CASE("the RoPE base: rope_theta (GPT-NeoX rotary_emb_base), 10000 where absent") {
  CHECK(load("llama-3.1-8b.json").rope_theta == 500000);
  CHECK(load("mixtral-8x7b.json").rope_theta == 1000000);
  CHECK(load("deepseek-v3.json").rope_theta == 10000);
  CHECK(load("pythia-160m.json").rope_theta == 10000);
  Result<ModelSpec> tiny = parse_hf_config(std::string(kTinyLlama) + "}", "config.json");
  REQUIRE(tiny.ok());
  CHECK(tiny.value().rope_theta == 10000);
  CHECK(error_of(std::string(kTinyLlama) + R"(, "rope_theta": "1e4"})") ==
        "config.json:2:73: error: field 'rope_theta' = '\"1e4\"': must be a number");
  CHECK(error_of(std::string(kTinyLlama) + R"(, "rope_theta": 0})")
            .find("field 'rope_theta' = '0': must be a number between 1 and 1000000000000") !=
        std::string::npos);
}

TEST_CASE("an FP8 checkpoint's weight_block_size is read: Qwen3-235B-A22B-FP8, Qwen3-30B-A3B-FP8") {
  for (const char* name : {"qwen3-235b-a22b-fp8.json", "qwen3-30b-a3b-fp8.json"}) {
    CAPTURE(name);
    const ModelSpec m = load(name);
    REQUIRE(m.fp8_weight_block.has_value());
    CHECK(m.fp8_weight_block->n == 128);
    CHECK(m.fp8_weight_block->k == 128);
  }
  CHECK(load("qwen3-235b-a22b-fp8.json").moe->expert_ffn_hidden == 1536);
  CHECK(load("qwen3-30b-a3b-fp8.json").moe->expert_ffn_hidden == 768);
  // The BF16 releases carry no quantization_config.
  CHECK_FALSE(load("qwen3-235b-a22b.json").fp8_weight_block.has_value());
}

TEST_CASE(
    "quantization_config: gpt-oss's mxfp4 marks its experts MXFP4, a dense model's is ignored") {
  CHECK(load("gpt-oss-120b.json").mxfp4_experts);
  CHECK(load("gpt-oss-20b.json").mxfp4_experts);
  CHECK_FALSE(load("qwen3-235b-a22b-fp8.json").mxfp4_experts);
  Result<ModelSpec> dense = parse_hf_config(
      std::string(kTinyLlama) + R"(, "quantization_config": {"quant_method": "mxfp4"}})",
      "config.json");
  REQUIRE(dense.ok());
  CHECK_FALSE(dense.value().mxfp4_experts);  // no routed experts to hold in MXFP4
}

TEST_CASE("quantization_config: other methods are ignored, a malformed block size is refused") {
  auto with = [](const std::string& quantization) {
    return std::string(kTinyLlama) + R"(, "quantization_config": )" + quantization + "}";
  };
  Result<ModelSpec> awq = parse_hf_config(
      with(R"({"quant_method": "awq", "weight_block_size": [128, 128]})"), "config.json");
  REQUIRE(awq.ok());
  CHECK_FALSE(awq.value().fp8_weight_block.has_value());
  Result<ModelSpec> per_tensor = parse_hf_config(
      with(R"({"quant_method": "fp8", "activation_scheme": "static"})"), "config.json");
  REQUIRE(per_tensor.ok());
  CHECK_FALSE(per_tensor.value().fp8_weight_block.has_value());
  CHECK(error_of(with(R"({"quant_method": "fp8", "weight_block_size": [128]})")) ==
        "config.json:2:120: error: field 'weight_block_size' = '[…]': must be a list of two "
        "integers [n, k]");
  CHECK(error_of(with(R"({"quant_method": "fp8", "weight_block_size": [128, 0]})")) ==
        "config.json:2:120: error: field 'weight_block_size' = '[…]': must be a list of "
        "integers between 1 and 10000000");
}

// Kimi K2 per layer: MLA q_a 7168·1536 + q_a norm 1536 + q_b 1536·64·192 + kv_a 7168·576 +
// kv_a norm 512 + kv_b 512·64·256 + o 64·128·7168 = 101,124,096; two norms 14,336; the first
// layer's dense MLP 3·7168·18432 = 396,361,728; an MoE layer's 384 routed experts and one
// shared expert 385·3·7168·2048 = 16,955,473,920 and router 384·7168 = 2,752,512; embedding and
// LM head 2·163,840·7168 = 2,348,810,240 and the final norm 7,168.
TEST_CASE("Kimi K2 (kimi_k2, DeepSeek-V3's architecture): 1,026,408,209,408 counted by hand") {
  const ModelSpec m = load("kimi-k2-instruct.json");
  REQUIRE(m.mla.has_value());
  REQUIRE(m.moe.has_value());
  CHECK(m.heads == 64);
  CHECK(m.moe->experts == 384);
  CHECK(m.moe->first_dense_layers == 1);
  CHECK(m.moe->sigmoid_router);
  CHECK(m.moe->routed_scaling == 2.827);
  CHECK(m.moe->expert_bias);
  CHECK(m.mtp_layers == 0);
  REQUIRE(m.fp8_weight_block.has_value());
  CHECK(m.fp8_weight_block->n == 128);
  const int64_t attention = 101'124'096, norms = 14'336;
  const int64_t dense = attention + norms + int64_t{3} * 7168 * 18432;
  const int64_t moe = attention + norms + int64_t{385} * 3 * 7168 * 2048 + 384 * 7168;
  CHECK(total_params(m) == dense + 60 * moe + int64_t{2} * 163'840 * 7168 + 7168);
  CHECK(total_params(m) == 1'026'408'209'408);  // the card: "1T total parameters"
}

// MiniMax-M2.5 per layer: attention 3072·6144 + 2·3072·1024 + 6144·3072 = 44,040,192; Q and K
// norms over the layer 6144 + 1024; two norms 6,144; 256 experts 256·3·3072·1536 =
// 3,623,878,656 and the router 256·3072 = 786,432. 62 layers, embedding and LM head
// 2·200,064·3072 = 1,229,193,216, final norm 3,072.
TEST_CASE("MiniMax-M2.5 (minimax_m2): per-layer q/k norms, 228,689,748,992 counted by hand") {
  const ModelSpec m = load("minimax-m2.5.json");
  CHECK(m.qk_norm == QkNorm::per_layer);
  CHECK(m.q_width() == 6144);
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->experts == 256);
  CHECK(m.moe->expert_ffn_hidden == 1536);
  CHECK(m.moe->sigmoid_router);
  CHECK(m.moe->expert_bias);
  CHECK(m.fp8_weight_block->n == 128);
  const int64_t layer = 44'040'192 + 7'168 + 6'144 + int64_t{256} * 3 * 3072 * 1536 + 256 * 3072;
  CHECK(layer_params(m, 0).total() == layer);
  CHECK(total_params(m) == 62 * layer + int64_t{2} * 200'064 * 3072 + 3072);
  CHECK(total_params(m) == 228'689'748'992);  // the card: "230B total parameters"
  // A shared expert of another width is refused by name.
  CHECK(error_of(R"({"model_type": "minimax_m2", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
    "num_local_experts": 4, "num_experts_per_tok": 2, "shared_intermediate_size": 256})")
            .find("field 'shared_intermediate_size' = '256': must be 0") != std::string::npos);
}

// GLM-4.6 per layer: attention 5120·12288 + 2·5120·1024 + 12288·5120 = 136,314,880, Q/K/V
// biases 12,288 + 2·1,024 = 14,336 (o_proj has none), Q and K norms per head 2·128; two norms
// 10,240; the first three layers' dense MLP 3·5120·12288 = 188,743,680; an MoE layer's 160 routed
// experts and one shared expert 161·3·5120·1536 = 3,798,466,560 and router 160·5120 = 819,200.
// Embedding and LM head 2·151,552·5120 = 1,551,892,480, final norm 5,120.
TEST_CASE("GLM-4.6 (glm4_moe): Q/K/V biases, q/k norms, 352,797,814,784 counted by hand") {
  const ModelSpec m = load("glm-4.6.json");
  CHECK(m.qkv_bias);
  CHECK_FALSE(m.bias);
  CHECK(m.qk_norm == QkNorm::per_head);
  CHECK(m.q_width() == 12288);  // 96 heads x 128, not hidden_size 5,120
  CHECK_FALSE(m.window.has_value());
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->experts == 160);
  CHECK(m.moe->top_k == 8);
  CHECK(m.moe->shared_experts == 1);
  CHECK(m.moe->expert_ffn_hidden == 1536);
  CHECK(m.moe->first_dense_layers == 3);
  CHECK(m.moe->sigmoid_router);
  CHECK(m.moe->expert_bias);
  CHECK(m.moe->routed_scaling == 2.5);
  const int64_t attention = 136'314'880 + 14'336 + 256, norms = 10'240;
  const int64_t dense = attention + norms + int64_t{3} * 5120 * 12288;
  const int64_t moe = attention + norms + int64_t{161} * 3 * 5120 * 1536 + 160 * 5120;
  CHECK(layer_params(m, 0).total() == dense);
  CHECK(layer_params(m, 3).total() == moe);
  CHECK(total_params(m) == 3 * dense + 89 * moe + int64_t{2} * 151'552 * 5120 + 5120);
  CHECK(total_params(m) == 352'797'814'784);
  // Its MTP layer, counted apart: an MoE layer, eh_proj 2·5120·5120 and three norms; with it
  // 356.8B, the card's "355 billion total parameters". Active: 8 of 160 routed experts.
  CHECK(m.mtp_layers == 1);
  CHECK(mtp_params(m) == moe + int64_t{2} * 5120 * 5120 + 3 * 5120);
  CHECK(active_params(m) == total_params(m) - int64_t{89} * 152 * 3 * 5120 * 1536);
  CHECK(active_params(m) == 33'632'251'904);  // the card: 32B active, embeddings aside
}

// GLM-4.5-Air per layer: attention 4096·12288 + 2·4096·1024 + 12288·4096 = 109,051,904, Q/K/V
// biases 14,336, no q/k norms (use_qk_norm false); two norms 8,192; the first layer's dense MLP
// 3·4096·10944 = 134,479,872; an MoE layer's 128 routed experts and one shared expert
// 129·3·4096·1408 = 2,231,894,016 and router 128·4096 = 524,288. Embedding and LM head
// 2·151,552·4096 = 1,241,513,984, final norm 4,096.
TEST_CASE("GLM-4.5-Air (glm4_moe without q/k norms): 106,852,245,504 counted by hand") {
  const ModelSpec m = load("glm-4.5-air.json");
  CHECK(m.qkv_bias);
  CHECK(m.qk_norm == QkNorm::none);
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->first_dense_layers == 1);
  CHECK(m.moe->routed_scaling == 1.0);
  const int64_t attention = 109'051'904 + 14'336, norms = 8'192;
  const int64_t dense = attention + norms + int64_t{3} * 4096 * 10944;
  const int64_t moe = attention + norms + int64_t{129} * 3 * 4096 * 1408 + 128 * 4096;
  CHECK(total_params(m) == dense + 45 * moe + int64_t{2} * 151'552 * 4096 + 4096);
  CHECK(total_params(m) == 106'852'245'504);  // the card: 106B total, 12B active
  // Without attention_bias its Q/K/V carry none; other families still refuse the field.
  CHECK_FALSE(parse_hf_config(R"({"model_type": "glm4_moe", "num_hidden_layers": 2,
    "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128})",
                              "config.json")
                  .value()
                  .qkv_bias);
  CHECK(error_of(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
    "attention_bias": true})")
            .find("field 'attention_bias' = 'true': true is not supported") != std::string::npos);
}

// gpt-oss per layer: attention 2880·4096 + 2·2880·512 + 4096·2880 = 26,542,080, biases on all
// four maps 4,096 + 2·512 + 2,880 = 8,000, a sink per head 64; two norms 5,760; an expert
// 2880·5760 + 5,760 + 2880·2880 + 2,880 = 24,891,840 (gate_up and down with their biases); the
// router 2880·E + E. Embedding and unembedding 2·201,088·2880 = 1,158,266,880, final norm 2,880.
TEST_CASE("gpt-oss (gpt_oss): biases, sinks, a router bias: 116,829,156,672 and 20,914,757,184") {
  const ModelSpec big = load("gpt-oss-120b.json");
  CHECK(big.bias);
  CHECK(big.attention_sinks);
  CHECK(big.qk_norm == QkNorm::none);
  CHECK(big.q_width() == 4096);  // 64 heads x 64, not hidden_size 2,880
  REQUIRE(big.moe.has_value());
  CHECK(big.moe->experts == 128);
  CHECK(big.moe->top_k == 4);
  CHECK(big.moe->expert_ffn_hidden == 2880);
  CHECK(big.moe->shared_experts == 0);
  CHECK(big.moe->first_dense_layers == 0);
  CHECK(big.moe->router_bias);
  CHECK_FALSE(big.moe->sigmoid_router);
  // layer_types alternates sliding (128 tokens) and full attention, full on the odd layers.
  REQUIRE(big.window.has_value());
  CHECK(big.window->tokens == 128);
  CHECK(big.window->global_every == 2);
  const int64_t attention = 26'542'080 + 8'000 + 64, norms = 5'760, expert = 24'891'840;
  const int64_t embeddings = int64_t{2} * 201'088 * 2880 + 2880;
  CHECK(layer_params(big, 0).total() == attention + norms + 128 * expert + 128 * 2880 + 128);
  CHECK(total_params(big) ==
        36 * (attention + norms + 128 * expert + 128 * 2880 + 128) + embeddings);
  CHECK(total_params(big) == 116'829'156'672);  // the card: 116.83B
  // Active: 4 of 128 experts; the card's 5.13B leaves out the embedding table (0.58B).
  CHECK(active_params(big) == total_params(big) - int64_t{36} * 124 * expert);
  CHECK(active_params(big) - 201'088 * 2880 == 5'132'849'472);
  const ModelSpec small = load("gpt-oss-20b.json");
  CHECK(small.moe->experts == 32);
  CHECK(total_params(small) ==
        24 * (attention + norms + 32 * expert + 32 * 2880 + 32) + embeddings);
  CHECK(total_params(small) == 20'914'757'184);  // the card: 20.91B
  // Its experts carry biases whatever attention_bias says, so false is refused by name.
  CHECK(error_of(R"({"model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
    "num_local_experts": 4, "num_experts_per_tok": 2, "attention_bias": false})")
            .find("field 'attention_bias' = 'false': must be true for gpt_oss") !=
        std::string::npos);
}

TEST_CASE("context window as vLLM derives it: llama3 and YaRN scaling, a linear factor, LongRoPE") {
  // llama3-type scaling keeps max_position_embeddings; YaRN counts from its original length.
  CHECK(load("llama-3.1-8b.json").context_tokens == 131072);
  CHECK(load("gpt-oss-120b.json").context_tokens == 4096 * 32);
  CHECK(load("mixtral-8x7b.json").context_tokens == 32768);
  CHECK(load("glm-5-fp8.json").context_tokens == 202752);  // rope_parameters, type default
  auto context_of = [](const std::string& extra) {
    Result<ModelSpec> r = parse_hf_config(std::string(kTinyLlama) + extra + "}", "config.json");
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
    return r.value().context_tokens;
  };
  CHECK(context_of("") == 0);  // no length key: nothing stated
  CHECK(context_of(R"(, "max_position_embeddings": 4096, "rope_scaling": {"type": "linear",
 "factor": 4.0})") == 16384);
  CHECK(context_of(
            R"(, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "dynamic"})") ==
        4096);
  // LongRoPE (Phi-3 128K): vLLM defaults to the original length.
  CHECK(context_of(R"(, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
 "rope_scaling": {"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]})") == 4096);
  // One set of parameters per layer type (transformers 5).
  CHECK(context_of(R"(, "max_position_embeddings": 8192, "rope_parameters": {"full_attention":
 {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
 "sliding_attention": {"rope_type": "default"}})") == 16384);
  CHECK(context_of(R"(, "max_position_embeddings": 8192, "model_max_length": 2048)") == 2048);
  CHECK(error_of(std::string(kTinyLlama) +
                 R"(, "max_position_embeddings": 100000000, "rope_scaling": {"type": "linear",
 "factor": 8}})") ==
        "config.json:2:111: error: field 'rope_scaling' = '{…}': scales the model's length to "
        "800000000 tokens; it must be between 1 and 100000000");
}
