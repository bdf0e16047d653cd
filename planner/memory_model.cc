#include "planner/memory_model.h"

#include <algorithm>

#include "core/pipeline_placement.h"
#include "planner/activation_memory.h"
#include "planner/param_count.h"
#include "planner/zero_sharding.h"
#include "simulator/pipeline_schedule.h"

namespace meshplan {

ModelStateBytes model_state_bytes(double params, int zero, int64_t shards, const MemoryOptions& o) {
  const ZeroSharding z = zero_sharding(zero);
  ModelStateBytes b;
  b.params = o.weight_bytes_per_param * params / z.weight_shards(shards);
  b.grads = o.grad_bytes_per_param * params / z.grad_shards(shards);
  b.optimizer = o.optimizer_bytes_per_param * params / z.optimizer_shards(shards);
  return b;
}

double in_flight_micro_batches(const Layout& l, int64_t micro_batches, int64_t stage) {
  return sim::schedule_info(l.schedule).in_flight_micro_batches(l.pp, l.vpp, micro_batches, stage);
}

namespace {

int64_t communicators(const Layout& l) {
  int64_t n = 0;
  for (int64_t degree : {l.tp, l.cp, l.pp, l.dp, l.ep}) n += degree > 1 ? 1 : 0;
  return n;
}

// Full recompute in groups of N = recompute_layers > 1 layers (Megatron-LM's "uniform" method,
// --recompute-method uniform --recompute-num-layers N; DeepSpeed's activation_checkpoint_interval
// N; Chen et al. 2016's √L schedule when N ≈ √L): only each group's input is kept, and in the
// backward one group at a time is recomputed, so its N layers' full activations exist at once.
StageActivations uniform_groups(const StageLayerMix& mix, const LayerActivations& dense,
                                const LayerActivations& moe, int64_t group) {
  return uniform_group_activations(uniform_group_terms(mix, dense, moe), group);
}

// Offloading (Layout::offload, act_offload). Optimizer states (master weights and moments)
// leave the GPU for host memory or NVMe; the gradients stay (Megatron-Core's optimizer CPU
// offload copies them out for the step, DeepSpeed's reduce buckets stay on the GPU). The stored
// activations of act_offload layers per stage (of every micro-batch in flight) go to host
// memory, one layer's copy staying on the GPU as the transfer buffer (Transformer Engine's CPU
// offload double-buffers a layer).
void offload_states(const Layout& l, int64_t layers, double layer_activation_bytes,
                    StageMemory& s) {
  if (l.offload == Offload::cpu) s.host_bytes += s.optimizer_bytes;
  if (l.offload == Offload::nvme) s.nvme_bytes += s.optimizer_bytes;
  if (l.offload != Offload::none) s.optimizer_bytes = 0;
  const int64_t offloaded = std::min(l.act_offload, layers);
  if (offloaded <= 0) return;
  const double moved =
      layer_activation_bytes *
      std::max(0.0, static_cast<double>(offloaded) * s.in_flight_micro_batches - 1.0);
  s.activations_bytes -= moved;
  s.host_bytes += moved;
}

}  // namespace

StageActivations stage_activations(const StageLayerMix& mix, const LayerActivations& dense,
                                   const LayerActivations& moe, const Layout& l, int64_t stage) {
  if (l.recompute == Recompute::full && l.recompute_layers > 1)
    return uniform_groups(mix, dense, moe, l.recompute_layers);
  return stage_activations(
      stage_activation_terms(mix, dense, moe, l.recompute, l.recompute_modules),
      l.recompute_layers_on(stage));
}

StageActivationTerms stage_activation_terms(const StageLayerMix& mix, const LayerActivations& dense,
                                            const LayerActivations& moe, Recompute recompute,
                                            RecomputeModules modules) {
  StageActivationTerms t;
  t.recompute = recompute;
  t.dense_layers = mix.dense_layers, t.moe_layers = mix.moe_layers;
  t.dense_full = dense.stored(Recompute::full);
  t.dense_policy = dense.stored(recompute, modules);
  t.moe_full = moe.stored(Recompute::full);
  t.moe_policy = moe.stored(recompute, modules);
  t.dense_whole = dense.no_recompute();
  t.moe_whole = moe.no_recompute();
  if (recompute == Recompute::selective) {
    t.dense_largest = dense.largest_module(modules);
    t.moe_largest = moe.largest_module(modules);
  }
  // stage_activations' first_layer under each policy the first layer may follow.
  auto first = [&](Recompute policy) {
    return mix.dense_layers > 0 ? dense.stored(policy, modules)
           : mix.moe_layers > 0 ? moe.stored(policy, modules)
                                : 0;
  };
  t.first_full = first(Recompute::full);
  t.first_policy = first(recompute);
  return t;
}

UniformGroupTerms uniform_group_terms(const StageLayerMix& mix, const LayerActivations& dense,
                                      const LayerActivations& moe) {
  UniformGroupTerms t;
  t.layers = mix.layers();
  t.layer_input = mix.dense_layers > 0 ? dense.layer_input : moe.layer_input;
  t.widest = mix.dense_layers > 0 ? dense.no_recompute() : 0;
  if (mix.moe_layers > 0) t.widest = std::max(t.widest, moe.no_recompute());
  return t;
}

FullRecompute full_recompute(const Layout& l, const StageLayerMix& mix, int64_t stage) {
  const int64_t full = l.recompute == Recompute::full
                           ? mix.layers()
                           : std::min(l.recompute_layers_on(stage), mix.layers());
  const int64_t dense = std::min(full, mix.dense_layers);
  return {dense, full - dense};
}

std::vector<StageLayerMix> stage_layer_mix(const ModelSpec& m, const Layout& l) {
  std::vector<StageLayerMix> mix(static_cast<size_t>(l.pp));
  std::vector<int64_t> bounds = chunk_boundaries(m, l);
  const PipelinePlacement placement = pipeline_placement(l.pipeline());
  for (size_t r = 0; r < mix.size(); ++r) {
    for (const int64_t chunk : placement.stage_chunks[r]) {
      const auto c = static_cast<size_t>(chunk);
      const int64_t moe = m.moe_layers_in(bounds[c], bounds[c + 1]);
      mix[r].dense_layers += bounds[c + 1] - bounds[c] - moe;
      mix[r].moe_layers += moe;
    }
  }
  return mix;
}

double fp8_scaling_bytes_per_gemm(const MemoryOptions& o) {
  if (o.fp8_amax_history_len <= 0) return 0;
  constexpr double kQuantizers = 3 + 2;  // forward: input, weight, output; backward: two grads
  constexpr double kFp32 = 4;
  return kQuantizers * kFp32 * static_cast<double>(2 + o.fp8_amax_history_len);
}

StageMemory stage_memory_frame(const StageParams& params, const Layout& l, int64_t micro_batches,
                               double logits, bool fp8, const MemoryOptions& o) {
  StageMemory s;
  s.stage = params.stage;
  s.layers = params.layers;
  s.params = params.per_gpu();
  set_zero_terms(s, params, l, fp8, o);
  const FrameFixed fixed = frame_fixed(params, l, micro_batches, logits, fp8, o);
  s.in_flight_micro_batches = fixed.in_flight_micro_batches;
  s.logits_bytes = fixed.logits;
  s.fp8_scaling_bytes = fixed.fp8_scaling;
  s.cuda_context_bytes = fixed.cuda_context;
  s.nccl_bytes = fixed.nccl;
  return s;
}

FrameFixed frame_fixed(const StageParams& params, const Layout& l, int64_t micro_batches,
                       double logits, bool fp8, const MemoryOptions& o) {
  FrameFixed f;
  f.in_flight_micro_batches = in_flight_micro_batches(l, micro_batches, params.stage);
  if (holds_last_chunk(l.pipeline(), params.stage)) f.logits = logits;
  if (fp8) f.fp8_scaling = fp8_scaling_bytes_per_gemm(o) * static_cast<double>(params.fp8_gemms);
  f.cuda_context = static_cast<double>(o.cuda_context_bytes);
  f.nccl = static_cast<double>(o.nccl_bytes_per_communicator * communicators(l));
  return f;
}

void set_zero_terms(StageMemory& s, const StageParams& params, const Layout& l, bool fp8,
                    const MemoryOptions& o) {
  const ZeroTerms z = zero_terms(params, l, fp8, o);
  s.params_bytes = z.params;
  s.grads_bytes = z.grads;
  s.optimizer_bytes = z.optimizer;
  s.zero3_buffer_bytes = z.zero3_buffer;
  s.fp8_weight_cache_bytes = z.fp8_weight_cache;
}

StateShards state_shards(const Layout& l) {
  StateShards s;
  s.dense = l.shard_size();
  s.expert =
      l.shard > 0 ? std::max<int64_t>(1, l.shard / l.ep) : std::max<int64_t>(1, l.expert_dp());
  return s;
}

ZeroTerms zero_terms(const StageParams& params, const Layout& l, bool fp8, const MemoryOptions& o) {
  return zero_terms(params, l.zero, state_shards(l), fp8, o);
}

ZeroTerms zero_terms(const StageParams& params, int zero, StateShards shards, bool fp8,
                     const MemoryOptions& o) {
  ModelStateBytes d =
      model_state_bytes(static_cast<double>(params.dense_per_gpu), zero, shards.dense, o);
  ModelStateBytes e =
      model_state_bytes(static_cast<double>(params.expert_per_gpu), zero, shards.expert, o);
  ZeroTerms z;
  z.params = d.params + e.params;
  z.grads = d.grads + e.grads;
  z.optimizer = d.optimizer + e.optimizer;
  if (zero_sharding(zero).weights && params.layers > 0) {
    const auto weights = static_cast<double>(params.per_gpu());
    const double bytes_per_param =
        gathered_bytes_per_param(weights, static_cast<double>(params.linear_per_gpu), fp8, o);
    z.zero3_buffer = 2.0 * bytes_per_param * weights / static_cast<double>(params.layers);
    if (o.zero3_max_live_params > 0)
      z.zero3_buffer = std::min(z.zero3_buffer, o.weight_bytes_per_param * o.zero3_max_live_params);
  }
  if (fp8 && !o.fp8_params && !zero_sharding(zero).weights)
    z.fp8_weight_cache =
        o.fp8_weight_cache_bytes_per_param * static_cast<double>(params.linear_per_gpu);
  return z;
}

double gathered_bytes_per_param(double params, double linear, bool fp8, const MemoryOptions& o) {
  const double w = o.weight_bytes_per_param;
  if (!fp8 || !o.fp8_params || params <= 0) return w;
  return (params * w - linear * (w - 1)) / params;
}

StageMemory with_activations(StageMemory frame, const StageLayerMix& mix,
                             const LayerActivations& dense, const LayerActivations& moe,
                             const Layout& l, const MemoryOptions& o) {
  const int64_t stage = frame.stage;
  return with_activations(std::move(frame), stage_activations(mix, dense, moe, l, stage), l, o);
}

StageMemory with_activations(StageMemory s, const StageActivations& a, const Layout& l,
                             const MemoryOptions& o) {
  s.activations_per_layer_bytes = a.first_layer;
  s.activations_bytes = a.per_micro_batch * s.in_flight_micro_batches + a.recompute_buffer;
  offload_states(l, s.layers, a.first_layer, s);
  const double tensors = s.params_bytes + s.grads_bytes + s.optimizer_bytes + s.activations_bytes +
                         s.logits_bytes + s.zero3_buffer_bytes + s.fp8_weight_cache_bytes +
                         s.fp8_scaling_bytes;
  s.allocator_slack_bytes = o.allocator_slack_fraction * tensors;
  return s;
}

StageMemory stage_memory(const StageParams& params, const StageLayerMix& mix,
                         const LayerActivations& dense, const LayerActivations& moe,
                         const Layout& l, int64_t micro_batches, double logits, bool fp8,
                         const MemoryOptions& o) {
  return with_activations(stage_memory_frame(params, l, micro_batches, logits, fp8, o), mix, dense,
                          moe, l, o);
}

MemoryEstimate estimate_memory(const ModelSpec& m, const GpuSpec& gpu, const Layout& l,
                               const TrainingSpec& t, const MemoryOptions& o) {
  MemoryEstimate est;
  est.params_total = total_params(m);
  est.capacity_bytes = static_cast<double>(gpu.hbm_bytes);
  const int64_t micro_batches = t.global_batch / (l.dp * l.mbs);
  ActivationShape shape = activation_shape(l, t.seq_len);
  shape.fp8 = gpu.runs_fp8(t.precision);
  shape.fp8_quantized_inputs = o.fp8_saves_quantized_inputs;
  shape.op_sac = o.selective_op_sac;
  const LayerActivations dense = layer_activations(m, 0, shape);
  const LayerActivations moe = m.moe ? layer_activations(m, m.first_moe_layer(), shape) : dense;
  const std::vector<StageLayerMix> mix = stage_layer_mix(m, l);
  const double logits = logits_bytes(m, shape);
  const std::vector<StageParams> params = stage_params(m, l);
  for (const StageParams& sp : params) {
    StageMemory s = stage_memory(sp, mix[static_cast<size_t>(sp.stage)], dense, moe, l,
                                 micro_batches, logits, shape.fp8, o);
    if (s.total_bytes() > est.peak_bytes) {
      est.peak_bytes = s.total_bytes();
      est.peak_stage = s.stage;
    }
    est.stages.push_back(s);
  }
  est.fp8 = shape.fp8;
  if (est.fp8 && !est.stages.empty()) {
    ActivationShape bf16 = shape;
    bf16.fp8 = false;
    const LayerActivations dense16 = layer_activations(m, 0, bf16);
    const LayerActivations moe16 =
        m.moe ? layer_activations(m, m.first_moe_layer(), bf16) : dense16;
    const auto peak = static_cast<size_t>(est.peak_stage);
    est.peak_bf16_activations_bytes =
        stage_memory(params[peak], mix[peak], dense16, moe16, l, micro_batches, logits, true, o)
            .activations_bytes;
  }
  return est;
}

}  // namespace meshplan
