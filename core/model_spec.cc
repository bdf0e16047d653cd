#include "core/model_spec.h"

#include <algorithm>

namespace meshplan {

int64_t ModelSpec::q_width() const {
  if (mla) return heads * (mla->qk_nope_head_dim + mla->qk_rope_head_dim);
  return heads * head_dim;
}

int64_t ModelSpec::kv_width() const { return kv_heads * head_dim; }

int64_t ModelSpec::moe_layers_in(int64_t begin, int64_t end) const {
  if (!moe) return 0;
  if (end > layers && layers > 0) {  // MTP layers: of the last layer's kind
    const int64_t mtp = end - std::max(begin, layers);
    return moe_layers_in(begin, layers) + (is_moe_layer(layers - 1) ? mtp : 0);
  }
  const int64_t first = moe->first_dense_layers, step = moe->layer_step;
  const int64_t from = std::max(begin, first);
  if (end <= from) return 0;
  // MoE layers are first + k·step − 1 for k ≥ 1: count the k that land in [from, end).
  const int64_t last_k = (end - first) / step;
  const int64_t first_k = (from - first + step) / step;  // ceil((from − first + 1) / step)
  return std::max<int64_t>(0, last_k - first_k + 1);
}

const char* to_string(MlpKind k) {
  switch (k) {
    case MlpKind::gelu:
      return "gelu";
    case MlpKind::swiglu:
      return "swiglu";
    case MlpKind::relu:
      return "relu";
  }
  return "?";
}

const char* to_string(NormKind k) { return k == NormKind::layernorm ? "layernorm" : "rmsnorm"; }
const char* to_string(AttentionKind k) { return k == AttentionKind::flash ? "flash" : "standard"; }
const char* to_string(WindowKind k) { return k == WindowKind::sliding ? "sliding" : "chunked"; }
const char* to_string(Precision p) { return p == Precision::bf16 ? "bf16" : "fp8"; }

}  // namespace meshplan
