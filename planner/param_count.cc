#include "planner/param_count.h"

#include <algorithm>

namespace meshplan {
namespace {

int64_t norm_params(const ModelSpec& m, int64_t width) {
  return m.norm == NormKind::layernorm ? 2 * width : width;  // γ (and β)
}

// Weights of one MLP of width `ffn`; biases are split into column- and row-parallel parts.
struct MlpParams {
  int64_t split = 0;       // column-parallel and row-parallel weights, column biases
  int64_t replicated = 0;  // row-parallel output bias
};

MlpParams mlp_params(const ModelSpec& m, int64_t ffn) {
  const int64_t in_mats = m.mlp == MlpKind::swiglu ? 2 : 1;  // gate and up for SwiGLU
  MlpParams p;
  p.split = (in_mats + 1) * m.hidden * ffn + (m.bias ? in_mats * ffn : 0);
  p.replicated = m.bias ? m.hidden : 0;
  return p;
}

void add_attention(const ModelSpec& m, LayerParams& p) {
  const int64_t h = m.hidden;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    // Down-projections are duplicated on every TP rank (Megatron-core MLA); up-projections split.
    if (a.q_lora_rank > 0) {
      p.replicated += h * a.q_lora_rank + a.q_lora_rank;  // q_a_proj + q_a_layernorm
      p.attention += a.q_lora_rank * m.heads * qk;        // q_b_proj
    } else {
      p.attention += h * m.heads * qk;
    }
    p.replicated += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
    p.attention_kv = a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    p.attention += p.attention_kv + m.heads * a.v_head_dim * h;  // kv_b_proj + o_proj
    return;
  }
  const int64_t q = m.q_width(), kv = m.kv_width();
  p.attention_kv = 2 * h * kv + (m.bias ? 2 * kv : 0);
  p.attention += h * q + (m.bias ? q : 0) + p.attention_kv + q * h;
  p.replicated += m.bias ? h : 0;                  // output-projection bias
  p.replicated += m.qk_norm ? 2 * m.head_dim : 0;  // per-head q/k RMSNorm weights
}

}  // namespace

LayerParams layer_params(const ModelSpec& m, int64_t layer) {
  LayerParams p;
  add_attention(m, p);
  p.replicated += 2 * norm_params(m, m.hidden);
  if (!m.is_moe_layer(layer)) {
    MlpParams d = mlp_params(m, m.ffn_hidden);
    p.dense_mlp = d.split;
    p.replicated += d.replicated;
    return p;
  }
  const MoeSpec& e = *m.moe;
  MlpParams expert = mlp_params(m, e.expert_ffn_hidden);
  p.routed_experts = e.experts * (expert.split + expert.replicated);
  p.dense_mlp = e.shared_experts * expert.split;
  p.replicated += e.shared_experts * expert.replicated + m.hidden * e.experts;  // router
  return p;
}

int64_t embedding_params(const ModelSpec& m) {
  int64_t positions = m.position_embedding == PositionEmbedding::learned ? m.max_positions : 0;
  return (m.vocab + positions) * m.hidden;
}

int64_t lm_head_params(const ModelSpec& m) { return m.tied_embeddings ? 0 : m.vocab * m.hidden; }
int64_t final_norm_params(const ModelSpec& m) { return norm_params(m, m.hidden); }

int64_t total_params(const ModelSpec& m) {
  int64_t n = embedding_params(m) + lm_head_params(m) + final_norm_params(m);
  for (int64_t i = 0; i < m.layers; ++i) n += layer_params(m, i).total();
  return n;
}

int64_t active_params(const ModelSpec& m) {
  int64_t n = total_params(m);
  if (!m.moe) return n;
  for (int64_t i = 0; i < m.layers; ++i) {
    LayerParams p = layer_params(m, i);
    n -= p.routed_experts - p.routed_experts / m.moe->experts * m.moe->top_k;
  }
  return n;
}

std::vector<int64_t> chunk_boundaries(const ModelSpec& m, const Layout& l) {
  std::vector<int64_t> sizes = chunk_layers(m.layers, l.pp, l.vpp);
  std::vector<int64_t> bounds{0};
  for (int64_t s : sizes) bounds.push_back(bounds.back() + s);
  return bounds;
}

std::vector<StageParams> stage_params(const ModelSpec& m, const Layout& l) {
  std::vector<StageParams> stages(static_cast<size_t>(l.pp));
  std::vector<int64_t> bounds = chunk_boundaries(m, l);
  const int64_t kv_split = m.mla ? l.tp : std::min(l.tp, m.kv_heads);  // KV replicated beyond
  for (size_t c = 0; c + 1 < bounds.size(); ++c) {
    StageParams& s = stages[c % static_cast<size_t>(l.pp)];
    for (int64_t i = bounds[c]; i < bounds[c + 1]; ++i) {
      LayerParams p = layer_params(m, i);
      s.layers += 1;
      s.full_params += p.total();
      s.dense_per_gpu += (p.attention - p.attention_kv) / l.tp + p.attention_kv / kv_split +
                         p.replicated + p.dense_mlp / l.tp;
      s.expert_per_gpu += p.routed_experts / (l.ep * l.tp);
    }
  }
  for (size_t i = 0; i < stages.size(); ++i) stages[i].stage = static_cast<int64_t>(i);
  // Vocabulary-parallel embedding on the first stage; final norm and LM head on the last. With
  // tied embeddings and pp > 1 the last stage keeps its own copy of the word embeddings
  // (Megatron-LM), kept in sync by an all-reduce of their gradients.
  StageParams& first = stages.front();
  StageParams& last = stages.back();
  first.full_params += embedding_params(m);
  first.dense_per_gpu += embedding_params(m) / l.tp;
  int64_t head = m.tied_embeddings ? (l.pp > 1 ? m.vocab * m.hidden : 0) : lm_head_params(m);
  last.full_params += head + final_norm_params(m);
  last.dense_per_gpu += head / l.tp + final_norm_params(m);
  return stages;
}

}  // namespace meshplan
