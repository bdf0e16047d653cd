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
// the TP degree and whether sequence parallelism splits the replicated (norm/residual) part.
struct MemoryBoundShape {
  int64_t tp = 1;
  bool sp = false;
  bool moe_layer = false;
  double tokens = 0;
};

// HBM bytes of the MLP's activation function per FFN element in the forward: SwiGLU reads gate
// and up and writes the product (6), GELU/ReLU read one and write one (4).
double activation_bytes_per_element(const ModelSpec& model);

// Norms, residual adds and dropout; RoPE on queries and keys; the MLP's activation function
// (of the experts and shared experts in a MoE layer); MoE permute and un-permute. Backward
// moves twice the forward bytes of each.
std::vector<MemoryBoundOp> layer_memory_bound_ops(const ModelSpec& model,
                                                  const CostOptions& options,
                                                  const MemoryBoundShape& shape);
// Vocabulary-parallel cross entropy over `tokens` rows of vocab/tp logits.
std::vector<MemoryBoundOp> loss_memory_bound_ops(const ModelSpec& model, int64_t tp, double tokens);

// Sums in list order (the order the cost model has always added them in).
double forward_bytes(const std::vector<MemoryBoundOp>& ops);
double backward_bytes(const std::vector<MemoryBoundOp>& ops);

}  // namespace meshplan
