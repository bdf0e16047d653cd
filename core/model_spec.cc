#include "core/model_spec.h"

namespace meshplan {

int64_t ModelSpec::q_width() const {
  if (mla) return heads * (mla->qk_nope_head_dim + mla->qk_rope_head_dim);
  return heads * head_dim;
}

int64_t ModelSpec::kv_width() const { return kv_heads * head_dim; }

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
const char* to_string(Precision p) { return p == Precision::bf16 ? "bf16" : "fp8"; }

}  // namespace meshplan
