// Megatron-LM's own model-FLOP count, as its training loop logs "throughput per GPU
// (TFLOP/s/GPU)" and as the Megatron-LM README's performance table reports it:
// num_floating_point_operations(args, batch_size) in megatron/training/training.py (r0.8):
//
//   12·B·s·L·h²·( (1 + g/a + s/h)·(d·a/h)        attention: QKV, scores+values (full, not
//                                                 causal), output projection; g KV groups,
//                                                 d = kv_channels (head dim)
//               + (F/h)·k·(3/2 if SwiGLU else 1)  MLP (k routed experts for MoE)
//               + F_shared/h·(3/2 if SwiGLU)      shared experts
//               + V_pad/(2·L·h) )                 logits
//
// per step of B sequences (forward and backward, 3× the forward GEMMs; no recompute). V_pad is
// the vocabulary padded to a multiple of 128·tp (make_vocab_size_divisible_by, default 128,
// times the TP degree: _vocab_size_with_padding in megatron/training/tokenizer/tokenizer.py).
// For a GPT-3-style model (MHA, F = 4h, GELU) it equals eq. 3 of Narayanan et al. 2021 without
// the recompute pass: 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)).
//
// Megatron-LM changed the count on 2025-03-06 (8873b55d, "Fixes in number of floating-point
// operation estimates for MoE and attention layer"): "Only half of the attention matrix is
// non-zero and needs to be multiplied with V", so the scores-and-values term is s/(2h), and an
// MoE model's dense layers (MoeSpec::first_dense_layers, layer_step) count their
// own MLP width F instead of the experts' k·F_expert:
//
//   12·B·s·L·h²·( (1 + g/a + s/(2h))·(d·a/h)
//               + (F·L_dense + (F_expert·k + F_shared)·L_moe)·(3/2 if SwiGLU)/(L·h)
//               + V_pad/(2·L·h) )
//
// Runs logged by a Megatron-LM of that commit or later (the MoE model zoo's, Megatron-Bridge's)
// report TFLOP/s by this count. With --mtp-num-layers M (ModelSpec::mtp_layers) it counts the
// M layers as L more of the last layer's kind, the logits (1 + M) times, and adds
// 6·B·s·M·(3h + 2h²) for each module's norms and projection (d98e8a64).
#pragma once

#include <cstdint>

#include "core/model_spec.h"

namespace meshplan {

// Which of Megatron-LM's two counts: r0.8's (full attention) or 8873b55d's (causal attention,
// dense layers of MoE models at their own width).
enum class MegatronFlops : uint8_t { r0_8, causal };

// REQUIRES: m is complete (head_dim, kv_heads, ffn_hidden set), tp >= 1.
double megatron_flops_per_step(const ModelSpec& m, int64_t global_batch, int64_t tp,
                               MegatronFlops count = MegatronFlops::r0_8);

// The vocabulary Megatron-LM allocates: `vocab` rounded up to a multiple of 128·tp.
int64_t megatron_padded_vocab(int64_t vocab, int64_t tp);

}  // namespace meshplan
