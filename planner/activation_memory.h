// Activation memory of one transformer layer for one micro-batch, tensor by tensor, following
// Korthikanti et al. 2022 (arXiv 2205.05198) §4: with 16-bit activations, dropout and standard
// attention a GPT layer stores s·b·h·(34 + 5·a·s/h) bytes; TP splits 24 of the 34 and the
// attention scores; sequence parallelism splits the other 10; selective recompute drops the
// 5·a·s/h term; full recompute keeps only the 2·s·b·h layer input. Deriving it per tensor lets
// the same code follow SwiGLU, GQA, MLA, MoE, no-dropout and flash attention.
#pragma once

#include <array>
#include <cstdint>

#include "core/layout.h"
#include "core/model_spec.h"

namespace meshplan {

struct ActivationShape {
  int64_t micro_batch = 1;  // b, sequences
  int64_t seq_len = 0;      // s, before CP splitting
  int64_t tp = 1, cp = 1, ep = 1;
  bool sp = false;
  // FP8 training (GpuSpec::runs_fp8). With fp8_quantized_inputs (MemoryOptions::
  // fp8_saves_quantized_inputs: Transformer Engine) the linear layers keep their inputs for the
  // backward pass as FP8 casts (1 byte), not BF16; what other ops save stays BF16: the norms'
  // inputs, attention's Q, K, V and output, the activation function's input (attention and
  // element-wise ops run in BF16). Without it (torchao) every saved input stays BF16.
  bool fp8 = false;
  bool fp8_quantized_inputs = true;
  int64_t etp = 0;  // the experts' tensor-parallel degree (Layout::expert_tp); 0: tp
  // Selective recompute is torchtitan's op SAC (MemoryOptions::selective_op_sac).
  bool op_sac = false;
};

ActivationShape activation_shape(const Layout& l, int64_t seq_len);

// Whether recomputing the attention core (selective recompute) drops any stored activation:
// standard attention's scores, or under FP8 with quantized inputs flash attention's BF16 output
// (LayerActivations::attention_scores). With flash attention in BF16 the core stores only its
// softmax statistics, which recomputing it does not drop: selective then saves nothing.
bool attention_core_stores_activations(const ModelSpec& m, bool fp8, bool fp8_quantized_inputs);

// Bytes one GPU keeps from the forward to the backward pass of one layer, for one micro-batch.
struct LayerActivations {
  // What recomputing the attention core drops (selective recompute): the softmax output, its
  // dropout mask and output (standard attention); under FP8 with flash attention, the kernel's
  // BF16 output, which the out-projection no longer shares (it keeps an FP8 cast).
  double attention_scores = 0;
  double attention_other = 0;  // norm/QKV inputs, Q, K, V, softmax statistics, out-proj input
  double mlp = 0;              // norm/MLP inputs, FFN intermediates, dropout mask; MoE experts
  double layer_input = 0;      // the 2·s·b·h input (÷t with SP): what full recompute keeps
  // What selective recompute of each module drops (Layout::recompute_modules), a part of the
  // fields above: core_attn the attention_scores; layernorm the two norms' outputs (the QKV and
  // MLP GEMMs' saved inputs); mla_up_proj MLA's per-head Q, K, V; mlp a dense MLP's
  // intermediates; moe_act the routed experts' activation outputs (the down-projections' saved
  // inputs); moe everything routed (router probabilities, dispatched inputs, expert outputs and
  // intermediates; it includes moe_act's); shared_experts their intermediates. Under op SAC
  // (ActivationShape::op_sac) core_attn's is what that policy drops instead: all but the block's
  // input, its saved mm outputs, SDPA's output and log-sum-exp and TP's reduce-scattered outputs
  // (op_sac_stored_bytes).
  std::array<double, kRecomputeModules> module_bytes{};
  // Bytes recomputing `modules` drops (moe_act's counted once when moe is there too).
  double dropped(RecomputeModules modules) const;
  // The largest one module's: what exists again while it is recomputed in the backward.
  double largest_module(RecomputeModules modules) const;
  double no_recompute() const { return attention_scores + attention_other + mlp; }
  double selective(RecomputeModules modules = kDefaultRecomputeModules) const {
    return no_recompute() - dropped(modules);
  }
  double stored(Recompute r, RecomputeModules modules = kDefaultRecomputeModules) const {
    return r == Recompute::full        ? layer_input
           : r == Recompute::selective ? selective(modules)
                                       : no_recompute();
  }
};

LayerActivations layer_activations(const ModelSpec& m, int64_t layer, const ActivationShape& a);

// Bytes a sparse-attention model's indexer (ModelSpec::sparse_attention, DeepSeek-V3.2) keeps of
// one layer for one micro-batch, as Megatron-Core's DSA keeps them (megatron/core/transformer/
// experimental_attention_variant/dsa.py at d98e8a64, DSAIndexer.forward_before_topk and
// FusedDSAIndexerLoss, whose forward saves q, weights, k, query, key and topk_indices): the
// indexer's BF16 queries (heads × dim) and head weights for the rank's query rows (sliced to its
// own rows under sequence parallelism), the int64 top-k indices of those rows (torch.topk,
// min(top_k, sequence) a row), its BF16 keys for every key of the sequence (all-gathered under
// CP) and its key norm's input for the rank's rows; under sequence parallelism also the
// all-gathered layer input and query latent its replicated linears keep (without it they share
// the attention's). The main attention's query and key it also saves are the attention's own.
// Transient score matrices (the reference path's FP32 tokens × keys scores) are not counted.
// 0 for a model without sparse attention.
double indexer_activation_bytes(const ModelSpec& m, const ActivationShape& a);

// Bytes torchtitan's op SAC keeps of layer `layer` for one micro-batch (planner/op_sac.h): the
// block's BF16 input (the checkpoint's), the outputs of the mm's it saves (rows × the rank's
// output columns; a row-parallel map's partial sums are whole rows before their reduce-scatter),
// SDPA's BF16 output and fp32 log-sum-exp, and with TP the two reduce-scattered block outputs.
double op_sac_stored_bytes(const ModelSpec& m, int64_t layer, const ActivationShape& a);

// Last stage: logits in bf16 plus their fp32 copy for the loss (Megatron-LM's fused
// vocab-parallel cross entropy), 6·s·b·V/t bytes, for the one micro-batch in backward; once more
// for each multi-token-prediction module, whose losses are computed beside the model's on the
// same stage (Megatron-Core: "MTP loss is computed in the post-processing stage").
double logits_bytes(const ModelSpec& m, const ActivationShape& a);

}  // namespace meshplan
