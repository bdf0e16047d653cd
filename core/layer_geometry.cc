#include "core/layer_geometry.h"

#include <algorithm>
#include <cmath>

namespace meshplan {

double LinearMap::rank_in(int64_t tp) const {
  return split == TpSplit::row ? static_cast<double>(in) / static_cast<double>(tp)
                               : static_cast<double>(in);
}

double LinearMap::rank_out(int64_t tp) const {
  if (split != TpSplit::column) return static_cast<double>(out);
  const double t = static_cast<double>(tp);
  if (kv_out == 0) return static_cast<double>(out) / t;
  return static_cast<double>(out - kv_out) / t +
         static_cast<double>(kv_out) / static_cast<double>(std::min(tp, kv_groups));
}

double expert_rows(const MoeSpec& moe, double tokens, int64_t ep) {
  const double routed = tokens * static_cast<double>(moe.top_k) * moe.capacity_factor;
  return routed / static_cast<double>(moe.experts / ep);
}

double rank_tokens(double tokens, int64_t tp, bool sp) {
  return sp ? tokens / static_cast<double>(tp) : tokens;
}

double expert_group_tokens(double tokens, int64_t tp, int64_t etp, bool sp) {
  return rank_tokens(tokens, tp, sp) * static_cast<double>(sp ? etp : 1);
}

double parts_per_token(const MoeSpec& moe, int64_t parts) {
  const double n = static_cast<double>(parts);
  double usable = n;
  if (moe.group_limit > 0)
    usable = std::min(n, static_cast<double>(moe.group_limit) *
                             std::max(1.0, n / static_cast<double>(moe.groups)));
  return usable * (1 - std::pow(1 - 1 / usable, static_cast<double>(moe.top_k)));
}

RankGemm rank_gemm(const LinearMap& map, int64_t tp, double tokens, double expert_rows,
                   double local_experts) {
  if (map.role == LinearRole::expert)
    return {expert_rows, map.rank_out(tp), map.rank_in(tp), local_experts};
  if (map.role == LinearRole::shared) {
    LinearMap fused = map;
    (map.split == TpSplit::row ? fused.in : fused.out) *= map.copies;
    return {tokens, fused.rank_out(tp), fused.rank_in(tp), 1};
  }
  return {tokens, map.rank_out(tp), map.rank_in(tp), 1};
}

std::vector<LinearMap> attention_linears(const ModelSpec& model) {
  const int64_t h = model.hidden;
  std::vector<LinearMap> maps;
  if (model.mla) {
    // Down-projections are duplicated on every TP rank (Megatron-core MLA); up-projections split.
    const MlaSpec& a = *model.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    if (a.q_lora_rank > 0) {
      maps.push_back({.name = "q_a", .in = h, .out = a.q_lora_rank, .split = TpSplit::replicated});
      maps.push_back({.name = "q_b", .in = a.q_lora_rank, .out = model.heads * qk});
    } else {
      maps.push_back({.name = "q", .in = h, .out = model.heads * qk});
    }
    maps.push_back({.name = "kv_a",
                    .in = h,
                    .out = a.kv_lora_rank + a.qk_rope_head_dim,
                    .split = TpSplit::replicated});
    const int64_t kv_b = model.heads * (a.qk_nope_head_dim + a.v_head_dim);
    maps.push_back({.name = "kv_b",
                    .in = a.kv_lora_rank,
                    .out = kv_b,
                    .kv_out = kv_b,
                    .kv_groups = model.heads});
    maps.push_back(
        {.name = "attn_out", .in = model.heads * a.v_head_dim, .out = h, .split = TpSplit::row});
    if (model.sparse_attention) {
      // The lightning indexer's (DeepSeek's inference/model.py Indexer; vLLM's and Megatron-Core's
      // DSA hold them replicated: every rank selects the same keys for its heads). Its queries
      // come from the query latent, its one key and its per-head weights from the hidden state.
      const SparseAttentionSpec& s = *model.sparse_attention;
      maps.push_back({.name = "index_q",
                      .in = a.q_lora_rank,
                      .out = s.index_heads * s.index_head_dim,
                      .split = TpSplit::replicated});
      maps.push_back(
          {.name = "index_k", .in = h, .out = s.index_head_dim, .split = TpSplit::replicated});
      maps.push_back(
          {.name = "index_weights", .in = h, .out = s.index_heads, .split = TpSplit::replicated});
    }
    return maps;
  }
  const int64_t q = model.q_width(), kv = model.kv_width();
  maps.push_back({.name = "qkv",
                  .in = h,
                  .out = q + 2 * kv,
                  .bias = model.bias || model.qkv_bias,
                  .kv_out = 2 * kv,
                  .kv_groups = model.kv_heads});
  maps.push_back(
      {.name = "attn_out", .in = q, .out = h, .split = TpSplit::row, .bias = model.bias});
  return maps;
}

std::vector<LinearMap> mlp_linears(const ModelSpec& model, int64_t ffn, LinearRole role,
                                   int64_t copies) {
  const int64_t up = (model.mlp == MlpKind::swiglu ? 2 : 1) * ffn;  // gate and up for SwiGLU
  return {{.name = "mlp_up",
           .in = model.hidden,
           .out = up,
           .role = role,
           .copies = copies,
           .bias = model.bias},
          {.name = "mlp_down",
           .in = ffn,
           .out = model.hidden,
           .split = TpSplit::row,
           .role = role,
           .copies = copies,
           .bias = model.bias}};
}

std::vector<LinearMap> ffn_linears(const ModelSpec& model, int64_t layer) {
  if (!model.is_moe_layer(layer)) return mlp_linears(model, model.ffn_hidden);
  const MoeSpec& e = *model.moe;
  std::vector<LinearMap> maps{{.name = "router",
                               .in = model.hidden,
                               .out = e.experts,
                               .split = TpSplit::replicated,
                               .role = LinearRole::router,
                               .bias = e.router_bias}};
  for (const LinearMap& m : mlp_linears(model, e.expert_ffn_hidden, LinearRole::expert, e.experts))
    maps.push_back(m);
  if (e.shared_experts > 0) {
    for (const LinearMap& m :
         mlp_linears(model, e.expert_ffn_hidden, LinearRole::shared, e.shared_experts))
      maps.push_back(m);
  }
  return maps;
}

std::vector<LinearMap> layer_linears(const ModelSpec& model, int64_t layer) {
  std::vector<LinearMap> maps = attention_linears(model);
  for (const LinearMap& m : ffn_linears(model, layer)) maps.push_back(m);
  return maps;
}

LinearMap embedding_linear(const ModelSpec& model) {
  const int64_t positions =
      model.position_embedding == PositionEmbedding::learned ? model.max_positions : 0;
  return {.name = "embedding",
          .in = model.vocab + positions,
          .out = model.hidden,
          .split = TpSplit::row};
}

LinearMap lm_head_linear(const ModelSpec& model) {
  return {.name = "logits", .in = model.hidden, .out = model.vocab};
}

LinearMap mtp_projection_linear(const ModelSpec& model) {
  return {.name = "mtp_proj", .in = 2 * model.hidden, .out = model.hidden};
}

}  // namespace meshplan
