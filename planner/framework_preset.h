// Training frameworks as presets of the cost model's software rules (issue 11 item 3): which
// communication each framework overlaps with compute, how often it reduces gradients, how it
// sends pipeline activations, and in which dtype it reduces gradients. One table
// (framework_preset.cc, kFrameworks[]) drives lookup, the CLI's --framework choices and help;
// each row cites the framework's documentation or code for every rule it sets.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "planner/planner_options.h"

namespace meshplan {

struct FrameworkPreset {
  const char* name;         // what --framework and `framework:` keys accept
  const char* description;  // one line, for --help and reports
  const char* source;       // where the rules below come from
  // The CostOptions fields the preset sets (planner_options.h documents each).
  bool overlap_grad_reduce;
  bool overlap_p2p;
  bool pp_scatter_gather;
  bool overlap_param_gather;
  bool zero_reduce_every_micro_batch;
  double grad_bytes_per_param;  // MemoryOptions::grad_bytes_per_param
  // Whether the framework had sequence parallelism (Korthikanti et al. 2022). Validation rows
  // that do not publish `sp` search it only where the framework had it.
  bool sequence_parallel;
  // Fused attention kernels the framework runs, in preference order (CostOptions::
  // attention_kernels; comma-separated).
  const char* attention_kernels = "cudnn,fa3,fa2";
  // Whether its collectives get every NIC of a node (rail-optimized rings; CostOptions::
  // collective_rails).
  bool collective_rails = true;
  // FP8 scaling recipe (CostOptions::fp8_recipe).
  const char* fp8_recipe = "delayed";
  // ZeRO-3 live-parameter budget (MemoryOptions::zero3_max_live_params; 0: two FSDP units).
  double zero3_max_live_params = 0;
  // Whether the framework recomputes less than every layer (CostOptions::partial_recompute):
  // only the attention core (selective) or only some layers (Megatron-LM's block method); both
  // came with Korthikanti et al. 2022 (Megatron-LM --recompute-granularity, --recompute-method).
  // Without them activation checkpointing is all layers or none.
  bool partial_recompute = true;
  // Pipeline schedules the framework runs, comma-separated names as in --layout schedule=
  // (CostOptions::pipeline_schedules); "" when it has no pipeline parallelism.
  const char* schedules = "1f1b,interleaved";
  // Whether it shards ZeRO states over part of the data-parallel group and replicates across
  // the rest (CostOptions::hybrid_sharding).
  bool hybrid_sharding = true;
  // Whether it overlaps TP communication with GEMMs (CostOptions::tp_comm_overlap).
  bool tp_comm_overlap = true;
  // Whether ZeRO-3 parameter gathers are prefetched (CostOptions::zero3_prefetch).
  bool zero3_prefetch = true;
  // Context-parallel variants it runs, comma-separated names as in --layout cp_kind=
  // (CostOptions::cp_kinds); "" when it has no context parallelism (DeepSpeed's config has
  // none; Ulysses is a separate DeepSpeed-Ulysses API), so the search keeps cp = 1.
  const char* cp_kinds = "ring";
  // Whether it overlaps MoE dispatch/combine with another micro-batch's compute
  // (CostOptions::ep_comm_overlap).
  bool ep_comm_overlap = false;
  // Whether it lays experts out with their own tensor-parallel degree below tp
  // (CostOptions::expert_tensor_parallel; Layout::etp).
  bool expert_tensor_parallel = false;
};

// The default: today's Megatron-Core. apply_framework(default) leaves CostOptions{} unchanged.
inline constexpr const char* kDefaultFramework = "megatron-core";

// Every preset, in table order (the default first).
const std::vector<FrameworkPreset>& framework_presets();
std::vector<std::string> framework_names();

// The preset named `name`. An unknown name is a Diagnostic at `where` for `field`:
// "must be one of megatron-core|nemo|... (did you mean 'nemo'?)".
Result<FrameworkPreset> find_framework(const std::string& name, const SourceLocation& where = {},
                                       const std::string& field = "framework");

// Sets the preset's fields of `o` (and o.framework to its name); other fields are untouched.
void apply_framework(const FrameworkPreset& f, CostOptions& o);

// The launcher whose configuration `meshplan export --format` writes for the framework, by its
// --format name (megatron, nemo2, deepspeed, torchtitan-toml), or nullptr when meshplan exports
// none for it (Megatron-LM and DeepSpeed of 2021, Megatron-DeepSpeed, generic FSDP2, Composer).
// `plan --framework X` ranks only layouts this launcher runs (issue 14).
const char* framework_launcher(const std::string& framework);

// The dtype a job accumulates and reduces gradients in, where it departs from its framework's
// default (FrameworkPreset::grad_bytes_per_param): Megatron-LM --grad-reduce-in-bf16, NeMo's
// distributed_fused_adam `grad_sync_dtype` (Apex DistributedFusedAdam keeps its contiguous
// gradient buffer in that dtype), PyTorch FSDP MixedPrecisionPolicy(reduce_dtype=...).
// It sizes the gradient buffer and the data-parallel reduction alike.
std::vector<std::string> grad_reduce_dtypes();  // bf16, fp16, fp32

// Sets o.memory.grad_bytes_per_param and o.grad_reduce_dtype for `dtype`; "" leaves `o` as the
// preset set it. An unknown dtype is a Diagnostic at `where` for `field`.
Result<bool> apply_grad_reduce_dtype(const std::string& dtype, CostOptions& o,
                                     const SourceLocation& where = {},
                                     const std::string& field = "grad_reduce_dtype");

}  // namespace meshplan
