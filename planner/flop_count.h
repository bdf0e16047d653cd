// Model FLOPs, counted per GEMM from the spec (Narayanan et al. 2021, eq. 3, as the GPT-style
// special case): QKV with GQA (or MLA's projections), attention scores and values, output
// projection, MLP/SwiGLU, MoE router and top-k experts (plus shared experts), LM head. A
// multiply-add is 2 FLOPs; backward is twice forward; recompute repeats forward work.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/layout.h"
#include "core/model_spec.h"
#include "core/recompute_modules.h"

namespace meshplan {

struct FlopOptions {
  // Attention scores and values counted for every (query, key) pair, the PaLM convention and
  // Megatron-LM's before 8873b55d (2025-03-06); true halves them (causal mask), as Megatron-LM
  // has counted since (planner/model_flops_megatron.h).
  bool causal_attention = false;
  // Selective recompute is torchtitan's op SAC (MemoryOptions::selective_op_sac, which the cost
  // model copies here): core_attn's entry is then the GEMMs it repeats (op_sac.h).
  bool op_sac = false;
};

// Forward FLOPs of one layer for `tokens` tokens in sequences of `seq_len`; a layer index from
// m.layers on is a multi-token-prediction layer, whose FLOPs are the last layer's.
struct LayerFlops {
  double dense_gemms = 0;     // projections and MLP (experts at top_k)
  double attention_core = 0;  // Q·Kᵀ and softmax·V, and a sparse-attention indexer's scores
  // Of those, what selective recompute of each module repeats (Layout::recompute_modules):
  // core_attn the attention core, mla_up_proj MLA's q_b and kv_b, mlp a dense MLP, moe the
  // router and routed experts, shared_experts theirs; layernorm and moe_act are memory-bound (0).
  // Under FlopOptions::op_sac core_attn's is the mm's op SAC recomputes and the routed experts.
  std::array<double, kRecomputeModules> module{};
  double total() const { return dense_gemms + attention_core; }
  double selective(RecomputeModules modules) const { return sum_over(modules, module); }
};
LayerFlops layer_forward_flops(const ModelSpec& m, int64_t layer, double tokens, double seq_len,
                               const FlopOptions& o = {});
// The mean of layer_forward_flops over the model's MoE layers (`moe_layers`) or dense ones: they
// differ only in attention, where some attend locally (ModelSpec::window). The cost model prices
// every layer of a kind at this mean, so a stage's attention FLOPs follow the model's mix of local
// and global layers rather than its own (exact for a model without a window).
LayerFlops kind_forward_flops(const ModelSpec& m, bool moe_layers, double tokens, double seq_len,
                              const FlopOptions& o = {});
// The LM head's logits, once for the model and once for each multi-token-prediction module, and
// each module's projection (mtp_projection_linear), which the cost model prices with the head.
double lm_head_forward_flops(const ModelSpec& m, double tokens);

struct StepFlops {
  double model = 0;     // 3 × forward, no recompute (MFU)
  double hardware = 0;  // model + recomputed forward work (HFU)
};

// Layers each pipeline stage recomputes in full, stage 0 first: all of them under
// recompute=full (more than any stage holds), else Layout::recompute_layers_on. The callers walk
// a stage's chunks in order and spend its count on their first layers (Megatron's block method).
std::vector<int64_t> full_recompute_budget(const ModelSpec& m, const Layout& l);

// FLOPs of one optimizer step of `global_batch` sequences under the layout's recompute policy
// (the layout only matters through recompute, recompute_layers, pp and vpp).
StepFlops step_flops(const ModelSpec& m, const Layout& l, const TrainingSpec& t,
                     const FlopOptions& o = {});

}  // namespace meshplan
