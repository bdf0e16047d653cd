#include "planner/flop_count.h"

#include <algorithm>
#include <string_view>

#include "core/attention_span.h"
#include "core/layer_geometry.h"
#include "core/pipeline_placement.h"
#include "planner/op_sac.h"
#include "planner/param_count.h"

namespace meshplan {
namespace {

// Tokens that pass through one copy of `map` per token of the layer: every token for dense
// maps and the router, top_k of the routed tokens spread over all experts, every token for each
// shared expert.
double tokens_through(const ModelSpec& m, const LinearMap& map, double tokens) {
  switch (map.role) {
    case LinearRole::expert:
      return tokens * static_cast<double>(m.moe->top_k);
    case LinearRole::shared:
      return tokens * static_cast<double>(map.copies);
    case LinearRole::dense:
    case LinearRole::router:
      break;
  }
  return tokens;
}

// The forward FLOPs op SAC repeats in the backward: each recomputed mm's share of its map's.
double op_sac_forward_flops(const ModelSpec& m, int64_t layer, double tokens) {
  const std::vector<LinearMap> maps = layer_linears(m, layer);
  const std::vector<double> shares = op_sac_recomputed_shares(m, maps);
  double flops = 0;
  for (size_t i = 0; i < maps.size(); ++i)
    flops +=
        shares[i] * 2 * tokens_through(m, maps[i], tokens) * static_cast<double>(maps[i].weights());
  return flops;
}

}  // namespace

LayerFlops layer_forward_flops(const ModelSpec& m, int64_t layer, double tokens, double seq_len,
                               const FlopOptions& o) {
  // A multi-token-prediction layer does the last layer's work (its projection is counted with
  // the head: lm_head_forward_flops).
  if (layer >= m.layers) return layer_forward_flops(m, m.layers - 1, tokens, seq_len, o);
  LayerFlops f;
  int64_t attention_weights = 0;  // a multiply-add per weight per token
  for (const LinearMap& map : attention_linears(m)) attention_weights += map.weights();
  f.dense_gemms = 2 * tokens * static_cast<double>(attention_weights);
  const double a = static_cast<double>(m.heads);
  const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                          : static_cast<double>(m.head_dim);
  const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
  f.attention_core =
      2 * tokens * mean_keys_per_query(m, layer, seq_len, o.causal_attention) * a * (qk + v) +
      tokens * indexer_flops_per_query(m, seq_len, o.causal_attention);
  auto module = [&](RecomputeModule which) -> double& {
    return f.module[static_cast<size_t>(which)];
  };
  module(RecomputeModule::core_attn) = f.attention_core;
  for (const LinearMap& map : attention_linears(m)) {
    const std::string_view name = map.name;
    if (name == "q_b" || name == "kv_b")
      module(RecomputeModule::mla_up_proj) += 2 * tokens * static_cast<double>(map.weights());
  }
  for (const LinearMap& map : ffn_linears(m, layer)) {
    const double flops = 2 * tokens_through(m, map, tokens) * static_cast<double>(map.weights());
    f.dense_gemms += flops;
    switch (map.role) {
      case LinearRole::dense:
        module(RecomputeModule::mlp) += flops;
        break;
      case LinearRole::expert:
      case LinearRole::router:
        module(RecomputeModule::moe) += flops;
        break;
      case LinearRole::shared:
        module(RecomputeModule::shared_experts) += flops;
        break;
    }
  }
  if (o.op_sac) module(RecomputeModule::core_attn) = op_sac_forward_flops(m, layer, tokens);
  return f;
}

LayerFlops kind_forward_flops(const ModelSpec& m, bool moe_layers, double tokens, double seq_len,
                              const FlopOptions& o) {
  const KindLayers k = kind_layers(m, moe_layers);
  LayerFlops f = layer_forward_flops(m, k.global, tokens, seq_len, o);
  if (k.local_share == 0) return f;
  const LayerFlops l = layer_forward_flops(m, k.local, tokens, seq_len, o);
  f.attention_core += k.local_share * (l.attention_core - f.attention_core);
  if (!o.op_sac) f.module[static_cast<size_t>(RecomputeModule::core_attn)] = f.attention_core;
  return f;
}

double lm_head_forward_flops(const ModelSpec& m, double tokens) {
  const auto mtp = static_cast<double>(m.mtp_layers);
  return 2 * tokens *
         ((1 + mtp) * static_cast<double>(lm_head_linear(m).weights()) +
          mtp * static_cast<double>(mtp_projection_linear(m).weights()));
}

std::vector<int64_t> full_recompute_budget(const ModelSpec& m, const Layout& l) {
  std::vector<int64_t> out(static_cast<size_t>(l.pp));
  for (int64_t stage = 0; stage < l.pp; ++stage)
    out[static_cast<size_t>(stage)] =
        l.recompute == Recompute::full ? m.trained_layers() : l.recompute_layers_on(stage);
  return out;
}

StepFlops step_flops(const ModelSpec& m, const Layout& l, const TrainingSpec& t,
                     const FlopOptions& o) {
  const double tokens = static_cast<double>(t.global_batch * t.seq_len);
  const double seq = static_cast<double>(t.seq_len);
  double forward = lm_head_forward_flops(m, tokens), recomputed = 0;
  std::vector<int64_t> bounds = chunk_boundaries(m, l);
  std::vector<int64_t> full_left = full_recompute_budget(m, l);
  // (DualPipe's two copies of a chunk: counted on the rank the first half of the batch uses.)
  const PipelinePlacement placement = pipeline_placement(l.pipeline());
  for (size_t c = 0; c + 1 < bounds.size(); ++c) {
    int64_t& left = full_left[static_cast<size_t>(
        placement.holder(static_cast<int64_t>(c), 0, t.global_batch))];
    for (int64_t i = bounds[c]; i < bounds[c + 1]; ++i) {
      LayerFlops f = layer_forward_flops(m, i, tokens, seq, o);
      forward += f.total();
      if (left > 0) {
        recomputed += f.total();
        --left;
      } else if (l.recompute == Recompute::selective) {
        recomputed += f.selective(l.recompute_modules);
      }
    }
  }
  return {3 * forward, 3 * forward + recomputed};
}

}  // namespace meshplan
