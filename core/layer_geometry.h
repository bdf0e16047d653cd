// The linear maps of one transformer layer (and the embedding and LM head), derived from the
// model spec alone: the one place that knows which matrices a model has, their widths, how
// tensor parallelism splits each (Megatron-LM, arXiv 1909.08053 §3: column-parallel maps split
// their output width, row-parallel ones their input width) and which block they belong to.
// Parameter counts, FLOPs, the GEMM shapes the cost model times and calibrate's shape list are
// all derived from these tables.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_spec.h"

namespace meshplan {

enum class TpSplit {
  column,     // output width split by tp (its bias too)
  row,        // input width split by tp; the bias is added once, so every TP rank holds it
  replicated  // identical on every TP rank (MLA down-projections, the MoE router)
};

enum class LinearRole {
  dense,   // attention projections and the dense MLP: every token passes once
  expert,  // one routed expert: tokens at top_k of `copies`
  shared,  // one shared expert: every token passes through each copy
  router   // MoE gate: every token, hidden → experts
};

struct LinearMap {
  const char* name = "";    // "qkv", "attn_out", "q_a", …, "mlp_up", "mlp_down", "router"
  int64_t in = 0, out = 0;  // full widths, before TP
  TpSplit split = TpSplit::column;
  LinearRole role = LinearRole::dense;
  int64_t copies = 1;     // maps of this shape in the layer (experts of one kind)
  bool bias = false;      // carries a bias of `out` elements
  int64_t kv_out = 0;     // columns of `out` holding K/V heads, which TP splits at most
  int64_t kv_groups = 0;  // kv_groups ways (K/V heads are replicated beyond); 0 if none

  int64_t weights() const { return in * out; }  // one copy, bias excluded
  int64_t biases() const { return bias ? out : 0; }
  // Input and output widths on one TP rank. Not rounded: a width tp does not divide gives the
  // fraction the cost model times. REQUIRES: tp ≥ 1.
  double rank_in(int64_t tp) const;
  double rank_out(int64_t tp) const;
  // Whether its GEMMs stay in BF16 when the linear layers run FP8 (training) or hold quantized
  // weights (serving): the MoE router's. Megatron-Core's TopKRouter multiplies by its gate in
  // torch at the input's dtype or --moe-router-dtype, outside fp8_autocast
  // (megatron/core/transformer/moe/router.py); the serving engines leave the gate unquantized.
  bool stays_bf16() const { return role == LinearRole::router; }
};

// Rows of each routed expert's GEMMs on one rank: the rank's `tokens` each go to top_k experts
// (times the capacity factor), spread over its experts / ep local experts. With EP a rank
// receives as many rows as it sends, in expectation under uniform routing.
// REQUIRES: ep divides moe.experts.
double expert_rows(const MoeSpec& moe, double tokens, int64_t ep);

// Tokens one rank of a TP group routes to the experts: its sequence-parallel share of the
// group's `tokens` under SP (Megatron-Core's token dispatchers take the SP-split hidden
// states), else all of them.
double rank_tokens(double tokens, int64_t tp, bool sp);
// Tokens whose routed copies a rank's experts compute: under SP its expert-TP group's (the etp
// ranks' shares, gathered over the group after the dispatch), else its own. expert_rows of
// these are the rows of each of its experts.
double expert_group_tokens(double tokens, int64_t tp, int64_t etp, bool sp);

// Expected parts a token's top_k experts land on when the experts are spread evenly over
// `parts` (the EP group's ranks, or its nodes) and a balanced router chooses them uniformly:
// u·(1 − (1 − 1/u)^k) over the u parts a token may use. That is every part, or with
// group-limited routing at most group_limit groups' parts (DeepSeek-V3: 8 groups, one per node,
// limit 4: 3.6 nodes per token instead of 5.3 for top-8 over 8 nodes). DeepEP sends a token
// once to each node (network) and each rank (NVLink) it lands on, not once per expert.
// REQUIRES: parts ≥ 1.
double parts_per_token(const MoeSpec& moe, int64_t parts);

// The forward GEMM a TP rank runs for `map`: rows × out (the rank's output width) × in, `count`
// of them as one grouped kernel. Routed experts: `expert_rows` rows each over `local_experts`
// copies; shared experts: one MLP of their summed width (Megatron-Core's
// shared_expert_intermediate_size); every other map: `tokens` rows, once. Its backward runs
// rows × in × out (input gradient) and in × out × rows (weight gradient).
struct RankGemm {
  double rows = 0, out = 0, in = 0, count = 1;
};
RankGemm rank_gemm(const LinearMap& map, int64_t tp, double tokens, double expert_rows = 0,
                   double local_experts = 0);

// Q, K, V and output projections (fused QKV for MHA/GQA; MLA's down- and up-projections), in
// the order a layer runs them.
std::vector<LinearMap> attention_linears(const ModelSpec& model);
// One MLP of width `ffn`: up (gate and up fused for SwiGLU), then down.
std::vector<LinearMap> mlp_linears(const ModelSpec& model, int64_t ffn,
                                   LinearRole role = LinearRole::dense, int64_t copies = 1);
// The feed-forward block of layer `layer`: the dense MLP, or the router, routed experts and
// shared experts of a MoE layer. REQUIRES: 0 ≤ layer < model.layers.
std::vector<LinearMap> ffn_linears(const ModelSpec& model, int64_t layer);
// attention_linears, then ffn_linears.
std::vector<LinearMap> layer_linears(const ModelSpec& model, int64_t layer);
// Word (and learned position) embeddings, vocabulary → hidden: a vocabulary-parallel table,
// its input (vocabulary) width split by tp.
LinearMap embedding_linear(const ModelSpec& model);
// hidden → vocab logits, column-parallel (held even when tied: it is the embedding's transpose).
LinearMap lm_head_linear(const ModelSpec& model);
// A multi-token-prediction module's projection of [hidden; embedding] back to hidden,
// column-parallel without bias (Megatron-Core MultiTokenPredictionLayer.eh_proj; DeepSeek-V3
// §2.2 M_k).
LinearMap mtp_projection_linear(const ModelSpec& model);

}  // namespace meshplan
