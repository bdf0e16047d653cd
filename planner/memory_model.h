// Per-GPU memory of every pipeline stage under a layout (DESIGN.md §3): model states under
// ZeRO 0-3, activations for the micro-batches in flight, logits, and named allowances.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cluster_spec.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "planner/activation_memory.h"
#include "planner/memory_options.h"
#include "planner/param_count.h"

namespace meshplan {

// Model-state bytes per GPU for ψ parameters sharded over `shards` data-parallel ranks.
struct ModelStateBytes {
  double params = 0, grads = 0, optimizer = 0;
  double total() const { return params + grads + optimizer; }
};
ModelStateBytes model_state_bytes(double params, int zero, int64_t shards, const MemoryOptions& o);

struct StageMemory {
  int64_t stage = 0;
  int64_t layers = 0;
  int64_t params = 0;  // per GPU, after TP/EP splitting (before ZeRO sharding)
  double params_bytes = 0, grads_bytes = 0, optimizer_bytes = 0;
  double activations_bytes = 0;            // all in-flight micro-batches, incl. recompute buffer
  double activations_per_layer_bytes = 0;  // one layer, one micro-batch, as stored
  double in_flight_micro_batches = 0;      // whole-stage micro-batch equivalents held at once
  double logits_bytes = 0;                 // last stage only
  double zero3_buffer_bytes = 0;           // gathered parameters of two layers (ZeRO-3 prefetch)
  double fp8_weight_cache_bytes = 0;       // FP8 weights and transposes kept across micro-batches
  // FP8 scaling state (MemoryOptions::fp8_amax_history_len) of the stage's FP8 GEMMs. "Other",
  // not model states: every rank keeps its own whole copy (ZeRO and FSDP shard parameters,
  // gradients and optimizer states, not module buffers), and it is neither trained nor reduced.
  double fp8_scaling_bytes = 0;
  double cuda_context_bytes = 0, nccl_bytes = 0, allocator_slack_bytes = 0;
  // Off the GPU (Layout::offload, act_offload), per GPU: optimizer states and offloaded
  // activations in host memory, optimizer states on NVMe. Not part of total_bytes().
  double host_bytes = 0, nvme_bytes = 0;
  double other_bytes() const {
    return logits_bytes + zero3_buffer_bytes + fp8_weight_cache_bytes + fp8_scaling_bytes +
           cuda_context_bytes + nccl_bytes + allocator_slack_bytes;
  }
  double total_bytes() const {
    return params_bytes + grads_bytes + optimizer_bytes + activations_bytes + other_bytes();
  }
};

struct MemoryEstimate {
  int64_t params_total = 0;
  std::vector<StageMemory> stages;
  double peak_bytes = 0;
  int64_t peak_stage = 0;
  double capacity_bytes = 0;
  // FP8 training (GpuSpec::runs_fp8): the peak stage's activations had its linear layers kept
  // BF16 inputs, for the reports' comparison (equal to its activations_bytes where the FP8
  // stack saves BF16 inputs); 0 without FP8.
  bool fp8 = false;
  double peak_bf16_activations_bytes = 0;
  bool fits() const { return peak_bytes <= capacity_bytes; }
};

// Whole-stage micro-batches whose activations pipeline stage `stage` holds at once:
// GPipe m; 1F1B and ZB-H1 min(m, p − stage); interleaved (Megatron-LM warm-up) chunk
// micro-batches min(m·v, 2(p − stage − 1) + (v − 1)p + 1) divided by v.
double in_flight_micro_batches(const Layout& l, int64_t micro_batches, int64_t stage);

// Dense and MoE layers on one stage (dense layers come first: they are the model's first).
struct StageLayerMix {
  int64_t dense_layers = 0, moe_layers = 0;
  int64_t layers() const { return dense_layers + moe_layers; }
};
std::vector<StageLayerMix> stage_layer_mix(const ModelSpec& m, const Layout& l);

// Layers of pipeline stage `stage` recomputed in full: every layer under recompute=full, else
// the first Layout::recompute_layers_on(stage) — dense ones first (they come first in the model).
struct FullRecompute {
  int64_t dense = 0, moe = 0;
};
FullRecompute full_recompute(const Layout& l, const StageLayerMix& mix, int64_t stage);

// A stage's memory in two parts, for callers that vary recompute under fixed other fields (the
// search): the frame holds everything but the activations (model states under the ZeRO stage,
// micro-batches in flight under the schedule, logits, buffers, allowances); with_activations
// adds the activations of the layout's recompute and offload, and the allocator slack.
// stage_memory is the two in sequence.
StageMemory stage_memory_frame(const StageParams& params, const Layout& l, int64_t micro_batches,
                               double logits, bool fp8, const MemoryOptions& o);
// The terms of stage_memory_frame that change with the layout's ZeRO stage alone (the model
// states, the ZeRO-3 gather buffer, the FP8 weight cache), set for l.zero: a frame of the same
// stage and layout under another ZeRO stage becomes stage_memory_frame's for l, bit for bit.
void set_zero_terms(StageMemory& frame, const StageParams& params, const Layout& l, bool fp8,
                    const MemoryOptions& o);
// Those terms' values (set_zero_terms assigns them).
struct ZeroTerms {
  double params = 0, grads = 0, optimizer = 0;  // params_bytes, grads_bytes, optimizer_bytes
  double zero3_buffer = 0, fp8_weight_cache = 0;
};
ZeroTerms zero_terms(const StageParams& params, const Layout& l, bool fp8, const MemoryOptions& o);
// The ranks a ZeRO stage shards a stage's states over: the dense parameters' (the shard group
// under hybrid sharding, else dp·cp: Layout::shard_size) and the experts' (the shard group's share
// of an expert's replicas, else the expert-data-parallel degree; at least 1). All zero_terms reads
// of the layout besides its ZeRO stage.
struct StateShards {
  int64_t dense = 1, expert = 1;
};
StateShards state_shards(const Layout& l);
// zero_terms(params, l, fp8, o) for l.zero = `zero` and state_shards(l) = `shards`.
ZeroTerms zero_terms(const StageParams& params, int zero, StateShards shards, bool fp8,
                     const MemoryOptions& o);
// The terms of stage_memory_frame that do not change with the ZeRO stage: micro-batches in
// flight (the schedule), logits (the last chunk's stage), FP8 scaling state and the fixed
// allowances. stage_memory_frame is these and zero_terms.
struct FrameFixed {
  double in_flight_micro_batches = 0, logits = 0, fp8_scaling = 0, cuda_context = 0, nccl = 0;
};
FrameFixed frame_fixed(const StageParams& params, const Layout& l, int64_t micro_batches,
                       double logits, bool fp8, const MemoryOptions& o);
// Bytes per parameter a ZeRO parameter all-gather moves (and its buffer holds) for `params`
// parameters of which `linear` are the transformer layers' linear weights: MemoryOptions::
// weight_bytes_per_param (exactly, params ≤ 0 too), but FP8 training with FP8 parameters
// (MemoryOptions::fp8_params) gathers the linear weights as their 1-byte FP8 casts: Megatron-LM's
// --fp8-param-gather ("perform the param all-gather in fp8", megatron/training/arguments.py),
// NeMo's fp8_params (which runs it), and torchtitan's float8.enable_fsdp_float8_all_gather (FSDP2
// all-gathers Float8Linear weights in float8, torchao/float8/fsdp_utils.py).
double gathered_bytes_per_param(double params, double linear, bool fp8, const MemoryOptions& o);
StageMemory with_activations(StageMemory frame, const StageLayerMix& mix,
                             const LayerActivations& dense, const LayerActivations& moe,
                             const Layout& l, const MemoryOptions& o);

// Activations of one micro-batch over a stage's layers: the first `full` layers (dense ones
// first) are recomputed in full, the rest follow the layout's policy. Also the largest layer
// rebuilt during backward (its activations exist again while it is differentiated).
struct StageActivations {
  double per_micro_batch = 0, recompute_buffer = 0, first_layer = 0;
};
StageActivations stage_activations(const StageLayerMix& mix, const LayerActivations& dense,
                                   const LayerActivations& moe, const Layout& l, int64_t stage);

// stage_activations' inputs for one stage under one recompute mode and module set, which do not
// change with the count of layers recomputed in full: the search asks for every count of a shape
// (CostModel::activations_of), so it takes these once and combines them per count.
struct StageActivationTerms {
  Recompute recompute = Recompute::none;
  int64_t dense_layers = 0, moe_layers = 0;
  double dense_full = 0, dense_policy = 0;    // one dense layer's stored bytes: full, the mode's
  double moe_full = 0, moe_policy = 0;        // one MoE layer's
  double dense_whole = 0, moe_whole = 0;      // no_recompute(): a fully recomputed layer rebuilt
  double dense_largest = 0, moe_largest = 0;  // largest_module (selective only)
  double first_full = 0, first_policy = 0;    // the first layer's, recomputed in full or not
};
StageActivationTerms stage_activation_terms(const StageLayerMix& mix, const LayerActivations& dense,
                                            const LayerActivations& moe, Recompute recompute,
                                            RecomputeModules modules);
// A stage's activations from its terms when it recomputes `layers` layers in full (the block
// method; the form stage_activations above takes for a stage of a layout). REQUIRES: not full
// recompute in groups (full, layers > 1).
inline StageActivations stage_activations(const StageActivationTerms& t, int64_t layers) {
  const int64_t all = t.dense_layers + t.moe_layers;
  const int64_t full = t.recompute == Recompute::full ? all : std::min(layers, all);
  const int64_t full_dense = std::min(full, t.dense_layers), full_moe = full - full_dense;
  StageActivations s;
  s.per_micro_batch = static_cast<double>(full_dense) * t.dense_full +
                      static_cast<double>(t.dense_layers - full_dense) * t.dense_policy +
                      static_cast<double>(full_moe) * t.moe_full +
                      static_cast<double>(t.moe_layers - full_moe) * t.moe_policy;
  if (full_dense > 0) s.recompute_buffer = t.dense_whole;
  if (full_moe > 0) s.recompute_buffer = std::max(s.recompute_buffer, t.moe_whole);
  // While a recomputed layer is differentiated its activations exist again: all of them for a
  // fully recomputed layer, the largest recomputed module's for a selectively recomputed one.
  if (t.recompute == Recompute::selective) {
    if (t.dense_layers > full_dense)
      s.recompute_buffer = std::max(s.recompute_buffer, t.dense_largest);
    if (t.moe_layers > full_moe) s.recompute_buffer = std::max(s.recompute_buffer, t.moe_largest);
  }
  s.first_layer = full > 0 ? t.first_full : t.first_policy;
  return s;
}

// Full recompute in groups of N layers (the uniform method, Layout::recompute_layers with
// recompute=full) needs three terms of a stage that do not depend on N: its layers, its first
// layer's input (each group keeps one) and its widest layer's full activations (rebuilt per layer
// of a group); callers trying many sizes (CostModel::best_uniform_group) take them once.
struct UniformGroupTerms {
  int64_t layers = 0;
  double layer_input = 0, widest = 0;
};
UniformGroupTerms uniform_group_terms(const StageLayerMix& mix, const LayerActivations& dense,
                                      const LayerActivations& moe);
// The stage's activations in groups of `group` layers: ⌈L/N⌉ layer inputs per micro-batch, N
// layers' full activations rebuilt at once in the backward.
inline StageActivations uniform_group_activations(const UniformGroupTerms& t, int64_t group) {
  const int64_t groups = (t.layers + group - 1) / group;
  StageActivations s;
  s.per_micro_batch = static_cast<double>(groups) * t.layer_input;
  s.recompute_buffer = static_cast<double>(std::min(group, t.layers)) * t.widest;
  s.first_layer = t.layers > 0 ? t.layer_input : 0;
  return s;
}
// Their bytes with `in_flight` micro-batches held.
inline double uniform_group_activation_bytes(const UniformGroupTerms& t, int64_t group,
                                             double in_flight) {
  const StageActivations a = uniform_group_activations(t, group);
  return in_flight * a.per_micro_batch + a.recompute_buffer;
}

// with_activations given the stage's activations (which do not change with the ZeRO stage).
StageMemory with_activations(StageMemory frame, const StageActivations& a, const Layout& l,
                             const MemoryOptions& o);
// The sums of with_activations(frame, a, l, o) that decide fitting and its dominant term, without
// building the stage, bit for bit (the same sums in StageMemory's order: total = states +
// activations + other), for a layout that offloads nothing (Layout::offload none, act_offload 0):
// the search's inner loop. A test pins them equal to the built stage's.
struct StageTotals {
  double states = 0;       // params_bytes + grads_bytes + optimizer_bytes
  double activations = 0;  // activations_bytes
  double other = 0;        // other_bytes()
  double total = 0;        // total_bytes()
};
inline StageTotals stage_totals(const StageMemory& f, const StageActivations& a,
                                const MemoryOptions& o) {
  StageTotals t;
  t.activations = a.per_micro_batch * f.in_flight_micro_batches + a.recompute_buffer;
  const double tensors = f.params_bytes + f.grads_bytes + f.optimizer_bytes + t.activations +
                         f.logits_bytes + f.zero3_buffer_bytes + f.fp8_weight_cache_bytes +
                         f.fp8_scaling_bytes;
  t.other = f.logits_bytes + f.zero3_buffer_bytes + f.fp8_weight_cache_bytes + f.fp8_scaling_bytes +
            f.cuda_context_bytes + f.nccl_bytes + o.allocator_slack_fraction * tensors;
  t.states = f.params_bytes + f.grads_bytes + f.optimizer_bytes;
  t.total = t.states + t.activations + t.other;
  return t;
}

// The largest of a stage's three terms, as the search names why a layout does not fit: the model
// states where they tie with another, the activations where they tie with the other bytes.
enum class MemoryTerm : uint8_t { states, activations, other };
inline MemoryTerm largest_term(const StageTotals& s) {
  return s.states >= s.activations && s.states >= s.other ? MemoryTerm::states
         : s.activations >= s.other                       ? MemoryTerm::activations
                                                          : MemoryTerm::other;
}

// The terms of stage_totals that do not depend on the activations, summed once in its order:
// the search sums one frame under many recompute choices.
struct FrameSums {
  double in_flight_micro_batches = 0;
  double states = 0;  // params_bytes + grads_bytes + optimizer_bytes
  double logits = 0, zero3_buffer = 0, fp8_weight_cache = 0, fp8_scaling = 0;
  double fixed_other = 0;  // other_bytes() but the allocator slack
};
// A frame's sums from its two parts (frame_fixed, zero_terms), so that the search sums every ZeRO
// stage of every shape it builds without building the frame; a built frame's sums are its parts'
// (one order of summing for both).
inline FrameSums frame_sums(const FrameFixed& fixed, const ZeroTerms& z) {
  FrameSums s;
  s.in_flight_micro_batches = fixed.in_flight_micro_batches;
  s.states = z.params + z.grads + z.optimizer;
  s.logits = fixed.logits, s.zero3_buffer = z.zero3_buffer;
  s.fp8_weight_cache = z.fp8_weight_cache, s.fp8_scaling = fixed.fp8_scaling;
  s.fixed_other = fixed.logits + z.zero3_buffer + z.fp8_weight_cache + fixed.fp8_scaling +
                  fixed.cuda_context + fixed.nccl;
  return s;
}
inline FrameSums frame_sums(const StageMemory& f) {
  return frame_sums(FrameFixed{f.in_flight_micro_batches, f.logits_bytes, f.fp8_scaling_bytes,
                               f.cuda_context_bytes, f.nccl_bytes},
                    ZeroTerms{f.params_bytes, f.grads_bytes, f.optimizer_bytes,
                              f.zero3_buffer_bytes, f.fp8_weight_cache_bytes});
}

// stage_totals(f, a, o) of the frame `f` sums, bit for bit (the same sums in the same order).
inline StageTotals stage_totals(const FrameSums& f, const StageActivations& a,
                                const MemoryOptions& o) {
  StageTotals t;
  t.activations = a.per_micro_batch * f.in_flight_micro_batches + a.recompute_buffer;
  const double tensors =
      f.states + t.activations + f.logits + f.zero3_buffer + f.fp8_weight_cache + f.fp8_scaling;
  t.other = f.fixed_other + o.allocator_slack_fraction * tensors;
  t.states = f.states;
  t.total = t.states + t.activations + t.other;
  return t;
}

// FP8 scaling state of one GEMM: 5 quantizers × fp32 (scale, scale_inv, amax_history_len
// amaxes) under delayed scaling; 0 when the recipe keeps none (MemoryOptions docs).
double fp8_scaling_bytes_per_gemm(const MemoryOptions& o);

// One stage's memory from its parameters, the per-micro-batch activations of one dense and one
// MoE layer, and the layout. `logits` is counted on the last stage only; `fp8`: the linear
// layers run in FP8 (GpuSpec::runs_fp8).
StageMemory stage_memory(const StageParams& params, const StageLayerMix& mix,
                         const LayerActivations& dense, const LayerActivations& moe,
                         const Layout& l, int64_t micro_batches, double logits, bool fp8,
                         const MemoryOptions& o);

// REQUIRES: check_layout(l, m, gpus, t) returned no errors.
MemoryEstimate estimate_memory(const ModelSpec& m, const GpuSpec& gpu, const Layout& l,
                               const TrainingSpec& t, const MemoryOptions& o = {});

}  // namespace meshplan
