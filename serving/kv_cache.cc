#include "serving/kv_cache.h"

#include <algorithm>

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

double kv_bytes_per_token(const ModelSpec& model, int64_t tp, int64_t pp, KvFormat kv) {
  return kv_elements_per_token_layer(model, tp) * static_cast<double>(stage_layers(model, pp)) *
         bytes_per_kv_element(kv);
}

int64_t block_rounded_tokens(int64_t tokens, int64_t block_tokens) {
  return (tokens + block_tokens - 1) / block_tokens * block_tokens;
}

}  // namespace meshplan::serving
