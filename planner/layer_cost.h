// Time of one transformer layer for one micro-batch on one GPU, for a fixed (tp, cp, ep, mbs,
// sp) — the part of the cost model that does not depend on dp, pp, ZeRO or the schedule, so the
// search computes it once per combination.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/attention_span.h"
#include "core/layer_geometry.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "planner/activation_memory.h"
#include "planner/attention_model.h"
#include "planner/collective_memo.h"
#include "planner/collective_model.h"
#include "planner/gemm_memo.h"
#include "planner/gemm_model.h"
#include "planner/planner_options.h"

namespace meshplan {

struct LayerCostKey {
  int64_t tp = 1, cp = 1, ep = 1, mbs = 1;
  bool sp = false, tp_overlap = false;
  CpKind cp_kind = CpKind::ring;
  int64_t cp_a2a = 1;       // CP ranks exchanging by all-to-all (Layout::cp_a2a_size)
  int64_t cp_ring = 1;      // CP ranks passing K/V around a ring (Layout::cp_ring_size)
  bool ep_overlap = false;  // Layout::ep_overlap
  Dispatch dispatch = Dispatch::alltoall;  // Layout::dispatch
  int64_t etp = 0;                         // Layout::expert_tp(); 0: tp
  int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  bool operator==(const LayerCostKey&) const = default;
};

// Where a layer's communication groups sit on the network (cost_model.h's tp_group, …).
struct LayerGroups {
  GroupShape tp, cp, ep;
  GroupShape etp;  // the experts' tensor-parallel group (tp's unless etp < tp)
};

struct LayerCost {
  double forward_s = 0;            // GEMMs, attention, memory-bound ops
  double backward_s = 0;           // input- and weight-gradient GEMMs, attention and elementwise
  double backward_weight_s = 0;    // the weight-gradient GEMMs alone (ZB-H1's W)
  double attention_forward_s = 0;  // core attention forward (selective recompute repeats it)
  double tp_forward_s = 0, tp_backward_s = 0;  // exposed TP communication
  double cp_forward_s = 0, cp_backward_s = 0;  // exposed CP exchange (Layout::cp_kind)
  double ep_forward_s = 0, ep_backward_s = 0;  // EP all-to-all dispatch + combine
  // The forward compute seconds selective recompute of each module repeats (Layout::
  // recompute_modules; core_attn's is attention_forward_s). Recomputing moe also repeats its
  // dispatch (ep_forward_s), which the stage timing adds with the communication.
  std::array<double, kRecomputeModules> module_forward_s{};
  LayerActivations activations;
  // Seconds recomputing `modules` adds to the backward (moe_act's once when moe is there too).
  double selective_forward_s(RecomputeModules modules) const;
};

// Everything a layer's cost depends on besides the key.
struct LayerCostContext {
  const ModelSpec* model = nullptr;
  const GemmModel* gemm = nullptr;
  GemmMemo* gemm_memo = nullptr;  // gemm's answers remembered (nullptr: asked each time)
  // The GEMMs a framework keeps in BF16 when the linear layers run FP8, the LM head's and the MoE
  // router's: neither is a Transformer Engine module, so fp8_autocast leaves them at the
  // parameters' dtype. Megatron-Core's GPTModel builds its output layer as a
  // tensor_parallel.ColumnParallelLinear (megatron/core/models/gpt/gpt_model.py) and its
  // TopKRouter multiplies by its gate weight in torch at the input's dtype or --moe-router-dtype
  // (megatron/core/transformer/moe/router.py); NeMo trains Megatron-Core's models; torchtitan's
  // FP8 configurations leave `output` out of the conversion (filter_fqns). nullptr: `gemm`'s
  // (a job whose linear layers run BF16 already).
  const GemmModel* bf16_gemm = nullptr;
  GemmMemo* bf16_gemm_memo = nullptr;  // bf16_gemm's answers remembered
  const CollectiveModel* collectives = nullptr;
  CollectiveMemo* collective_memo = nullptr;  // collectives' answers remembered (nullptr: asked)
  const CostOptions* options = nullptr;
  const AttentionModel* attention = nullptr;
  bool fp8 = false;  // FP8 GEMMs: linear-layer inputs are stored in FP8
  // kind_layers(*model, false) and (…, true), found once (each walks the model's layers); unset:
  // found per question.
  std::optional<std::array<KindLayers, 2>> kinds;
  // layer_maps(*model, false) and (…, true), built once (each copies the model's maps); unset:
  // built per question.
  std::optional<std::array<std::vector<LinearMap>, 2>> maps;
  double hbm_bytes_per_s = 0;
  int64_t seq_len = 0;
};

// A layer's compute for one micro-batch (GEMMs, core attention, memory-bound ops) and its stored
// activations: everything but communication. It depends on the key's tp, etp, cp, cp_a2a, ep, mbs
// and sp, and in an MoE layer the dispatcher (the rows it permutes, moe_permute_op), alone (not
// where groups sit, the CP exchange or the overlaps), so a search computes it once for the many
// layouts that differ only in those.
struct LayerCompute {
  double gemm_forward_s = 0, gemm_input_grad_s = 0, gemm_weight_grad_s = 0;
  double attention_forward_s = 0, attention_backward_s = 0;
  double memory_forward_s = 0, memory_backward_s = 0;        // memory-bound ops
  std::array<double, kRecomputeModules> module_forward_s{};  // LayerCost's, before communication
  LayerActivations activations;
};
LayerCompute layer_compute(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer);

// The part of a layer's compute its expert degrees (ep, etp) leave unchanged: the GEMM times of
// every linear map but the routed experts', core attention and the memory-bound ops but the MoE
// permutation (shared_memory_bound_ops). It reads
// the key's tp, cp, cp_a2a, mbs and sp alone, so a search prices it once for an MoE layer's many
// expert layouts.
struct SharedCompute {
  // Per map of layer_maps (in its order): forward, input-gradient and weight-gradient seconds;
  // the routed experts' left zero.
  std::vector<std::array<double, 3>> map_s;
  double attention_forward_s = 0, attention_backward_s = 0;
  double memory_forward_s = 0, memory_backward_s = 0;
};
SharedCompute shared_compute(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer);
// layer_compute from its shared part (shared_compute of a key with the same tp, cp, cp_a2a, mbs
// and sp), bit for bit: the routed experts' GEMMs, the sums and the activations added.
LayerCompute layer_compute(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                           const SharedCompute& shared);

// The linear maps of one layer: attention projections, then the dense MLP or router, experts and
// shared experts.
std::vector<LinearMap> layer_maps(const ModelSpec& m, bool moe_layer);

// The layer's cost: `compute` (layer_compute of the same key) plus its exposed communication.
LayerCost layer_cost(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                     const LayerGroups& groups, const LayerCompute& compute);
// The same, computing the compute.
LayerCost layer_cost(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                     const LayerGroups& groups);
// layer_cost's compute terms (forward_s, backward_s, backward_weight_s, attention_forward_s:
// `compute` is layer_compute's, which reads cp_a2a) and exposed CP exchange over `cp_group`
// (cp_forward_s, cp_backward_s), bit for bit (layer_cost starts from them), the other fields
// left zero: the terms that tell a shape's CP variants apart (CpKind, the all-to-all/ring split).
// The TP and EP communication, left out, cost the most to price.
LayerCost layer_cost_cp_terms(const LayerCostContext& ctx, const LayerCostKey& key,
                              const GroupShape& cp_group, const LayerCompute& compute);

// One operation of a layer's (or the LM head's) compute for one micro-batch on one GPU, priced
// as layer_compute and lm_head_cost price it: a layer's cost op by op (`meshplan estimate
// --ops`). Communication is not an op here (LayerCost's exposed seconds).
enum class OpKind { gemm, attention, memory_bound };
struct OpCost {
  const char* name = "";  // the linear map's ("qkv", "mlp_up", …), "attention core", an HBM op's
  OpKind kind = OpKind::gemm;
  bool bf16 = false;  // a GEMM kept in BF16 under FP8 (LayerCostContext::bf16_gemm)
  // GEMMs: `count` products C[rows×cols] = A[rows×inner]·W[inner×cols] on this rank as one
  // grouped kernel (routed experts: the mean rows per expert, count the rank's experts).
  double rows = 0, cols = 0, inner = 0, count = 0;
  // GEMMs and attention: the forward's FLOPs (attention's as priced: causal halves them; its
  // backward does 2.5× as many, a GEMM's input and weight gradients 2×).
  double forward_flops = 0;
  double forward_bytes = 0, backward_bytes = 0;  // memory-bound ops: HBM bytes moved
  // Seconds; backward_s includes weight_grad_s (GEMMs' weight gradient, ZB-H1's W).
  double forward_s = 0, backward_s = 0, weight_grad_s = 0;
};
// A layer's ops in the order it runs them: its linear maps' GEMMs (layer_maps), core attention,
// then its memory-bound ops. Their GEMM and attention seconds are layer_compute's terms; the
// sum of their seconds is layer_compute's forward and backward to rounding (the memory-bound
// ops are priced there as one sum of bytes).
std::vector<OpCost> layer_ops(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer);
// The LM head's GEMM and the loss's memory-bound ops (lm_head_cost's terms).
std::vector<OpCost> head_ops(const LayerCostContext& ctx, const LayerCostKey& key);

// The LM head (last stage) and loss for one micro-batch: forward and backward seconds; with
// multi-token prediction, again for each module with its projection.
struct HeadCost {
  double forward_s = 0, backward_s = 0;
};
HeadCost lm_head_cost(const LayerCostContext& ctx, const LayerCostKey& key);

}  // namespace meshplan
