#include "serving/kv_cache.h"

#include <algorithm>
#include <cmath>

#include "core/attention_span.h"

namespace meshplan::serving {

int64_t stage_layers(const ModelSpec& model, int64_t pp) { return (model.layers + pp - 1) / pp; }

double kv_heads_per_rank(const ModelSpec& model, int64_t tp) {
  if (model.mla) return 1;
  return std::max(1.0, static_cast<double>(model.kv_heads) / static_cast<double>(tp));
}

double kv_elements_per_token_layer(const ModelSpec& model, int64_t tp) {
  if (model.mla) return static_cast<double>(model.mla->kv_lora_rank + model.mla->qk_rope_head_dim);
  return 2 * kv_heads_per_rank(model, tp) * static_cast<double>(model.head_dim);
}

namespace {

constexpr int64_t kScaleBlock = 128;  // FP8 elements sharing one FP32 scale (DSA caches)
constexpr double kScaleBytes = 4;

// `elements` in FP8 with one FP32 scale per kScaleBlock of them.
double fp8_scaled_bytes(int64_t elements) {
  return static_cast<double>(elements) +
         kScaleBytes * static_cast<double>((elements + kScaleBlock - 1) / kScaleBlock);
}

}  // namespace

double kv_bytes_per_token_layer(const ModelSpec& model, int64_t tp, KvFormat kv) {
  if (model.sparse_attention && model.mla && kv == KvFormat::fp8)
    return fp8_scaled_bytes(model.mla->kv_lora_rank) +
           bytes_per_kv_element(KvFormat::bf16) * static_cast<double>(model.mla->qk_rope_head_dim);
  return kv_elements_per_token_layer(model, tp) * bytes_per_kv_element(kv);
}

double indexer_bytes_per_token_layer(const ModelSpec& model) {
  return model.sparse_attention ? fp8_scaled_bytes(model.sparse_attention->index_head_dim) : 0;
}

double kv_bytes_per_token(const ModelSpec& model, int64_t tp, int64_t pp, KvFormat kv) {
  return (kv_bytes_per_token_layer(model, tp, kv) + indexer_bytes_per_token_layer(model)) *
         static_cast<double>(stage_layers(model, pp));
}

int64_t block_rounded_tokens(int64_t tokens, int64_t block_tokens) {
  return (tokens + block_tokens - 1) / block_tokens * block_tokens;
}

PrefixReuse prefix_reuse(int64_t prefix_tokens, int64_t block_tokens, bool partial_block_reuse) {
  PrefixReuse r;
  r.shared_tokens = prefix_tokens / block_tokens * block_tokens;
  r.reused_tokens = partial_block_reuse ? prefix_tokens : r.shared_tokens;
  return r;
}

RequestCache request_cache(const ModelSpec& model, int64_t block_tokens, bool drops_window) {
  RequestCache c;
  c.block_tokens = block_tokens;
  if (!drops_window || !model.window || model.window->kind != WindowKind::sliding) return c;
  c.window_tokens = block_rounded_tokens(model.window->tokens - 1, block_tokens) + block_tokens;
  c.local_share = local_layer_share(model);
  return c;
}

int64_t RequestCache::tokens(int64_t n) const {
  const int64_t whole = block_rounded_tokens(n, block_tokens);
  if (window_tokens == 0) return whole;
  const int64_t kept = std::min(whole, window_tokens);
  return static_cast<int64_t>(std::ceil((1 - local_share) * static_cast<double>(whole) +
                                        local_share * static_cast<double>(kept)));
}

int64_t request_cache_tokens(const ModelSpec& model, int64_t tokens, int64_t block_tokens,
                             bool drops_window) {
  return request_cache(model, block_tokens, drops_window).tokens(tokens);
}

}  // namespace meshplan::serving
