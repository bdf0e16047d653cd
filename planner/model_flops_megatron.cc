#include "planner/model_flops_megatron.h"

namespace meshplan {

int64_t megatron_padded_vocab(int64_t vocab, int64_t tp) {
  const int64_t multiple = 128 * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

double megatron_flops_per_step(const ModelSpec& m, int64_t global_batch, int64_t tp) {
  const double B = static_cast<double>(global_batch), s = static_cast<double>(m.training.seq_len);
  const double L = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double a = static_cast<double>(m.heads), g = static_cast<double>(m.kv_heads);
  const double d = static_cast<double>(m.head_dim);
  const double gated = m.mlp == MlpKind::swiglu ? 1.5 : 1.0;
  double mlp = static_cast<double>(m.ffn_hidden) / h * gated;
  if (m.moe) {
    mlp = static_cast<double>(m.moe->expert_ffn_hidden) / h * static_cast<double>(m.moe->top_k) *
              gated +
          static_cast<double>(m.moe->shared_experts * m.moe->expert_ffn_hidden) / h * gated;
  }
  const double attention = (1 + g / a + s / h) * (d * a / h);
  const double logits = static_cast<double>(megatron_padded_vocab(m.vocab, tp)) / (2 * L * h);
  return 12 * B * s * L * h * h * (attention + mlp + logits);
}

}  // namespace meshplan
