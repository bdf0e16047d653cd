#include "planner/model_flops_megatron.h"

namespace meshplan {

int64_t megatron_padded_vocab(int64_t vocab, int64_t tp) {
  const int64_t multiple = 128 * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

double megatron_flops_per_step(const ModelSpec& m, int64_t global_batch, int64_t tp,
                               MegatronFlops count) {
  const bool causal = count == MegatronFlops::causal;
  const double B = static_cast<double>(global_batch), s = static_cast<double>(m.training.seq_len);
  // Multi-token-prediction layers count as layers of the last layer's kind, with their norms and
  // projection and one more logits each (training.py num_floating_point_operations, d98e8a64).
  const int64_t layers = m.trained_layers();
  const double mtp = static_cast<double>(m.mtp_layers);
  const double L = static_cast<double>(layers), h = static_cast<double>(m.hidden);
  const double a = static_cast<double>(m.heads), g = static_cast<double>(m.kv_heads);
  const double d = static_cast<double>(m.head_dim);
  const double gated = m.mlp == MlpKind::swiglu ? 1.5 : 1.0;
  double mlp = static_cast<double>(m.ffn_hidden) / h * gated;
  if (m.moe) {
    const double expert =
        static_cast<double>(m.moe->expert_ffn_hidden) / h * static_cast<double>(m.moe->top_k) *
            gated +
        static_cast<double>(m.moe->shared_experts * m.moe->expert_ffn_hidden) / h * gated;
    // r0.8 counts every layer as MoE; 8873b55d weighs the dense and MoE layers.
    const double moe_layers = static_cast<double>(m.moe_layers_in(0, layers));
    mlp = causal ? (expert * moe_layers + mlp * (L - moe_layers)) / L : expert;
  }
  const double attention = (1 + g / a + (causal ? s / (2 * h) : s / h)) * (d * a / h);
  const double logits =
      static_cast<double>(megatron_padded_vocab(m.vocab, tp)) * (1 + mtp) / (2 * L * h);
  const double mtp_proj = 6 * B * s * mtp * (3 * h + 2 * h * h);
  return 12 * B * s * L * h * h * (attention + mlp + logits) + mtp_proj;
}

}  // namespace meshplan
