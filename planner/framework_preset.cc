#include "planner/framework_preset.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/edit_distance.h"
#include "simulator/pipeline_schedule.h"

namespace meshplan {
namespace {

// Columns: name, description, source; overlap_grad_reduce, overlap_p2p, pp_scatter_gather,
// overlap_param_gather, zero_reduce_every_micro_batch, grad_bytes_per_param; sequence_parallel;
// attention_kernels, collective_rails, fp8_recipe, DeepSpeed's ZeRO-3 live-parameter budget
// (stage3_max_live_parameters, default 1e9), partial_recompute and the pipeline schedules
// (cuDNN through Transformer Engine first; rails on; delayed scaling, Transformer Engine's and
// Megatron-LM's default). PyTorch-native stacks (FSDP2, torchtitan) run SDPA's flash backend
// (FlashAttention-2) and torchao float8 with dynamic ("tensorwise") scaling: current scaling.
// Every row's comment gives the reason for each rule, with the file or page it comes from.
const std::vector<FrameworkPreset> kFrameworks = {
    // Megatron-LM / Megatron-Core (megatron/training/arguments.py): --overlap-grad-reduce
    // ("overlap DDP grad reduce"), --overlap-param-gather ("overlap param all-gather in
    // distributed optimizer") with --use-distributed-optimizer (ZeRO-1); --overlap-p2p-
    // communication is on by default in the interleaved schedule (--no-overlap-p2p-
    // communication turns it off); scatter/gather on unless --no-scatter-gather-tensors-in-
    // pipeline. bf16 forces accumulate_allreduce_grads_in_fp32 (fp32 main gradients, 4 bytes).
    // Gradient accumulation: all but the last micro-batch run under no_sync
    // (megatron/core/pipeline_parallel/schedules.py), so ZeRO-0/1 reduce once per step. ZeRO-2/3
    // are Megatron-FSDP (--data-parallel-sharding-strategy optim_grads / optim_grads_params),
    // which reduce-scatters gradients during every backward; only the outer-DP reduction of
    // hybrid sharding waits for the last micro-batch (NVIDIA/Megatron-LM#7186). Pipeline
    // schedules: forward_backward_pipelining_without_interleaving (1F1B) and _with_interleaving
    // (megatron/core/pipeline_parallel/schedules.py); no GPipe, no zero-bubble schedule.
    // Hybrid sharding: --num-distributed-optimizer-instances N keeps N distributed-optimizer
    // copies, each sharded over dp/N ranks (megatron/training/arguments.py). TP overlap:
    // --tp-comm-overlap (Transformer Engine userbuffers, with sequence parallelism). Context
    // parallelism: --cp-comm-type p2p, all_gather, a2a, a2a+p2p. MoE: --overlap-moe-expert-
    // parallel-comm overlaps dispatch/combine with another micro-batch (transformer_config.py).
    {"megatron-core",
     "Megatron-Core (Megatron-LM 2024+): distributed optimizer, overlapped grad reduce, param "
     "gather and p2p",
     "github.com/NVIDIA/Megatron-LM megatron/training/arguments.py, "
     "megatron/core/pipeline_parallel/schedules.py",
     true,
     true,
     true,
     true,
     true,
     4,
     true,
     "cudnn,fa3,fa2",
     true,
     "delayed",
     0,
     true,
     "1f1b,interleaved",
     true,
     true,
     true,
     "ring,allgather,a2a,hybrid",
     true,
     true},
    // NeMo 2.x trains through Megatron-Core (MegatronStrategy); MegatronCommOverlapCallback
    // (nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py) turns on overlap_grad_reduce,
    // overlap_param_gather and p2p overlap with the distributed optimizer: the same rules.
    {"nemo",
     "NVIDIA NeMo 2.x on Megatron-Core: the megatron-core rules",
     "github.com/NVIDIA/NeMo nemo/lightning/pytorch/callbacks/megatron_comm_overlap.py",
     true,
     true,
     true,
     true,
     true,
     4,
     true,
     "cudnn,fa3,fa2",
     true,
     "delayed",
     0,
     true,
     "1f1b,interleaved",
     true,
     true,
     true,
     "ring,allgather,a2a,hybrid",
     true,
     true},
    // Megatron-LM as of Narayanan et al. 2021 (arXiv 2104.04473): gradients all-reduced after
    // the backward pass (--overlap-grad-reduce arrived in 2023, core_r0.4.0); blocking pipeline
    // sends and receives (--overlap-p2p-communication also 2023); scatter/gather (§4.1); fp16
    // training keeps gradients and their all-reduce in the parameter dtype unless
    // --accumulate-allreduce-grads-in-fp32 (default off; forced on only for bf16): 2 bytes. No
    // distributed optimizer, no sequence parallelism (Korthikanti et al. 2022 came later).
    // Schedules: 1F1B and the interleaved 1F1B the paper introduced (§2.2); zero-bubble
    // schedules came in 2023 (Qi et al., arXiv 2401.10241). No hybrid sharding (no sharding),
    // no TP communication overlap (--tp-comm-overlap came with Transformer Engine, 2023).
    {"megatron-2021", "Megatron-LM of 2021 (Narayanan et al.): no comm overlap, fp16 gradients",
     "arXiv 2104.04473 §4; Megatron-LM v2.x megatron/arguments.py "
     "(--accumulate-allreduce-grads-in-fp32)",
     false, false, true, false, true, 2, false, "cudnn,fa3,fa2", true, "delayed", 0, false,
     "1f1b,interleaved", false, false},
    // Microsoft DeepSpeed (deepspeed.ai/docs/config-json, zero_optimization): overlap_comm
    // overlaps gradient reduction with backward; it defaults to on for ZeRO-3 and off below
    // (overlap_comm_valid in deepspeed/runtime/zero/config.py), and the ZeRO-2 tutorial's
    // configuration turns it on: the preset assumes on. ZeRO-2/3 reduce(-scatter) gradients as
    // each micro-batch's backward produces them (reduce_scatter, reduce_bucket_size;
    // stage_1_and_2.py / stage3.py); ZeRO-1/2 all-gather the updated partitions inside step(),
    // not behind the next forward; ZeRO-3 prefetches parameters (stage3_prefetch_bucket_size).
    // PipelineEngine (deepspeed/runtime/pipe/engine.py) executes blocking sends of the whole
    // activation from every TP rank; its only schedule is TrainSchedule, 1F1B
    // (deepspeed/runtime/pipe/schedule.py). Hybrid sharding: only MiCS (mics_shard_size), a
    // ZeRO-3 variant with its own communication, which meshplan does not model: off.
    {"deepspeed",
     "Microsoft DeepSpeed ZeRO (overlap_comm on): per-micro-batch gradient reduction, blocking "
     "pipeline",
     "deepspeed.ai/docs/config-json (zero_optimization); deepspeed/runtime/zero/config.py, "
     "stage_1_and_2.py, pipe/engine.py",
     true,
     false,
     false,
     false,
     true,
     4,
     true,
     "cudnn,fa3,fa2",
     true,
     "delayed",
     1e9,
     false,
     "1f1b",
     false,
     false,
     true,
     ""},
    // The DeepSpeed ZeRO-3 runs of Narayanan et al. 2021 Table 2 (configuration unpublished).
    // overlap_comm was already DeepSpeed's default for ZeRO-3 then
    // (ZERO3_OPTIMIZATION_OVERLAP_COMM_DEFAULT, deepspeed/runtime/zero/config.py): gradient
    // reduction overlaps the backward. Activation checkpointing of whole layers only
    // (deepspeed.checkpointing; selective recomputation came with Korthikanti et al. 2022), no
    // sequence parallelism. Parameter gathers not prefetched: until mid-2021 ZeRO-3's
    // fetch_sub_module issued its all-gathers "async" but each one called
    // torch.cuda.synchronize() ("the async version is not async at all", deepspeedai/DeepSpeed
    // PR #1188, June 2021, which made them synchronous and coalesced; batched prefetch came with
    // PR #1453, October 2021): the compute waits for every gather. FITTED, cause not
    // established: collectives at one NIC's bandwidth per GPU (no rails). That reproduces the
    // step time that stays constant from 768 to 1,536 GPUs (throughput per GPU 144, 88, 44
    // TFLOP/s: communication-bound); with every rail (8 × HDR per node) the gathers would take
    // an eighth of the time and the throughput would barely fall. Pipelines: DeepSpeed's 1F1B
    // TrainSchedule.
    {"deepspeed-2021",
     "DeepSpeed ZeRO-3 as in Narayanan et al. 2021 Table 2: overlap_comm, gathers not "
     "prefetched, one NIC per GPU (fitted)",
     "arXiv 2104.04473 Table 2 (configuration unpublished); deepspeed/runtime/zero/config.py; "
     "deepspeedai/DeepSpeed PR #1188",
     true,
     false,
     false,
     false,
     true,
     4,
     false,
     "cudnn,fa3,fa2",
     false,
     "delayed",
     1e9,
     false,
     "1f1b",
     false,
     false,
     false,
     ""},
    // Megatron-DeepSpeed as BLOOM-176B ran it (bigscience-workshop/Megatron-DeepSpeed, 2022):
    // Megatron-LM of 2021 (gradient reduction after backward) on DeepSpeed's synchronous
    // PipelineEngine (whole activations from every TP rank, blocking), bf16 with fp32 gradient
    // accumulation (4 bytes), ZeRO-1. Its BF16_Optimizer all-gathers the updated weights in
    // step() (deepspeed/runtime/bf16_optimizer.py), after the backward: nothing hides them.
    // Pipelines: DeepSpeed's 1F1B TrainSchedule.
    {"megatron-deepspeed",
     "Megatron-DeepSpeed of 2022 (BLOOM): no comm overlap, DeepSpeed pipeline",
     "github.com/bigscience-workshop/bigscience train/tr11-176B-ml/README.md; "
     "deepspeed/runtime/pipe/engine.py",
     false,
     false,
     false,
     false,
     true,
     4,
     false,
     "cudnn,fa3,fa2",
     true,
     "delayed",
     0,
     false,
     "1f1b",
     false,
     false,
     true,
     ""},
    // PyTorch FSDP2 (fully_shard, docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html):
    // reduce-scatter from post-backward hooks per unit, overlapping the rest of the backward;
    // implicit prefetch overlaps all-gathers with compute, including the forward all-gathers
    // when reshard_after_forward=False (ZeRO-2 style); reduce-scatter every micro-batch unless
    // the user calls set_requires_gradient_sync(False) (pytorch/pytorch#126166). torch.
    // distributed.pipelining sends whole tensors, asynchronously; its ScheduleGPipe,
    // Schedule1F1B, ScheduleInterleaved1F1B, ScheduleDualPipeV, ScheduleZBVZeroBubble and
    // ScheduleInterleavedZeroBubble are meshplan's gpipe, 1f1b, interleaved, dualpipev, zb-v and
    // zb-interleaved (its zero-bubble schedules need two or more stages per rank, unlike ZB-H1
    // and ZB-H2). Hybrid sharding:
    // fully_shard over a 2-D device mesh (replicate × shard), torchtitan's
    // data_parallel_replicate_degree and data_parallel_shard_degree. TP overlap: asynchronous
    // TP (torch._inductor micro-pipeline TP; torchtitan enable_async_tensor_parallel).
    {"fsdp2",
     "PyTorch FSDP2 (fully_shard): per-micro-batch reduce-scatter, prefetched all-gathers",
     "docs.pytorch.org fully_shard and FSDP notes (prefetch); pytorch/pytorch#126166",
     true,
     true,
     false,
     true,
     true,
     4,
     true,
     "fa2",
     true,
     "current",
     0,
     true,
     "gpipe,1f1b,interleaved,dualpipev,zb-v,zb-interleaved",
     true,
     true,
     true,
     "ring,allgather"},
    // torchtitan (github.com/pytorch/torchtitan, parallelize.py): FSDP2 with
    // MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32), TP with sequence parallel,
    // torch.distributed.pipelining: the fsdp2 rules.
    {"torchtitan",
     "torchtitan: FSDP2 + TP/SP + torch.distributed.pipelining (the fsdp2 rules)",
     "github.com/pytorch/torchtitan torchtitan/models/llama3/infra/parallelize.py",
     true,
     true,
     false,
     true,
     true,
     4,
     true,
     "fa2",
     true,
     "current",
     0,
     true,
     "gpipe,1f1b,interleaved,dualpipev,zb-v,zb-interleaved",
     true,
     true,
     true,
     "ring,allgather",
     false,
     true},
    // MosaicML Composer (composer/distributed/dist_strategy.py): prepare_fsdp_module wraps in
    // PyTorch FSDP1 with FULL_SHARD (ZeRO-3) or SHARD_GRAD_OP (ZeRO-2), backward_prefetch
    // BACKWARD_POST by default; ddp_sync_context applies no_sync only to DistributedDataParallel,
    // so under FSDP every micro-batch's gradients are reduce-scattered. The LLM Foundry runs use
    // no tensor parallelism. Attention: FlashAttention-2 (llm-foundry attn_impl: flash).
    // Composer has no pipeline parallelism: no schedules, pp = 1. Hybrid sharding: FSDP's
    // HYBRID_SHARD sharding strategy (composer fsdp_config sharding_strategy).
    {"composer", "MosaicML Composer on PyTorch FSDP (LLM Foundry): per-micro-batch reduce-scatter",
     "github.com/mosaicml/composer composer/distributed/dist_strategy.py (prepare_fsdp_module, "
     "ddp_sync_context)",
     true, true, false, true, true, 4, false, "fa2", true, "delayed", 0, false, "", true, false},
};

// "a,b,c" → {"a", "b", "c"}; "" → {}.
std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// "must be one of a|b|c (did you mean 'b'?)" for `value` of `field` at `where`.
Diagnostic not_one_of(const SourceLocation& where, const std::string& field,
                      const std::string& value, const std::vector<std::string>& names) {
  return Diagnostic{
      where, field, value,
      fmt::format("must be one of {}{}", fmt::join(names, "|"), did_you_mean(value, names))};
}

}  // namespace

const std::vector<FrameworkPreset>& framework_presets() { return kFrameworks; }

std::vector<std::string> framework_names() {
  std::vector<std::string> names;
  for (const FrameworkPreset& f : kFrameworks) names.emplace_back(f.name);
  return names;
}

Result<FrameworkPreset> find_framework(const std::string& name, const SourceLocation& where,
                                       const std::string& field) {
  for (const FrameworkPreset& f : kFrameworks)
    if (name == f.name) return f;
  return not_one_of(where, field, name, framework_names());
}

// Where each framework can put the optimizer states off the GPU (CostOptions::offload_devices):
// DeepSpeed zero_optimization.offload_optimizer.device cpu or nvme, stages 1-3
// (deepspeed.ai/docs/config-json); Megatron-Core --optimizer-cpu-offload (host memory only,
// megatron/training/arguments.py; NeMo runs Megatron-Core's optimizer but its YAML has no key
// for it). FSDP2's CPUOffloadPolicy and Composer's cpu_offload move parameters and gradients
// too, which meshplan does not model: none. The 2021 presets predate offloading in their runs.
// ZeRO stages each framework runs (CostOptions::zero_stages). PyTorch FSDP has no stage that
// shards only the optimizer states: replicate (0), SHARD_GRAD_OP / reshard_after_forward=False
// (2) and FULL_SHARD (3) — FSDP2 and torchtitan (whose export refuses zero=1) and Composer's
// FSDP. The others run all four.
std::vector<int> framework_zero_stages(const std::string& name) {
  if (name == "fsdp2" || name == "torchtitan" || name == "composer") return {0, 2, 3};
  return {0, 1, 2, 3};
}

// Whether the framework checkpoints groups of layers (CostOptions::uniform_recompute) or a
// count of layers (CostOptions::block_recompute): not
// FSDP2, torchtitan or Composer, whose activation checkpointing wraps each block.
bool framework_uniform_recompute(const std::string& name) {
  return name != "fsdp2" && name != "torchtitan" && name != "composer";
}

std::vector<Offload> framework_offload_devices(const std::string& name) {
  if (name == "deepspeed" || name == "megatron-deepspeed") return {Offload::cpu, Offload::nvme};
  if (name == "megatron-core") return {Offload::cpu};
  return {};
}

// FP8 memory rules (MemoryOptions::fp8_amax_history_len, fp8_saves_quantized_inputs). The
// Megatron family's --fp8-amax-history-len defaults to 1 (megatron/training/arguments.py;
// Megatron-Core TransformerConfig.fp8_amax_history_len); NeMo's FP8 precision recipe sets 1024
// (bf16_with_fp8_mixed, nemo/collections/llm/recipes/precision/mixed_precision.py); DeepSpeed
// and Composer hand FP8 to Transformer Engine, whose DelayedScaling keeps 1024
// (transformer_engine/common/recipe/__init__.py). Current scaling keeps no history. The
// PyTorch-native stacks run torchao's Float8Linear, which saves BF16 inputs.
void apply_framework_fp8_memory(const FrameworkPreset& f, MemoryOptions& m) {
  const std::string name = f.name;
  const bool megatron =
      name == "megatron-core" || name == "megatron-2021" || name == "megatron-deepspeed";
  const bool delayed = std::string(f.fp8_recipe) == "delayed";
  m.fp8_amax_history_len = !delayed ? 0 : megatron ? 1 : 1024;
  m.fp8_saves_quantized_inputs = name != "fsdp2" && name != "torchtitan";
}

// What its recompute=selective runs (MemoryOptions::selective_op_sac): torchtitan's
// activation_checkpoint.mode "selective" with selective_ac_option "op", the option its exporter
// writes (launchers/launcher_torchtitan.cc), is its per-op policy (planner/op_sac.h); the
// Megatron family's is --recompute-granularity selective over --recompute-modules.
bool framework_selective_op_sac(const std::string& name) { return name == "torchtitan"; }

const char* framework_launcher(const std::string& framework) {
  static constexpr std::pair<const char*, const char*> kLaunchers[] = {
      {"megatron-core", "megatron"},
      {"nemo", "nemo2"},  // NeMo 2 recipes (NeMo 1 YAML: export --format nemo)
      {"deepspeed", "deepspeed"},
      // The job file: it names any layer split (module_fqns_per_model_part), the overrides
      // only those torchtitan's less_layers options make.
      {"torchtitan", "torchtitan-toml"}};
  for (const auto& [name, launcher] : kLaunchers)
    if (framework == name) return launcher;
  return nullptr;
}

void apply_framework(const FrameworkPreset& f, CostOptions& o) {
  o.framework = f.name;
  o.overlap_grad_reduce = f.overlap_grad_reduce;
  o.overlap_p2p = f.overlap_p2p;
  o.pp_scatter_gather = f.pp_scatter_gather;
  o.overlap_param_gather = f.overlap_param_gather;
  o.zero_reduce_every_micro_batch = f.zero_reduce_every_micro_batch;
  o.memory.grad_bytes_per_param = f.grad_bytes_per_param;
  o.attention_kernels = comma_list(f.attention_kernels);
  o.collective_rails = f.collective_rails;
  o.fp8_recipe = f.fp8_recipe;
  o.memory.zero3_max_live_params = f.zero3_max_live_params;
  apply_framework_fp8_memory(f, o.memory);
  o.memory.selective_op_sac = framework_selective_op_sac(f.name);
  o.partial_recompute = f.partial_recompute;
  o.hybrid_sharding = f.hybrid_sharding;
  o.tp_comm_overlap = f.tp_comm_overlap;
  o.zero3_prefetch = f.zero3_prefetch;
  o.ep_comm_overlap = f.ep_comm_overlap;
  o.expert_tensor_parallel = f.expert_tensor_parallel;
  o.cp_kinds.clear();
  for (const std::string& name : comma_list(f.cp_kinds)) {
    for (CpKind kind : {CpKind::ring, CpKind::allgather, CpKind::a2a, CpKind::hybrid})
      if (name == to_string(kind)) o.cp_kinds.push_back(kind);
  }
  o.offload_devices = framework_offload_devices(f.name);
  o.zero_stages = framework_zero_stages(f.name);
  o.uniform_recompute = framework_uniform_recompute(f.name);
  o.block_recompute = framework_uniform_recompute(f.name);  // the same frameworks count layers
  o.pipeline_schedules.clear();
  for (const std::string& name : comma_list(f.schedules)) {
    if (const ScheduleName* s = find_schedule(name)) o.pipeline_schedules.push_back(s->schedule);
  }
}

std::vector<std::string> grad_reduce_dtypes() { return {"bf16", "fp16", "fp32"}; }

Result<bool> apply_grad_reduce_dtype(const std::string& dtype, CostOptions& o,
                                     const SourceLocation& where, const std::string& field) {
  if (dtype.empty()) return true;
  const std::vector<std::string> names = grad_reduce_dtypes();
  if (std::find(names.begin(), names.end(), dtype) == names.end())
    return not_one_of(where, field, dtype, names);
  o.grad_reduce_dtype = dtype;
  o.memory.grad_bytes_per_param = dtype == "fp32" ? 4 : 2;
  return true;
}

}  // namespace meshplan
