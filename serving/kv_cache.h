// KV-cache size: bytes one token occupies on one GPU, and paged block rounding.
//
// GQA/MHA: each layer stores K and V, kv_heads × head_dim each. Tensor parallelism splits the
// KV heads over the TP ranks; with tp > kv_heads every rank still needs one whole head, so
// the heads are replicated (tp / kv_heads copies of each): kv_heads_per_rank =
// max(1, kv_heads / tp) (vLLM: "the number of KV heads is replicated when tp > num_kv_heads";
// TensorRT-LLM likewise).
// MLA (DeepSeek-V2/V3): the cache holds the compressed latent (kv_lora_rank) and the decoupled
// RoPE key (qk_rope_head_dim) per token and layer, shared by all heads, so it is replicated on
// every TP rank (576 elements per layer for DeepSeek-V3; vLLM and SGLang MLA backends).
// Sparse attention (DeepSeek-V3.2): the indexer's key per token and layer beside the latent, in
// FP8 with one FP32 scale per 128 elements whatever the KV format (132 bytes for index_head_dim
// 128: vLLM's DeepseekV32IndexerCache, head_dim index_head_dim + index_head_dim // 128 * 4 of
// uint8; SGLang's NSA index cache alike), replicated on every TP rank like the latent.
// Pipeline parallelism: a GPU holds the KV of its stage's layers, ceil(layers / pp).
#pragma once

#include <cstdint>

#include "core/model_spec.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

// Layers of the largest pipeline stage. REQUIRES: pp ≥ 1.
int64_t stage_layers(const ModelSpec& model, int64_t pp);
// KV heads one TP rank stores (MLA: 1, the shared latent). REQUIRES: tp ≥ 1.
double kv_heads_per_rank(const ModelSpec& model, int64_t tp);
// Elements of K and V (or the MLA latent) one token adds to one layer on one TP rank.
double kv_elements_per_token_layer(const ModelSpec& model, int64_t tp);
// Bytes one token adds to one layer's K/V (or MLA latent) on one TP rank in format `kv`. A sparse-
// attention model's FP8 latent is FlashMLA's sparse layout, which vLLM's FlashMLASparse backend
// converts any FP8 cache to (kv_cache_dtype fp8_ds_mla, 656 bytes for DeepSeek-V3.2: the 512
// latent values in FP8, one FP32 scale per 128 of them, the 64 RoPE values in BF16; FlashMLA's
// README); TensorRT-LLM's DSA layout is not verified and taken the same.
double kv_bytes_per_token_layer(const ModelSpec& model, int64_t tp, KvFormat kv);
// Bytes one token adds to one layer's sparse-attention indexer cache (0 without one).
double indexer_bytes_per_token_layer(const ModelSpec& model);
// Bytes one token adds to the KV cache on one GPU of the largest stage.
double kv_bytes_per_token(const ModelSpec& model, int64_t tp, int64_t pp, KvFormat kv);
// Tokens a request holds rounded up to whole blocks of `block_tokens`. REQUIRES: block ≥ 1.
int64_t block_rounded_tokens(int64_t tokens, int64_t block_tokens);
// The cache a request of n tokens holds, in tokens of every layer (kv_bytes_per_token's unit):
// block_rounded_tokens, but where the engine frees a sliding window's older K/V
// (`drops_window`, EnginePreset::drops_sliding_window_kv) its local layers hold at most
// cdiv(W − 1, block) + 1 blocks (vLLM's SlidingWindowManager), weighted by their share of the
// layers. Resolved once for a model and engine (request_cache), then asked per length (the
// replay asks for every growing sequence at every step).
struct RequestCache {
  int64_t block_tokens = 1;
  int64_t window_tokens = 0;  // the most a local layer keeps; 0: every layer keeps every token
  double local_share = 0;     // layers that keep at most window_tokens, of all
  int64_t tokens(int64_t n) const;
};
// A prompt prefix every request shares (a system prompt) under the engine's prefix cache, warm:
// vLLM V1 (automatic prefix caching, on by default; docs.vllm.ai design/prefix_caching: blocks
// hashed by their tokens and the prefix before them, only full blocks cached), SGLang (the radix
// cache, on unless --disable-radix-cache; pages of one token), TensorRT-LLM (KvCacheConfig
// enable_block_reuse = True, enable_partial_reuse = True, copy_on_partial_reuse = True: a
// partly matched block is copied into the request's own and its tokens not recomputed). The
// prefix's whole blocks are held once per cache; each request computes its prompt past the
// reused tokens, attending to the prefix.
struct PrefixReuse {
  int64_t reused_tokens = 0;  // prompt tokens a request reads from the cache, not computes
  int64_t shared_tokens = 0;  // cache tokens one copy of the prefix holds (its whole blocks)
};
// REQUIRES: prefix_tokens ≥ 0, block_tokens ≥ 1.
PrefixReuse prefix_reuse(int64_t prefix_tokens, int64_t block_tokens, bool partial_block_reuse);

// REQUIRES: block ≥ 1.
RequestCache request_cache(const ModelSpec& model, int64_t block_tokens, bool drops_window);
int64_t request_cache_tokens(const ModelSpec& model, int64_t tokens, int64_t block_tokens,
                             bool drops_window);

}  // namespace meshplan::serving
