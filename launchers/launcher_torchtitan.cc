// torchtitan command-line overrides (`--parallelism.*`, `--activation_checkpoint.*`,
// `--training.*`) for torchtitan v0.2.2 (commit 73a0e6979dd1; torchtitan/config/job_config.py).
// Data parallelism is FSDP2: ZeRO-3 is sharding with resharding after forward, ZeRO-2 sharding
// without it (fsdp_reshard_after_forward never), ZeRO-0 replication (DDP); ZeRO-1 (optimizer
// states only) has no FSDP2 equivalent. The "default" reshard policy turns resharding off when
// pipelining (models/llama3/infra/parallelize.py: reshard_after_forward = not pp_enabled), so
// ZeRO-3 with pp > 1 says "always".
//
// Pipeline split (distributed/pipeline_parallel.py, pipeline_llm and
// generate_llm_fqn_per_model_part): with layers_per_stage L the stage count is
// ceil((layers + first_less + last_less) / L), which must be a multiple of pp; the defaults
// first/last_stage_less_layers = 1 make it ceil((80 + 2) / 4) = 21 for 80 layers at pp 4 vpp 5,
// and give 1F1B the 20/21/20/19 split. meshplan writes the split it priced (chunk_layers): an
// even split as both 0 and L = layers / (pp·vpp), exactly pp·vpp stages of L layers; an uneven
// one (L = ceil(layers / (pp·vpp)), a deficit of 1 or 2) as last_less 1, and first_less 1 when
// the deficit is 2, so the last stage, then the first, hold one layer fewer. torchtitan lowers no
// other stage by those options; a larger deficit (DeepSeek-V3's 61 layers over 16 stages) names
// every stage's modules in module_fqns_per_model_part, which the job file takes and the command
// line does not (tyro reads no variable-length nested list; job_config.py list[list[str]]).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cassert>

#include "core/pipeline_placement.h"
#include "launchers/launcher_args.h"
#include "launchers/launcher_export.h"

namespace meshplan {
namespace {

// Layers the priced split lacks of pp·vpp equal stages (chunk_layers takes them from the last
// stage, then the first, ...).
int64_t split_deficit(const ModelSpec& model, const Layout& layout) {
  return chunk_deficit(model.layers, layout.pp * layout.vpp);
}

// torchtitan's --parallelism.pipeline_parallel_schedule names.
const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::gpipe:
      return "GPipe";
    case Schedule::one_f_one_b:
      return "1F1B";
    case Schedule::interleaved:
      return "Interleaved1F1B";
    case Schedule::dualpipev:
      return "DualPipeV";  // torch.distributed.pipelining ScheduleDualPipeV
    case Schedule::zb_v:
      return "ZBVZeroBubble";  // ScheduleZBVZeroBubble (torchtitan places its stages in a V)
    case Schedule::zb_interleaved:
      return "InterleavedZeroBubble";  // ScheduleInterleavedZeroBubble
    case Schedule::zb_h1:
    case Schedule::zb_h2:
    case Schedule::dualpipe:
      break;  // refused (torchtitan_refusals)
  }
  return "1F1B";
}

// Data-parallel replicas of the sharded states: all dp ranks without sharding, dp·cp/shard with
// hybrid sharding, else 1.
int64_t replicas(const Layout& layout) {
  if (layout.zero == 0) return layout.dp;
  return layout.shard > 0 ? layout.dp * layout.cp / layout.shard : 1;
}

}  // namespace

void torchtitan_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                      const Layout& layout, const JobSettings& job) {
  // torchtitan 0.2.2 has no multi-token prediction; its later DeepSeek-V3 sets it in the model
  // registry (model_registry(..., num_mtp_layers=N), models/deepseek_v3/MTP.md of 2026-08-11),
  // not in a job option.
  if (model.mtp_layers > 0)
    out.other(
        "mtp_layers", [&] { return std::to_string(model.mtp_layers); },
        "torchtitan 0.2.2 trains no multi-token-prediction modules; use Megatron-LM or "
        "NeMo 2");
  // quantize.linear.float8.enable_fsdp_float8_all_gather: FSDP2 gathers Float8Linear weights
  // in float8; DDP (zero=0) gathers none.
  if (job.fp8_params_in(training.precision) && layout.zero == 0)
    out.field("zero",
              "its FP8 parameters are FSDP's float8 all-gather "
              "(enable_fsdp_float8_all_gather); use zero=2 or 3");
  if (!job.grad_reduce_dtype.empty() && job.grad_reduce_dtype != "fp32")
    out.other("grad_reduce_dtype", job.grad_reduce_dtype,
              "v0.2.2 reduces gradients in float32 only (training.mixed_precision_reduce, "
              "config/job_config.py)");
  if (layout.folds_experts() && layout.expert_tp() > 1)
    out.field("etp",
              "torchtitan's ParallelDims takes expert_tensor_parallel_degree 1 or tp only "
              "(torchtitan/distributed/parallel_dims.py); use etp=1 or leave it at tp");
  if (layout.folds_experts() && layout.expert_tp() == 1 && layout.ep % (layout.cp * layout.tp) != 0)
    out.field("ep",
              fmt::format("with etp=1 torchtitan's expert parallelism borrows all of cp and tp, "
                          "so ep must be a multiple of cp·tp ({}) (parallel_dims.py)",
                          layout.cp * layout.tp));
  if (layout.recompute_modules != kDefaultRecomputeModules)
    out.field("recompute_modules",
              "its selective activation checkpointing picks ops by a fixed policy "
              "(selective_ac_option), not modules; leave recompute_modules at core_attn");
  if (layout.zero == 1)
    out.field("zero",
              "FSDP2 shards parameters and gradients with the optimizer states; use zero=0 "
              "(replicate), 2 or 3");
  if (layout.tp > 1 && !layout.sp)
    out.field("sp", "its tensor parallel plan always shards the sequence");
  if (out.launcher() == Launcher::torchtitan && split_deficit(model, layout) > 2)
    out.field("uneven", [&] {
      return fmt::format(
          "its options take one layer from the last stage and one from the first only "
          "(pipeline_parallel_last/first_stage_less_layers), and {} layers over {} stages "
          "take {}; --format torchtitan-toml names each stage's layers "
          "(module_fqns_per_model_part, which the command line cannot set)",
          model.layers, layout.pp * layout.vpp, split_deficit(model, layout));
    });
  if (layout.recompute_layers > 1 && layout.recompute == Recompute::full)
    out.field("recompute_layers",
              "its full activation checkpointing wraps every layer; groups of layers (the "
              "uniform method) are not expressible");
  if (layout.recompute_layers > 0 && layout.recompute != Recompute::full)
    out.field("recompute_layers",
              "activation_checkpoint.mode is per model: none, selective or full");
  if (layout.shard > 0 && (layout.shard % layout.cp != 0 || layout.dp % replicas(layout) != 0))
    out.field("shard",
              "FSDP shards over data_parallel_shard_degree × cp ranks; shard must be a multiple "
              "of cp");
  if (layout.cp > 1 && (layout.cp_kind == CpKind::a2a || layout.cp_kind == CpKind::hybrid))
    out.field("cp_kind",
              "its context parallelism exchanges K/V shards (ring or all-gather), not heads; use "
              "cp_kind=ring or allgather");
  if (layout.dispatch != Dispatch::alltoall)
    out.field("dispatch",
              "its expert parallelism dispatches tokens by all-to-all; use dispatch=alltoall");
  if (layout.offloads())
    out.field(layout.offload != Offload::none ? "offload" : "act_offload",
              "its CPU offload (FSDP2 CPUOffloadPolicy) moves parameters and gradients with the "
              "optimizer states, which meshplan does not model; use offload=none, act_offload=0");
  if (layout.ep_overlap)
    out.field("ep_overlap",
              "it does not overlap MoE all-to-alls with another micro-batch; use "
              "ep_overlap=false");
  if (layout.pp > 1 && (layout.schedule == Schedule::zb_h1 || layout.schedule == Schedule::zb_h2))
    out.field("schedule", [&] {
      return fmt::format(
          "its zero-bubble schedules (InterleavedZeroBubble, ZBVZeroBubble) run 2 or more stages "
          "per rank; {} runs one; use schedule=zb-v or dualpipev with vpp=2, or zb-interleaved "
          "with vpp >= 2",
          to_string(layout.schedule));
    });
  if (layout.pp > 1 && layout.schedule == Schedule::dualpipe)
    out.field("schedule",
              "torch.distributed.pipelining has DualPipeV, not the bidirectional DualPipe; use "
              "schedule=dualpipev with vpp=2");
}

namespace {

// One torchtitan job-config option: [section] key = value, or --section.key value.
struct TorchtitanOption {
  // list: list[str], its elements comma-separated; toml: a TOML value written as is (the job file
  // only).
  enum class Kind { integer, text, boolean, list, toml };
  const char* section;
  const char* key;
  Kind kind;
  std::string value;
};

class TorchtitanOptions {
 public:
  void integer(const char* section, const char* key, int64_t v) {
    out_.push_back({section, key, TorchtitanOption::Kind::integer, std::to_string(v)});
  }
  void text(const char* section, const char* key, std::string v) {
    out_.push_back({section, key, TorchtitanOption::Kind::text, std::move(v)});
  }
  void enable(const char* section, const char* key) {
    out_.push_back({section, key, TorchtitanOption::Kind::boolean, "true"});
  }
  void list(const char* section, const char* key, std::string v) {
    out_.push_back({section, key, TorchtitanOption::Kind::list, std::move(v)});
  }
  void toml(const char* section, const char* key, std::string v) {
    out_.push_back({section, key, TorchtitanOption::Kind::toml, std::move(v)});
  }
  std::vector<TorchtitanOption> take() { return std::move(out_); }

 private:
  std::vector<TorchtitanOption> out_;
};

// The models torchtitan v0.2.2 defines itself (torchtitan/models/<name>/__init__.py, the flavor
// tables at 73a0e6979dd1), by the shape that tells them apart. Without --model.name and
// --model.flavor torchtitan trains its default, llama3 "debugmodel".
struct TorchtitanFlavor {
  const char* name;
  const char* flavor;
  int64_t layers, hidden, experts;
};
constexpr TorchtitanFlavor kFlavors[] = {
    {"llama3", "8B", 32, 4096, 0},         {"llama3", "70B", 80, 8192, 0},
    {"llama3", "405B", 126, 16384, 0},     {"llama4", "17bx16e", 48, 5120, 16},
    {"llama4", "17bx128e", 48, 5120, 128}, {"deepseek_v3", "671B", 61, 7168, 256},
    {"qwen3", "235B-A22B", 94, 4096, 128},
};

const TorchtitanFlavor* torchtitan_flavor(const ModelSpec& model) {
  if (model.sparse_attention) return nullptr;  // DeepSeek-V3.2 is not deepseek_v3 (no DSA there)
  const int64_t experts = model.moe ? model.moe->experts : 0;
  for (const TorchtitanFlavor& f : kFlavors)
    if (f.layers == model.layers && f.hidden == model.hidden && f.experts == experts) return &f;
  return nullptr;
}

// The priced split (chunk_layers, pipeline order) as torchtitan's module names per model part: the
// embedding opens the first part, the final norm and output head close the last
// (generate_llm_fqn_per_model_part's names), one TOML array per line.
std::string module_fqns(const ModelSpec& model, const Layout& layout) {
  std::string out = "[\n";
  int64_t next = 0;
  const std::vector<int64_t> parts = chunk_layers(model.layers, layout.pp, layout.vpp);
  for (size_t c = 0; c < parts.size(); ++c) {
    std::vector<std::string> names;
    if (c == 0) names.emplace_back("\"tok_embeddings\"");
    for (int64_t i = 0; i < parts[c]; ++i) names.push_back(fmt::format("\"layers.{}\"", next++));
    if (c + 1 == parts.size()) names.insert(names.end(), {"\"norm\"", "\"output\""});
    out += fmt::format("  [{}],\n", fmt::join(names, ", "));
  }
  return out + "]";
}

// Everything the job needs for `layout`, in the order both renderings write it.
std::vector<TorchtitanOption> torchtitan_options(const ModelSpec& model,
                                                 const TrainingSpec& training, const Layout& layout,
                                                 const JobSettings& job) {
  TorchtitanOptions o;
  if (const TorchtitanFlavor* f = torchtitan_flavor(model)) {
    o.text("model", "name", f->name);
    o.text("model", "flavor", f->flavor);
  }
  const char* par = "parallelism";
  o.integer(par, "data_parallel_replicate_degree", replicas(layout));
  o.integer(par, "data_parallel_shard_degree", layout.dp / replicas(layout));
  if (layout.zero == 2) o.text(par, "fsdp_reshard_after_forward", "never");
  if (layout.zero == 3 && layout.pp > 1) o.text(par, "fsdp_reshard_after_forward", "always");
  o.integer(par, "tensor_parallel_degree", layout.tp);
  if (layout.tp_overlap) o.enable(par, "enable_async_tensor_parallel");
  o.integer(par, "pipeline_parallel_degree", layout.pp);
  if (layout.pp > 1) {
    o.text(par, "pipeline_parallel_schedule", schedule_name(layout.schedule));
    o.integer(par, "pipeline_parallel_microbatch_size", layout.mbs);
    const int64_t stages = layout.pp * layout.vpp, deficit = split_deficit(model, layout);
    if (deficit > 2) {
      o.toml(par, "module_fqns_per_model_part", module_fqns(model, layout));
    } else {
      o.integer(par, "pipeline_parallel_layers_per_stage", (model.layers + deficit) / stages);
      o.integer(par, "pipeline_parallel_first_stage_less_layers", deficit >= 2 ? 1 : 0);
      o.integer(par, "pipeline_parallel_last_stage_less_layers", deficit >= 1 ? 1 : 0);
    }
  }
  o.integer(par, "context_parallel_degree", layout.cp);
  // K/V shards rotated around the ring by all-to-all ("alltoall"), or all-gathered
  // ("allgather", torchtitan's default; job_config.py context_parallel_rotate_method).
  if (layout.cp > 1)
    o.text(par, "context_parallel_rotate_method",
           layout.cp_kind == CpKind::allgather ? "allgather" : "alltoall");
  o.integer(par, "expert_parallel_degree", layout.ep);
  // Routed experts' width is split over Layout::expert_tp; torchtitan's own default, etp = 1,
  // is named too so the job file says what was priced.
  if (model.moe && layout.tp > 1)
    o.integer(par, "expert_tensor_parallel_degree", layout.expert_tp());
  o.text("activation_checkpoint", "mode", to_string(layout.recompute));
  if (layout.recompute == Recompute::selective)
    o.text("activation_checkpoint", "selective_ac_option", "op");
  // Per data-parallel rank: the pipeline splits its local batch into micro-batches; without a
  // pipeline, gradient accumulation repeats local batches of one micro-batch.
  o.integer("training", "local_batch_size",
            layout.pp > 1 ? training.global_batch / layout.dp : layout.mbs);
  o.integer("training", "global_batch_size", training.global_batch);
  o.integer("training", "seq_len", training.seq_len);
  if (training.precision == Precision::fp8) {
    // v0.2.2 registers torchao's Float8Linear swap as "quantize.linear.float8" and the routed
    // experts' float8 grouped GEMMs as "quantize.grouped_mm.float8" (components/quantization/
    // float8.py register_model_converter; "float8" alone is no converter there). Float8Linear's
    // filter_fqns defaults to none (config/job_config.py), so the LM head ("output") is named,
    // as torchtitan's llama3 configs do and meshplan prices it: a BF16 GEMM. A list option
    // holds comma-separated elements (ConfigManager reads list[str] that way).
    o.list(
        "model", "converters",
        model.moe ? "quantize.linear.float8,quantize.grouped_mm.float8" : "quantize.linear.float8");
    o.list("quantize.linear.float8", "filter_fqns", "output");
    if (model.moe) o.list("quantize.grouped_mm.float8", "fqns", "experts");
    // FP8 parameters: FSDP2 all-gathers the linear weights in float8, with their scales computed
    // once per step for all of them (both "recommended for tensorwise scaling", job_config.py).
    if (job.fp8_params) {
      o.enable("quantize.linear.float8", "enable_fsdp_float8_all_gather");
      o.enable("quantize.linear.float8", "precompute_float8_dynamic_scale_for_fsdp");
    }
  }
  return o.take();
}

std::vector<std::string> torchtitan_header(const ModelSpec& model, const TrainingSpec& training,
                                           const Layout& layout, const char* what) {
  std::vector<std::string> out = {
      fmt::format("torchtitan {} for {} ({} sequences x {} tokens)", what, model.name,
                  training.global_batch, training.seq_len),
      "layout " + to_string(layout)};
  if (!torchtitan_flavor(model))
    out.emplace_back(
        "torchtitan v0.2.2 defines no model of this shape: add [model] name and flavor of your "
        "own model (without them it trains llama3 debugmodel)");
  return out;
}

// "a,b" → ["a", "b"]: a list option's elements as a TOML array of strings.
std::string toml_string_list(const std::string& elements) {
  std::string out = "[\"";
  for (const char c : elements) out += c == ',' ? std::string("\", \"") : std::string(1, c);
  return out + "\"]";
}

}  // namespace

std::string render_torchtitan(const ModelSpec& model, const TrainingSpec& training,
                              const Layout& layout, const JobSettings& job) {
  LauncherArgs args;
  for (const TorchtitanOption& o : torchtitan_options(model, training, layout, job)) {
    const std::string flag = fmt::format("--{}.{}", o.section, o.key);
    assert(o.kind != TorchtitanOption::Kind::toml);  // torchtitan_rules refuse it here
    if (o.kind == TorchtitanOption::Kind::boolean)
      args.flag(flag);
    else
      args.arg(flag, o.value);
  }
  return args.render(torchtitan_header(model, training, layout, "overrides"));
}

// A TOML job file (--job.config_file) of the same options, one table per section in the order
// the options come: torchtitan v0.2.2 reads TOML into the same JobConfig dataclasses
// (torchtitan/config/manager.py ConfigManager), so a key left out keeps its default, as with
// the overrides.
std::string render_torchtitan_toml(const ModelSpec& model, const TrainingSpec& training,
                                   const Layout& layout, const JobSettings& job) {
  std::string out;
  for (const std::string& line :
       torchtitan_header(model, training, layout, "v0.2.2 job file (--job.config_file)"))
    out += "# " + line + "\n";
  std::vector<std::string> sections;
  const std::vector<TorchtitanOption> options = torchtitan_options(model, training, layout, job);
  for (const TorchtitanOption& o : options)
    if (std::find(sections.begin(), sections.end(), o.section) == sections.end())
      sections.emplace_back(o.section);
  for (const std::string& section : sections) {
    out += fmt::format("\n[{}]\n", section);
    for (const TorchtitanOption& o : options) {
      if (section != o.section) continue;
      std::string value = o.value;
      if (o.kind == TorchtitanOption::Kind::text) value = "\"" + o.value + "\"";
      if (o.kind == TorchtitanOption::Kind::list) value = toml_string_list(o.value);
      out += fmt::format("{} = {}\n", o.key, value);
    }
  }
  return out;
}

}  // namespace meshplan
