// Parameter counts per tensor group, from the model spec alone (no parallelism), and per GPU
// under a layout. Published totals these reproduce: Llama 3.1 8B 8,030,261,248; 70B
// 70,553,706,496; 405B 405,853,388,800; Mixtral-8x7B 46,702,792,704.
#pragma once

#include <cstdint>
#include <vector>

#include "core/layer_geometry.h"
#include "core/layout.h"
#include "core/model_spec.h"

namespace meshplan {

// Parameters of one transformer layer, split by how TP/EP shard them.
struct LayerParams {
  int64_t attention = 0;       // split by tp (Q, K, V, O; MLA up-projections)
  int64_t attention_kv = 0;    // K and V projections (replicated when tp > kv_heads); ⊂ attention
  int64_t replicated = 0;      // identical on every TP rank: norms, row-parallel biases,
                               // MLA down-projections, router
  int64_t dense_mlp = 0;       // dense or shared-expert MLP, split by tp
  int64_t routed_experts = 0;  // all routed experts, split by ep (experts) and tp (width)
  // GEMMs of the linear maps that FP8 training runs in FP8 (all but the router), one per map
  // and expert copy: routed ones (split by ep) apart from the others.
  int64_t gemms = 0, expert_gemms = 0;
  int64_t total() const { return attention + replicated + dense_mlp + routed_experts; }
};

LayerParams layer_params(const ModelSpec& m, int64_t layer);
// One multi-token-prediction module (ModelSpec::mtp_layers): a layer like the last one, the
// projection of [hidden; embedding] back to hidden (mtp_projection_linear, split by tp) and three
// norms (enorm, hnorm and its final norm: DeepSeek-V3 §2.2; Megatron-Core
// MultiTokenPredictionLayer). Its embedding and LM head are the model's.
LayerParams mtp_layer_params(const ModelSpec& m);
int64_t embedding_params(const ModelSpec& m);  // word (+ learned position) embeddings
int64_t lm_head_params(const ModelSpec& m);    // 0 when tied
int64_t final_norm_params(const ModelSpec& m);
int64_t total_params(const ModelSpec& m);  // the trained model: MTP modules excluded
// Multi-token-prediction modules (m.mtp_layers of them; 0 when none), sharing the embedding and
// output head with the main model. DeepSeek-V3: about 11.6B (its card's "14B MTP module" also
// counts the checkpoint's copies of the embedding and head, 2 × 0.93B).
int64_t mtp_params(const ModelSpec& m);
// Parameters one token touches (routed experts at top_k) — "active" parameters.
int64_t active_params(const ModelSpec& m);

// Parameters held by one GPU of pipeline stage `stage`, split into those sharded by data
// parallelism over dp·cp (dense) and over dp·cp/ep (experts).
struct StageParams {
  int64_t stage = 0;
  int64_t layers = 0;          // transformer layers on this stage (all its chunks; MTP layers too)
  int64_t full_params = 0;     // before TP/EP splitting
  int64_t dense_per_gpu = 0;   // after TP splitting
  int64_t expert_per_gpu = 0;  // after EP and TP splitting
  // Of those, the transformer layers' linear maps (attention, MLP, experts; no embedding, LM
  // head or norms): what FP8 training runs in FP8.
  int64_t linear_per_gpu = 0;
  // FP8 GEMMs one GPU runs for the stage's layers (LayerParams::gemms; routed experts ÷ ep): the
  // count of Transformer Engine GEMMs that keep FP8 scaling state (MemoryOptions::
  // fp8_amax_history_len).
  int64_t fp8_gemms = 0;
  int64_t per_gpu() const { return dense_per_gpu + expert_per_gpu; }
};

// REQUIRES: the layout passed check_layout for this model.
std::vector<StageParams> stage_params(const ModelSpec& m, const Layout& l);
// layer_params of each of the model's layers, first to last, then mtp_layer_params for each
// multi-token-prediction module: what stage_params sums, for callers
// that split one model under many layouts (the cost model) to compute once.
std::vector<LayerParams> model_layer_params(const ModelSpec& m);
// stage_params(m, l), given model_layer_params(m).
std::vector<StageParams> stage_params(const ModelSpec& m, const Layout& l,
                                      const std::vector<LayerParams>& layers);
// First layer index of every chunk (pp·vpp chunks in model order) plus the end. The
// multi-token-prediction layers (indices m.layers on) close the last chunk: its end is
// m.layers + m.mtp_layers (Megatron-Core builds them on the last pipeline stage's last virtual
// stage without a pipeline layout: multi_token_prediction.py get_mtp_num_layers_to_build).
std::vector<int64_t> chunk_boundaries(const ModelSpec& m, const Layout& l);

}  // namespace meshplan
