#include "planner/param_count.h"

#include <algorithm>

#include "core/pipeline_placement.h"

namespace meshplan {
namespace {

int64_t norm_params(const ModelSpec& m, int64_t width) {
  return m.norm == NormKind::layernorm ? 2 * width : width;  // γ (and β)
}

// Adds one linear map to the tensor group TP/EP shard it by: routed experts by ep and tp;
// column-parallel weights and biases by tp (K/V columns at most kv_groups ways); row-parallel
// weights by tp with their bias on every rank; replicated maps (MLA down-projections, router)
// on every rank.
void add_linear(const LinearMap& map, bool attention, LayerParams& p) {
  const int64_t weights = map.copies * map.weights(), biases = map.copies * map.biases();
  if (map.role == LinearRole::expert) {
    p.routed_experts += weights + biases;
    p.expert_gemms += map.copies;
    return;
  }
  if (map.role != LinearRole::router) p.gemms += map.copies;
  int64_t& split = attention ? p.attention : p.dense_mlp;
  switch (map.split) {
    case TpSplit::column:
      split += weights + biases;
      if (attention) p.attention_kv += map.kv_out * map.in + (map.bias ? map.kv_out : 0);
      return;
    case TpSplit::row:
      split += weights;
      p.replicated += biases;
      return;
    case TpSplit::replicated:
      p.replicated += weights + biases;
      return;
  }
}

// Norm weights inside attention: MLA's q_a/kv_a layernorms (and a sparse-attention indexer's
// LayerNorm on its key, weight and bias), q/k RMSNorm per head (Qwen3) or over the whole of Q and
// K (MiniMax-M2).
int64_t attention_norm_params(const ModelSpec& m) {
  if (m.mla)
    return (m.mla->q_lora_rank > 0 ? m.mla->q_lora_rank : 0) + m.mla->kv_lora_rank +
           (m.sparse_attention ? 2 * m.sparse_attention->index_head_dim : 0);
  switch (m.qk_norm) {
    case QkNorm::per_head:
      return 2 * m.head_dim;
    case QkNorm::per_layer:
      return m.q_width() + m.kv_width();
    case QkNorm::none:
      break;
  }
  return 0;
}

}  // namespace

LayerParams layer_params(const ModelSpec& m, int64_t layer) {
  LayerParams p;
  for (const LinearMap& map : attention_linears(m)) add_linear(map, true, p);
  for (const LinearMap& map : ffn_linears(m, layer)) add_linear(map, false, p);
  p.replicated += attention_norm_params(m) + (m.post_norms ? 4 : 2) * norm_params(m, m.hidden);
  if (m.attention_sinks) p.attention += m.heads;  // one per head, held with its head
  return p;
}

int64_t embedding_params(const ModelSpec& m) { return embedding_linear(m).weights(); }

int64_t lm_head_params(const ModelSpec& m) {
  return m.tied_embeddings ? 0 : lm_head_linear(m).weights();
}
int64_t final_norm_params(const ModelSpec& m) { return norm_params(m, m.hidden); }

int64_t total_params(const ModelSpec& m) {
  int64_t n = embedding_params(m) + lm_head_params(m) + final_norm_params(m);
  for (int64_t i = 0; i < m.layers; ++i) n += layer_params(m, i).total();
  return n;
}

LayerParams mtp_layer_params(const ModelSpec& m) {
  LayerParams p = layer_params(m, m.layers - 1);
  add_linear(mtp_projection_linear(m), false, p);
  p.replicated += 3 * norm_params(m, m.hidden);
  return p;
}

int64_t mtp_params(const ModelSpec& m) {
  if (m.mtp_layers == 0) return 0;
  return m.mtp_layers * mtp_layer_params(m).total();
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
  bounds.back() += m.mtp_layers;
  return bounds;
}

std::vector<LayerParams> model_layer_params(const ModelSpec& m) {
  std::vector<LayerParams> layers;
  layers.reserve(static_cast<size_t>(m.trained_layers()));
  for (int64_t i = 0; i < m.layers; ++i) layers.push_back(layer_params(m, i));
  for (int64_t i = 0; i < m.mtp_layers; ++i) layers.push_back(mtp_layer_params(m));
  return layers;
}

std::vector<StageParams> stage_params(const ModelSpec& m, const Layout& l) {
  return stage_params(m, l, model_layer_params(m));
}

std::vector<StageParams> stage_params(const ModelSpec& m, const Layout& l,
                                      const std::vector<LayerParams>& layers) {
  std::vector<StageParams> stages(static_cast<size_t>(l.pp));
  std::vector<int64_t> bounds = chunk_boundaries(m, l);
  // K/V columns split at most kv_groups ways (replicated beyond kv_heads; MLA: all heads).
  int64_t kv_split = l.tp;
  for (const LinearMap& map : attention_linears(m))
    if (map.kv_out > 0) kv_split = std::min(l.tp, map.kv_groups);
  const PipelinePlacement placement = pipeline_placement(l.pipeline());
  for (size_t r = 0; r < stages.size(); ++r) {
    StageParams& s = stages[r];
    for (const int64_t c : placement.stage_chunks[r]) {
      for (int64_t i = bounds[static_cast<size_t>(c)]; i < bounds[static_cast<size_t>(c) + 1];
           ++i) {
        const LayerParams& p = layers[static_cast<size_t>(i)];
        s.layers += 1;
        s.full_params += p.total();
        const int64_t linear =
            (p.attention - p.attention_kv) / l.tp + p.attention_kv / kv_split + p.dense_mlp / l.tp;
        const int64_t experts = p.routed_experts / (l.ep * l.expert_tp());
        s.dense_per_gpu += linear + p.replicated;
        s.expert_per_gpu += experts;
        s.linear_per_gpu += linear + experts;
        // TE's GroupedLinear keeps one GEMM's scaling state per local expert (num_gemms).
        s.fp8_gemms += p.gemms + p.expert_gemms / l.ep;
      }
    }
  }
  for (size_t i = 0; i < stages.size(); ++i) stages[i].stage = static_cast<int64_t>(i);
  // Vocabulary-parallel embedding on the stage(s) holding the first chunk; final norm and LM
  // head on those holding the last. With tied embeddings a stage holding the head but not the
  // embedding keeps its own copy of the word embeddings (Megatron-LM), kept in sync by an
  // all-reduce of their gradients.
  for (size_t r = 0; r < stages.size(); ++r) {
    StageParams& s = stages[r];
    const auto rank = static_cast<int64_t>(r);
    if (holds_first_chunk(l.pipeline(), rank)) {
      s.full_params += embedding_params(m);
      s.dense_per_gpu += embedding_params(m) / l.tp;
    }
    if (!holds_last_chunk(l.pipeline(), rank)) continue;
    // Its own copy of the embedding ("we also need to maintain duplicated embedding weights in
    // mtp process stage", Megatron-Core); with tied embeddings that copy is the head's.
    const bool copy = !holds_first_chunk(l.pipeline(), rank) && m.head_stage_shares_embedding();
    const int64_t head =
        (m.tied_embeddings ? 0 : lm_head_params(m)) + (copy ? lm_head_linear(m).weights() : 0);
    s.full_params += head + final_norm_params(m);
    s.dense_per_gpu += head / l.tp + final_norm_params(m);
  }
  return stages;
}

}  // namespace meshplan
