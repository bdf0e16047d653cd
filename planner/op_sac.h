// torchtitan's per-op selective activation checkpointing ("op SAC": activation_checkpoint.mode
// = "selective", selective_ac_option = "op"), the policy its `selective` runs instead of
// Megatron-Core's recompute modules. Each transformer block is wrapped in a checkpoint whose
// policy saves the outputs of aten.mm, of SDPA (flash and memory-efficient: the output and its
// log-sum-exp), of TP's reduce-scatter and of max, except every second aten.mm counted per block
// in call order; every other op is recomputed in the backward (_save_list and _custom_policy in
// torchtitan/models/llama3/parallelize_llama.py, torchtitan commit e7c0cae, 2025-06-13; the
// same policy in torchtitan/distributed/activation_checkpoint.py later). Its Llama block calls
// wq, wk, wv, wo, w1, w3, w2 in that order (model.py: three projections, not a fused QKV; the
// MLP w2(silu(w1(x)) * w3(x))), so it saves wq's, wv's, w1's and w2's outputs and recomputes
// wk, wo and w3. Routed experts run torch._grouped_mm, not aten.mm: op SAC recomputes them. The
// MoE router's gate follows v0.2.2, the version meshplan exports for (launchers/
// launcher_torchtitan.cc): its activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns
// defaults to ["moe.router.gate"], whose mm's are recomputed and not counted
// (torchtitan/distributed/activation_checkpoint.py at 73a0e6979dd1); e7c0cae counted it. Dense
// blocks are the same in both.
#pragma once

#include <cstddef>
#include <vector>

#include "core/layer_geometry.h"
#include "core/model_spec.h"

namespace meshplan {

// One aten.mm of a block: part of linear map `map` (an index into the block's maps, as
// layer_linears lists them) producing `share` of its output columns, and whether op SAC saves
// its output.
struct OpSacMm {
  size_t map = 0;
  double share = 1;
  bool saved = false;
};

// The block's aten.mm calls in torchtitan's order over `maps` (layer_linears of one layer of
// `model`): a fused QKV map is three (Q, K, V), a SwiGLU up map two (gate, up), a routed expert
// map none, the router one recomputed and not counted, every other map one.
std::vector<OpSacMm> op_sac_mms(const ModelSpec& model, const std::vector<LinearMap>& maps);

// The share of map i's forward work op SAC repeats in the backward: its recomputed mm's shares
// summed; 1 for routed experts (grouped GEMMs, never saved) and the router.
std::vector<double> op_sac_recomputed_shares(const ModelSpec& model,
                                             const std::vector<LinearMap>& maps);

}  // namespace meshplan
