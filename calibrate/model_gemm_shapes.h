// The GEMMs of one transformer layer (and the logits) at a tensor-parallel degree, in the
// three training variants: forward Y = X·W, input gradient dX = dY·Wᵀ, weight gradient
// dW = Xᵀ·dY. Column-parallel layers (QKV, MLP up/gate, logits) split their output width by
// tp, row-parallel ones (attention out, MLP down) their input width (Megatron-LM, arXiv
// 1909.08053 §3).
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/benchmarker.h"
#include "core/layer_geometry.h"
#include "core/model_spec.h"

namespace meshplan::calibrate {

// `tokens` rows per GEMM (sequence length × micro-batch).
// REQUIRES: tp ≥ 1, tokens ≥ 1, every ep ≥ 1.
// Duplicated shapes are listed once (first label kept). The maps and rows are those the cost
// model prices (core/layer_geometry.h, rank_gemm): attention, the dense MLP when the model has
// dense layers, a MoE layer's router and shared experts at `tokens` rows, and its routed
// experts at the rows each expert gets (expert_rows) for every EP degree of `eps` that divides
// the expert count; then the logits. The router's and the logits' are bf16_only.
std::vector<GemmShape> model_gemm_shapes(const ModelSpec& model, int64_t tp, int64_t tokens,
                                         const std::vector<int64_t>& eps = {1});

// Appends the shapes of `more` whose m×n×k is not in `out` yet (first label kept); a shape
// listed again without bf16_only clears the listed one's.
void append_unique_shapes(std::vector<GemmShape>& out, const std::vector<GemmShape>& more);

// Every model's shapes at every tp and token count (models, then tp, then tokens), each m×n×k
// once: the calibration sweep over the shapes a plan can price.
std::vector<GemmShape> model_gemm_sweep(const std::vector<ModelSpec>& models,
                                        const std::vector<int64_t>& tps,
                                        const std::vector<int64_t>& tokens,
                                        const std::vector<int64_t>& eps = {1});

}  // namespace meshplan::calibrate
