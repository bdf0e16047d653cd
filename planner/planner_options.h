// Every documented default of the cost model; the report's "Assumptions" lists them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/job_settings.h"
#include "core/layout.h"
#include "planner/collective_model.h"
#include "planner/flop_count.h"
#include "planner/memory_options.h"

namespace meshplan {

// Exposed part of `comm` seconds of communication run beside `compute` seconds of work it
// overlaps. While both run, the communication kernels slow the compute: they hold SMs (and the
// first chunk of a split GEMM waits for its data), costing (1 − efficiency) of the overlapped
// time, and their HBM traffic (`hbm_s` seconds of it for the whole collective; CollectiveInfo::
// hbm_bytes_per_bus_byte) competes with the compute's own. When the communication is the longer
// the slowed compute finishes in its shadow and only the difference shows:
//   exposed = max(comm − compute, (1 − efficiency)·min + hbm_s·min/comm), min = min(comm, compute).
inline double exposed_after_overlap(double comm, double compute, double efficiency,
                                    double hbm_s = 0) {
  const double shorter = comm < compute ? comm : compute;
  const double slowdown = (1 - efficiency) * shorter + (comm > 0 ? hbm_s * shorter / comm : 0);
  return comm - compute > slowdown ? comm - compute : slowdown;
}

struct CostOptions {
  // The framework preset these software rules came from (framework_preset.h); the defaults
  // below are the megatron-core preset. Informational: the fields themselves drive the model.
  std::string framework = "megatron-core";
  // The gradient reduction dtype the job set apart from its framework's default
  // (apply_grad_reduce_dtype); "": the preset's. Informational, like `framework`.
  std::string grad_reduce_dtype;
  MemoryOptions memory;
  FlopOptions flops;
  // Attention kernels skip masked blocks: causal attention does half the work of full
  // attention (FlashAttention's causal mode). Affects time, not the FLOPs reported.
  bool causal_attention_time = true;
  // Fused attention kernels the framework runs, in preference order; the first one the
  // profile has samples for prices attention (attention_model.h). Megatron-Core and NeMo run
  // Transformer Engine's cuDNN fused attention on Hopper (TE's default backend there).
  std::vector<std::string> attention_kernels = {"cudnn", "fa3", "fa2"};
  // Share of overlappable communication that actually hides behind compute
  // (exposed_after_overlap; 1: perfect overlap): communication kernels occupy SMs and HBM
  // bandwidth while the compute they hide behind runs. Fitted on the development set (README,
  // "Validation"). One for TP and CP exchanges inside a layer (Transformer Engine userbuffers,
  // ring attention), one for data-parallel gradient and parameter traffic (NCCL beside the
  // backward and forward passes, ZeRO-3/FSDP prefetch).
  // Fitted against every run in tests/data/ (2021 and modern sets, 47 runs). TP 0.7 (a grid of
  // 0.1 steps: mean |error| within 0.2 points for 0.5-0.8). DP 0.8 (a grid of 0.05 steps with
  // the 2021 DeepSpeed rows' gathers unprefetched, deepspeed-2021 preset: mean |error| 4.0%
  // for 0.7-0.85; the worst run falls from 13.7% at 0.7 to 10.9% at 0.8 and 10.4% at 0.85,
  // while the FSDP rows (foundry) rise from 5.1% to 5.6% and 5.9%). Plausibility: 1 − 0.8 is
  // the share of an H100's 132 SMs that 26 NCCL channels take; NCCL needs up to 32 SMs for a
  // ring or tree at peak bandwidth (sjeaugey, NVIDIA/nccl#1649: "tree would require 32 SMs").
  double tp_overlap_efficiency = 0.7;
  double dp_overlap_efficiency = 0.8;
  // FP8 scaling recipe (delayed | current | block): Transformer Engine's and Megatron-LM's
  // default is delayed scaling (te.fp8_autocast, --fp8-recipe delayed); torchao's float8
  // training ("tensorwise") scales dynamically, like TE's current scaling.
  std::string fp8_recipe = "delayed";
  // Whether rings spanning several nodes drive one NIC per member GPU (rail-optimized
  // fabrics; collective_model.h) or one NIC's bandwidth only.
  bool collective_rails = true;
  // How collectives over several network levels run (collective_model.h).
  CollectiveAlgorithm collective_algorithm = CollectiveAlgorithm::ring;
  // Whether DP gradient reduction overlaps the backward pass (Megatron-LM --overlap-grad-reduce,
  // PyTorch DDP/FSDP buckets). Megatron-LM before 2023 reduced after the backward pass.
  bool overlap_grad_reduce = true;
  // Whether pipeline sends and receives overlap compute. When not, every micro-batch's
  // activation and gradient transfer of every chunk sits on the stage's critical path.
  bool overlap_p2p = true;
  // Megatron-LM's scatter/gather optimisation: each TP rank sends 1/t of the activation across
  // the pipeline boundary (Narayanan et al. 2021 §4.1). DeepSpeed's PipelineEngine sends it
  // whole from every TP rank.
  bool pp_scatter_gather = true;
  // ZeRO-1/2: whether the all-gather of the updated weights is hidden behind the next step's
  // first forward except its last bucket (Megatron-LM --overlap-param-gather: "overlap param
  // all-gather in distributed optimizer", megatron/training/arguments.py). Off: the whole
  // gather is exposed after the optimizer step (DeepSpeed ZeRO-1/2 all-gathers the updated
  // partitions inside step(), deepspeed/runtime/zero/stage_1_and_2.py).
  bool overlap_param_gather = true;
  // ZeRO-2/3: whether gradients are reduce-scattered after every micro-batch's backward
  // (DeepSpeed ZeRO-2/3 partition gradients as they are produced; PyTorch FSDP2 reduce-scatters
  // each micro-batch unless set_requires_gradient_sync(False), pytorch/pytorch#126166) rather
  // than accumulated locally and reduced once per step (Megatron-Core's DDP runs all but the
  // last micro-batch under no_sync, megatron/core/pipeline_parallel/schedules.py). ZeRO-0/1
  // always reduce once per step. Default on: meshplan's rule before presets existed.
  bool zero_reduce_every_micro_batch = true;
  // Whether the framework recomputes less than every layer (FrameworkPreset::
  // partial_recompute); where it does not, the search offers recompute none or full only.
  bool partial_recompute = true;
  // Pipeline schedules the framework runs (FrameworkPreset::schedules); the search offers only
  // these unless --fix names a schedule. Empty: no pipeline parallelism (pp must be 1).
  // Megatron-Core: 1F1B and interleaved 1F1B (megatron/core/pipeline_parallel/schedules.py).
  std::vector<Schedule> pipeline_schedules = {Schedule::one_f_one_b, Schedule::interleaved};
  // Where the framework can put the optimizer states off the GPU (Layout::offload); the search
  // tries them, in order, for a candidate that does not fit in GPU memory. Megatron-Core:
  // --optimizer-cpu-offload.
  std::vector<Offload> offload_devices = {Offload::cpu};
  // ZeRO stages the framework runs, searched unless --fix names one. Megatron-Core: all four
  // (0, the distributed optimizer, and Megatron-FSDP for 2/3).
  std::vector<int> zero_stages = {0, 1, 2, 3};
  // Whether full recompute may checkpoint groups of layers (the uniform method,
  // Layout::recompute_layers with recompute=full): Megatron-LM --recompute-method uniform,
  // DeepSpeed's activation_checkpoint_interval.
  bool uniform_recompute = true;
  // Whether the framework recomputes a count of layers in full and stores the rest (the block
  // method: Layout::recompute_layers with recompute=none): Megatron-LM --recompute-method block
  // --recompute-num-layers. Not FSDP2, torchtitan or Composer, whose checkpointing wraps every
  // block or none. No framework combines it with selective recompute (Megatron-core's
  // TransformerConfig: "When using recompute_granularity: selective, recompute_num_layers must
  // be None"), so the search never offers selective with a count unless --fix pins one.
  bool block_recompute = true;
  // Whether the framework shards hybrid (FrameworkPreset::hybrid_sharding): the search then
  // also tries shard groups of one node or pod (Layout::shard). Megatron-Core: distributed-
  // optimizer instances (--num-distributed-optimizer-instances, megatron/training/arguments.py).
  bool hybrid_sharding = true;
  // Whether the framework overlaps TP communication with GEMMs (FrameworkPreset::
  // tp_comm_overlap): the search then sets Layout::tp_overlap on layouts with sequence
  // parallelism. Megatron-Core: --tp-comm-overlap (Transformer Engine userbuffers; needs
  // --sequence-parallel, megatron/training/arguments.py).
  bool tp_comm_overlap = true;
  // Whether ZeRO-3 parameter all-gathers run ahead of the compute that needs them (prefetch on
  // a communication stream; FrameworkPreset::zero3_prefetch). When not, each gather waits on
  // the compute stream: forward and backward gathers are exposed, and only the gradient
  // reduction hides behind the backward. Megatron-FSDP, PyTorch FSDP and DeepSpeed since 2021
  // prefetch.
  bool zero3_prefetch = true;
  // Context-parallel variants the search may choose (FrameworkPreset::cp_kinds; Layout::
  // cp_kind); a layout given whole is priced whatever its kind. Megatron-Core: --cp-comm-type
  // p2p, all_gather, a2a and a2a+p2p (megatron/training/arguments.py, transformer_config.py).
  std::vector<CpKind> cp_kinds = {CpKind::ring, CpKind::allgather, CpKind::a2a, CpKind::hybrid};
  // Whether the framework overlaps MoE dispatch/combine all-to-alls with another micro-batch's
  // compute (FrameworkPreset::ep_comm_overlap): the search then sets Layout::ep_overlap on MoE
  // layouts with ep > 1 within the implementation's limits. Megatron-Core:
  // --overlap-moe-expert-parallel-comm, which needs vpp with pp > 1 and no full or block
  // recomputation (megatron/core/transformer/transformer_config.py).
  bool ep_comm_overlap = true;
  // Whether the framework gives experts their own tensor-parallel degree
  // (FrameworkPreset::expert_tensor_parallel): the search then tries etp = 1 beside etp = tp on
  // MoE layouts with tp > 1 (Layout::etp). Megatron-Core --expert-tensor-parallel-size
  // (megatron/core/parallel_state.py, expert RankGenerator "tp-ep-dp-pp"); torchtitan
  // parallelism.expert_tensor_parallel_degree. DeepSpeed's MoE carves expert groups from the
  // data-parallel ranks only, so it has no such fold.
  bool expert_tensor_parallel = true;
  // DP gradient reduction overlaps the backward pass of the last micro-batch, except the last
  // bucket (Megatron-LM overlap_grad_reduce). Bucket: max(40M, 1M·dp) parameters (Megatron-LM
  // default ddp_bucket_size).
  double dp_bucket_params = 40e6;
  // Adam step streams fp32 master, momentum, variance and gradient in and writes them and the
  // bf16 weights back: 4·4 + 3·4 + 2 = 30 bytes per parameter held.
  double optimizer_bytes_per_param = 30;
  // Memory-bound bytes of one layer's forward per token and hidden unit, beyond GEMM
  // operands: two norms (8), two residual adds (12). Dropout adds 10. Backward moves 2×.
  double norm_residual_bytes_per_token_hidden = 20;
  double dropout_bytes_per_token_hidden = 10;

  // The settings a launcher writes beside the layout (launchers/launcher_export.h), as priced.
  JobSettings job() const { return {memory.fp8_params, grad_reduce_dtype}; }
};

}  // namespace meshplan
