// KV bytes per token, hand-derived: 2 (K and V) × KV heads per rank × head dim × layers × bytes.
#include "serving/kv_cache.h"

#include <doctest/doctest.h>

#include "serving/engine_preset.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::serving;
using meshplan::testing::shipped_model;

TEST_CASE("kv cache: llama3-70b GQA (8 KV heads, d=128, 80 layers) splits its heads over tp") {
  const ModelSpec m = shipped_model("llama3-70b");
  CHECK(kv_bytes_per_token(m, 1, 1, KvFormat::bf16) == 2 * 8 * 128 * 80 * 2);  // 327,680
  CHECK(kv_bytes_per_token(m, 4, 1, KvFormat::bf16) == 2 * 2 * 128 * 80 * 2);
  CHECK(kv_bytes_per_token(m, 8, 1, KvFormat::bf16) == 2 * 1 * 128 * 80 * 2);  // 40,960
}

TEST_CASE("kv cache: with tp above the KV heads each rank still holds one whole head") {
  const ModelSpec m = shipped_model("llama3-8b");  // 8 KV heads
  CHECK(kv_heads_per_rank(m, 16) == 1);
  CHECK(kv_bytes_per_token(m, 16, 1, KvFormat::bf16) ==
        kv_bytes_per_token(m, 8, 1, KvFormat::bf16));
}

TEST_CASE("kv cache: FP8 halves the bytes and pp keeps the stage's layers") {
  const ModelSpec m = shipped_model("llama3-70b");
  CHECK(kv_bytes_per_token(m, 1, 1, KvFormat::fp8) == 2 * 8 * 128 * 80);
  CHECK(stage_layers(m, 3) == 27);  // ceil(80 / 3)
  CHECK(kv_bytes_per_token(m, 8, 2, KvFormat::bf16) == 2 * 1 * 128 * 40 * 2);
}

TEST_CASE("kv cache: MLA caches the latent and RoPE key, replicated on every TP rank") {
  const ModelSpec m = shipped_model("deepseek-v3");  // kv_lora_rank 512 + rope 64, 61 layers
  CHECK(kv_elements_per_token_layer(m, 1) == 576);
  CHECK(kv_bytes_per_token(m, 1, 1, KvFormat::bf16) == 576 * 61 * 2);  // 70,272
  CHECK(kv_bytes_per_token(m, 8, 1, KvFormat::bf16) == 576 * 61 * 2);
  CHECK(kv_bytes_per_token(m, 8, 1, KvFormat::fp8) == 576 * 61);
}

TEST_CASE("kv cache: a request's tokens round up to whole blocks") {
  CHECK(block_rounded_tokens(2500, 16) == 2512);
  CHECK(block_rounded_tokens(2500, 32) == 2528);
  CHECK(block_rounded_tokens(2496, 32) == 2496);
  CHECK(block_rounded_tokens(2500, 1) == 2500);
}

TEST_CASE("vLLM frees a sliding window's older K/V, SGLang and TensorRT-LLM keep every token") {
  ModelSpec m = shipped_model("llama3-8b");
  m.window = AttentionWindow{1024, WindowKind::sliding, 2};  // half the layers slide
  // 8,000 tokens: the full layers hold 8,000, the sliding ones cdiv(1023, 16) + 1 = 65 blocks of
  // 16 = 1,040; half and half, 4,520 tokens of every layer.
  CHECK(request_cache_tokens(m, 8000, 16, true) == 4520);
  CHECK(request_cache_tokens(m, 8000, 16, false) == 8000);
  CHECK(request_cache_tokens(m, 8000, 32, false) == 8000);
  // Within the window nothing is freed.
  CHECK(request_cache_tokens(m, 1000, 16, true) == 1008);
  // Chunked local attention (Llama 4) keeps every token: vLLM leaves it out of the hybrid manager.
  m.window->kind = WindowKind::chunked;
  CHECK(request_cache_tokens(m, 8000, 16, true) == 8000);
  // The vLLM preset frees, the others do not.
  CHECK(engine_preset(Engine::vllm).drops_sliding_window_kv);
  CHECK_FALSE(engine_preset(Engine::sglang).drops_sliding_window_kv);
  CHECK_FALSE(engine_preset(Engine::trtllm).drops_sliding_window_kv);
}

TEST_CASE(
    "kv cache: a shared prefix is held in whole blocks, vLLM reuses those, TensorRT-LLM partial "
    "reuse every prefix token") {
  const PrefixReuse vllm = prefix_reuse(1000, 16, false);
  CHECK(vllm.shared_tokens == 992);  // 62 whole blocks of 16
  CHECK(vllm.reused_tokens == 992);
  const PrefixReuse trtllm = prefix_reuse(1000, 32, true);
  CHECK(trtllm.shared_tokens == 992);  // 31 whole blocks of 32; the 8 tokens left are copied
  CHECK(trtllm.reused_tokens == 1000);
  const PrefixReuse sglang = prefix_reuse(1000, 1, false);
  CHECK(sglang.shared_tokens == 1000);
  CHECK(sglang.reused_tokens == 1000);
  CHECK(prefix_reuse(15, 16, false).reused_tokens == 0);  // no whole block: nothing cached
}
