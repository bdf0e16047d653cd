#include "planner/flop_count.h"

#include <algorithm>

#include "planner/param_count.h"

namespace meshplan {
namespace {

double mlp_flops(const ModelSpec& m, double tokens, double ffn) {
  const double mats = m.mlp == MlpKind::swiglu ? 3 : 2;
  return 2 * tokens * static_cast<double>(m.hidden) * ffn * mats;
}

double attention_projection_flops(const ModelSpec& m, double tokens) {
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  if (m.mla) {
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    const double q = x.q_lora_rank > 0 ? h * static_cast<double>(x.q_lora_rank) +
                                             static_cast<double>(x.q_lora_rank) * a * qk
                                       : h * a * qk;
    const double kv = h * static_cast<double>(x.kv_lora_rank + x.qk_rope_head_dim) +
                      static_cast<double>(x.kv_lora_rank) * a *
                          static_cast<double>(x.qk_nope_head_dim + x.v_head_dim);
    const double o = a * static_cast<double>(x.v_head_dim) * h;
    return 2 * tokens * (q + kv + o);
  }
  const double q = static_cast<double>(m.q_width()), kv = static_cast<double>(m.kv_width());
  return 2 * tokens * (h * q + 2 * h * kv + q * h);
}

}  // namespace

LayerFlops layer_forward_flops(const ModelSpec& m, int64_t layer, double tokens, double seq_len,
                               const FlopOptions& o) {
  LayerFlops f;
  f.dense_gemms = attention_projection_flops(m, tokens);
  const double a = static_cast<double>(m.heads);
  const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                          : static_cast<double>(m.head_dim);
  const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
  f.attention_core = 2 * tokens * seq_len * a * (qk + v) * (o.causal_attention ? 0.5 : 1.0);
  if (!m.is_moe_layer(layer)) {
    f.dense_gemms += mlp_flops(m, tokens, static_cast<double>(m.ffn_hidden));
    return f;
  }
  const MoeSpec& e = *m.moe;
  const double fe = static_cast<double>(e.expert_ffn_hidden);
  f.dense_gemms += 2 * tokens * static_cast<double>(m.hidden) * static_cast<double>(e.experts);
  f.dense_gemms += mlp_flops(m, tokens * static_cast<double>(e.top_k + e.shared_experts), fe);
  return f;
}

double lm_head_forward_flops(const ModelSpec& m, double tokens) {
  return 2 * tokens * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
}

StepFlops step_flops(const ModelSpec& m, const Layout& l, const TrainingSpec& t,
                     const FlopOptions& o) {
  const double tokens = static_cast<double>(t.global_batch * t.seq_len);
  const double seq = static_cast<double>(t.seq_len);
  double forward = lm_head_forward_flops(m, tokens), recomputed = 0;
  std::vector<int64_t> bounds = chunk_boundaries(m, l);
  // Layers recomputed in full: the first recompute_layers of each stage (Megatron's "block").
  std::vector<int64_t> full_left(static_cast<size_t>(l.pp),
                                 l.recompute == Recompute::full ? m.layers : l.recompute_layers);
  for (size_t c = 0; c + 1 < bounds.size(); ++c) {
    int64_t& left = full_left[c % static_cast<size_t>(l.pp)];
    for (int64_t i = bounds[c]; i < bounds[c + 1]; ++i) {
      LayerFlops f = layer_forward_flops(m, i, tokens, seq, o);
      forward += f.total();
      if (left > 0) {
        recomputed += f.total();
        --left;
      } else if (l.recompute == Recompute::selective) {
        recomputed += f.attention_core;
      }
    }
  }
  return {3 * forward, 3 * forward + recomputed};
}

}  // namespace meshplan
