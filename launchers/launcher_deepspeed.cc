// DeepSpeed JSON config, checked against DeepSpeed 0.16.5 (commit 38327e07f6cd; the keys and
// their sources: tests/data/launchers/deepspeed-0.16.5-config-keys.txt). DeepSpeed's batch
// identity: train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps ×
// data-parallel world size. Its pipeline engine runs its own 1F1B schedule (TrainSchedule) and
// supports ZeRO-0/1 only; the stage count comes from PipelineModule(num_stages=pp) in model
// code (the config's pipeline.stages/partition are parsed but never read, so not emitted).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "launchers/launcher_export.h"

namespace meshplan {

void deepspeed_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                     const Layout& layout, const JobSettings& job) {
  if (model.mtp_layers > 0)
    out.other(
        "mtp_layers", [&] { return std::to_string(model.mtp_layers); },
        "Megatron-DeepSpeed, whose model the config trains, has no multi-token "
        "prediction; use Megatron-LM or NeMo 2");
  if (job.fp8_params_in(training.precision))
    out.other("fp8_params", "true",
              "its ZeRO stores and gathers 16-bit parameters (Transformer Engine's FP8 runs "
              "inside the model); train without --fp8-params");
  if (!job.grad_reduce_dtype.empty())
    out.other("grad_reduce_dtype", job.grad_reduce_dtype,
              "meshplan writes DeepSpeed's default gradient dtype only; leave "
              "--grad-reduce-dtype unset");
  if (layout.cp > 1)
    out.field("cp", layout.cp_kind == CpKind::a2a
                        ? "Ulysses (cp_kind=a2a) is set in model code (Megatron-DeepSpeed "
                          "--ds-sequence-parallel-size), not in the JSON config; use cp=1"
                        : "the config has no context parallelism; use cp=1");
  if (layout.ep > 1)
    out.field("ep",
              "expert parallelism is set in model code (deepspeed.moe ep_size), not in the JSON "
              "config");
  if (layout.recompute_modules != kDefaultRecomputeModules)
    out.field("recompute_modules",
              "its activation checkpointing recomputes whole layers; modules are not exported");
  if (layout.folds_experts())
    out.field("etp",
              "DeepSpeed's MoE carves expert groups from the data-parallel ranks only "
              "(deepspeed/utils/groups.py); leave etp at tp");
  if (layout.tp > 1 && layout.sp)
    out.field("sp", "AutoTP has no Megatron-style sequence parallelism; use sp=false");
  if (layout.tp > 1 && layout.zero == 3)
    out.field("zero",
              "AutoTP (tensor_parallel.autotp_size) with ZeRO stage 3 fails the engine's "
              "assertion (zero stage <= 2, runtime/engine.py); use zero=2 or tp=1");
  if (layout.tp_overlap) out.field("tp_overlap", "AutoTP does not overlap TP communication");
  if (layout.pp > 1 && layout.zero >= 2)
    out.field("zero", "the pipeline engine supports ZeRO stages 0 and 1 only");
  if (layout.pp > 1 && layout.schedule != Schedule::one_f_one_b)
    out.field("schedule", "the pipeline engine runs its own 1F1B schedule only");
  if (layout.shard > 0)
    out.field("shard",
              "ZeRO shards over the whole data-parallel group (MiCS, its hybrid ZeRO-3, is not "
              "exported); use shard=0");
  if (layout.act_offload > 0)
    out.field("act_offload",
              "its activation offload (cpu_checkpointing) moves only checkpointed layer inputs; "
              "use act_offload=0");
  if (training.precision == Precision::fp8)
    out.other("precision", "fp8",
              "FP8 comes from Transformer Engine in model code, not the config");
}

std::string render_deepspeed(const ModelSpec& /*model*/, const TrainingSpec& training,
                             const Layout& layout, const JobSettings& /*job*/) {
  nlohmann::ordered_json j;
  j["train_batch_size"] = training.global_batch;
  j["train_micro_batch_size_per_gpu"] = layout.mbs;
  j["gradient_accumulation_steps"] = training.global_batch / (layout.mbs * layout.dp);
  j["zero_optimization"] = {
      {"stage", layout.zero}, {"overlap_comm", true}, {"contiguous_gradients", true}};
  if (layout.offload != Offload::none) {
    j["zero_optimization"]["offload_optimizer"] = {{"device", to_string(layout.offload)},
                                                   {"pin_memory", true}};
    if (layout.offload == Offload::nvme)
      j["zero_optimization"]["offload_optimizer"]["nvme_path"] = "/local_nvme";
  }
  j["bf16"] = {{"enabled", true}};
  if (layout.tp > 1) j["tensor_parallel"] = {{"autotp_size", layout.tp}};
  if (layout.recompute != Recompute::none || layout.recompute_layers > 0) {
    j["activation_checkpointing"] = {{"partition_activations", layout.tp > 1},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false},
                                     {"synchronize_checkpoint_boundary", false}};
  }
  // Full recomputation: checkpoint every pipeline layer (interval 1), or every N-th with
  // uniform groups of N (recompute_layers). 0 would mean "off", which is the default, so
  // nothing is written for other recompute settings.
  if (layout.pp > 1 && layout.recompute == Recompute::full)
    j["pipeline"] = {
        {"activation_checkpoint_interval", std::max<int64_t>(1, layout.recompute_layers)}};
  return j.dump(2) + "\n";
}

}  // namespace meshplan
