// torchtitan command-line overrides (`--parallelism.*`, `--activation_checkpoint.*`,
// `--training.*`). Data parallelism is FSDP2: ZeRO-3 is sharding with resharding after forward,
// ZeRO-2 sharding without it (fsdp_reshard_after_forward never), ZeRO-0 replication (DDP);
// ZeRO-1 (optimizer states only) has no FSDP2 equivalent.
#include <fmt/format.h>

#include "launchers/launcher_args.h"
#include "launchers/launcher_export.h"

namespace meshplan {
namespace {

// torchtitan's --parallelism.pipeline_parallel_schedule names.
const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::gpipe:
      return "GPipe";
    case Schedule::one_f_one_b:
      return "1F1B";
    case Schedule::interleaved:
      return "Interleaved1F1B";
    case Schedule::zb_h1:
      return "InterleavedZeroBubble";
  }
  return "1F1B";
}

std::vector<Diagnostic> torchtitan_refusals(const Layout& l, const ModelSpec& m) {
  const Launcher tt = Launcher::torchtitan;
  std::vector<Diagnostic> out;
  if (l.zero == 1)
    out.push_back(launcher_refusal(tt, "zero", "1",
                                   "FSDP2 shards parameters and gradients with the optimizer "
                                   "states; use zero=0 (replicate), 2 or 3"));
  if (l.tp > 1 && !l.sp)
    out.push_back(
        launcher_refusal(tt, "sp", "false", "its tensor parallel plan always shards the sequence"));
  if (l.uneven && m.layers % (l.pp * l.vpp) != 0)
    out.push_back(
        launcher_refusal(tt, "uneven", "true", "its pipeline splits layers evenly over stages"));
  if (l.recompute_layers > 0 && l.recompute != Recompute::full)
    out.push_back(
        launcher_refusal(tt, "recompute_layers", std::to_string(l.recompute_layers),
                         "activation_checkpoint.mode is per model: none, selective or full"));
  if (l.pp > 1 && l.schedule == Schedule::zb_h1 && l.vpp < 2)
    out.push_back(
        launcher_refusal(tt, "schedule", "zb-h1",
                         "InterleavedZeroBubble needs at least 2 stages per rank (vpp >= 2)"));
  return out;
}

}  // namespace

Result<std::string> export_torchtitan(const ModelSpec& m, const TrainingSpec& t, const Layout& l) {
  std::vector<Diagnostic> refused = torchtitan_refusals(l, m);
  if (!refused.empty()) return refused;
  LauncherArgs a;
  a.arg("--parallelism.data_parallel_replicate_degree", l.zero == 0 ? l.dp : 1);
  a.arg("--parallelism.data_parallel_shard_degree", l.zero == 0 ? 1 : l.dp);
  if (l.zero == 2) a.arg("--parallelism.fsdp_reshard_after_forward", "never");
  a.arg("--parallelism.tensor_parallel_degree", l.tp);
  if (l.tp_overlap) a.flag("--parallelism.enable_async_tensor_parallel");
  a.arg("--parallelism.pipeline_parallel_degree", l.pp);
  if (l.pp > 1) {
    a.arg("--parallelism.pipeline_parallel_schedule", schedule_name(l.schedule));
    a.arg("--parallelism.pipeline_parallel_microbatch_size", l.mbs);
    if (l.vpp > 1)
      a.arg("--parallelism.pipeline_parallel_layers_per_stage", m.layers / (l.pp * l.vpp));
  }
  a.arg("--parallelism.context_parallel_degree", l.cp);
  a.arg("--parallelism.expert_parallel_degree", l.ep);
  a.arg("--activation_checkpoint.mode", to_string(l.recompute));
  if (l.recompute == Recompute::selective)
    a.arg("--activation_checkpoint.selective_ac_option", "op");
  // Per data-parallel rank: the pipeline splits its local batch into micro-batches; without a
  // pipeline, gradient accumulation repeats local batches of one micro-batch.
  a.arg("--training.local_batch_size", l.pp > 1 ? t.global_batch / l.dp : l.mbs);
  a.arg("--training.global_batch_size", t.global_batch);
  a.arg("--training.seq_len", t.seq_len);
  if (t.precision == Precision::fp8) a.arg("--model.converters", "float8");
  return a.render({fmt::format("torchtitan overrides for {} ({} sequences x {} tokens)", m.name,
                               t.global_batch, t.seq_len),
                   "layout " + to_string(l)});
}

}  // namespace meshplan
