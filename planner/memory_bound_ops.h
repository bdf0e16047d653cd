// The memory-bound operations of one transformer layer and of the loss, with the HBM bytes each
// moves for one micro-batch on one GPU: the list the cost model prices at HBM bandwidth
// (GEMMs and core attention are timed separately, from the linear maps of core/layer_geometry).
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_spec.h"
#include "planner/planner_options.h"

namespace meshplan {

struct MemoryBoundOp {
  const char* name = "";
  double forward_bytes = 0;   // read and written in HBM by the forward pass
  double backward_bytes = 0;  // by the backward pass
};

// Where a layer's memory-bound work runs: `tokens` rows of the micro-batch on this CP rank,
// the TP degree and whether sequence parallelism splits the replicated (norm/residual) part;
// for a MoE layer also the expert-TP and EP degrees and the dispatcher, which set the rows a
// rank permutes.
struct MemoryBoundShape {
  int64_t tp = 1;
  bool sp = false;
  bool moe_layer = false;
  double tokens = 0;
  int64_t etp = 1;  // Layout::expert_tp()
  int64_t ep = 1;
  Dispatch dispatch = Dispatch::alltoall;
};

// Token rows one rank's MoE dispatcher moves through HBM in one layer's forward, permuting
// tokens to its experts and back (its backward permutes the gradients, the same rows), as
// Megatron-Core's token_dispatcher.py runs them (permute, sort_chunks_by_idxs and unpermute of
// moe_utils.py, fused or not, one read and one write of each row). With L the rank's tokens
// (the TP group's under its SP share), R = L·top_k·capacity·(etp under SP) the rows its experts
// compute (the GEMMs' rows, core/layer_geometry.h expert_rows):
//   alltoall: permute to the all-to-all's order, L read and L·top_k written, and unpermute
//     back; with more than one local expert the received rows sorted by expert and back, 4R;
//   deepep: the fused dispatch sends a token once per rank (parts_per_token over the EP
//     ranks: N = R·ranks per token / top_k rows arrive), permuted to R and back: 2(N + R);
//   allgather: R rows picked from the gathered tokens and written, then the outputs added into
//     a zeroed buffer of every gathered token (G = L·ep·etp): 4R + G.
double moe_permuted_rows(const ModelSpec& model, const MemoryBoundShape& shape);

// HBM bytes of the MLP's activation function per FFN element in the forward: SwiGLU reads gate
// and up and writes the product (6), GELU/ReLU read one and write one (4).
double activation_bytes_per_element(const ModelSpec& model);

// Norms, residual adds and dropout; RoPE on queries and keys; the MLP's activation function
// (of the experts and shared experts in a MoE layer); then, in a MoE layer, moe_permute_op.
// Backward moves twice the forward bytes of each but the permutation.
std::vector<MemoryBoundOp> layer_memory_bound_ops(const ModelSpec& model,
                                                  const CostOptions& options,
                                                  const MemoryBoundShape& shape);
// The same but the permutation: what the expert degrees and the dispatcher leave unchanged
// (shape's etp, ep and dispatch unread).
std::vector<MemoryBoundOp> shared_memory_bound_ops(const ModelSpec& model,
                                                   const CostOptions& options,
                                                   const MemoryBoundShape& shape);
// MoE permute and un-permute: moe_permuted_rows BF16 rows in the forward, the same in the
// backward (a permutation's gradient is the inverse permutation of the gradients).
MemoryBoundOp moe_permute_op(const ModelSpec& model, const MemoryBoundShape& shape);
// Vocabulary-parallel cross entropy over `tokens` rows of vocab/tp logits.
std::vector<MemoryBoundOp> loss_memory_bound_ops(const ModelSpec& model, int64_t tp, double tokens);

// Sums in list order (the order the cost model has always added them in).
double forward_bytes(const std::vector<MemoryBoundOp>& ops);
double backward_bytes(const std::vector<MemoryBoundOp>& ops);

}  // namespace meshplan
