#include "cli/cli_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli/option_checks.h"
#include "core/executable_dir.h"
#include "core/model_limits.h"
#include "launchers/launcher_export.h"
#include "planner/framework_preset.h"
#include "planner/profile_lookup.h"
#include "planner/scenario.h"

namespace meshplan::cli {

void add_input_options(CLI::App* sub, InputOptions& in, bool with_layout) {
  sub->add_option("--model", in.model_path,
                  "model YAML (models/*.yaml) or Hugging Face config.json")
      ->required();
  sub->add_option("--cluster", in.cluster_path, "cluster YAML (topologies/*.yaml)")->required();
  sub->add_option("--seq-len", in.seq_len,
                  "tokens per sequence (default: the model's training.seq_len)")
      ->check(integer_range(1, kMaxSeqLen));
  sub->add_option("--global-batch", in.global_batch,
                  "sequences per optimizer step (default: the model's training.global_batch)")
      ->check(integer_range(1, kMaxGlobalBatch));
  sub->add_option("--precision", in.precision,
                  "bf16 | fp8: the GEMMs' precision (default: the model's training.precision)")
      ->check(CLI::IsMember({"bf16", "fp8"}));
  sub->add_option("--gpus", in.gpus, "use this many of the cluster's GPUs (default: all)")
      ->check(integer_range(1, kMaxClusterGpus));
  add_profile_dir_option(sub, in);
  if (with_layout) {
    sub->add_option("--layout", in.layout_text,
                    "e.g. tp=8,pp=4,zero=1,mbs=1,recompute=selective (dp fills the rest)")
        ->required();
  }
}

void add_profile_dir_option(CLI::App* sub, InputOptions& in) {
  sub->add_option("--profile-dir", in.profile_dir,
                  "folder searched first for the profile the cluster names (then "
                  "$MESHPLAN_DATA/profiles, ../profiles beside the cluster file, the installed "
                  "and the source tree's profiles/)")
      ->check(CLI::ExistingDirectory);
}

ProfileSearchPath profile_search_path(const std::string& profile_dir) {
  namespace fs = std::filesystem;
  ProfileSearchPath search;
  if (!profile_dir.empty()) search.first.push_back(profile_dir);
  if (const char* data = std::getenv("MESHPLAN_DATA"); data != nullptr && *data != '\0')
    search.first.push_back((fs::path(data) / "profiles").string());
  if (const fs::path bin = executable_dir(); !bin.empty())
    search.last.push_back((installed_data_dir(bin) / "profiles").string());
  search.last.push_back(std::string(MESHPLAN_SOURCE_DIR) + "/profiles");
  return search;
}

void add_cost_options(CLI::App* sub, InputOptions& in, CostOptions& cost) {
  sub->add_option(
      "--profile", in.profile_path,
      "calibration profile YAML (default: the cluster's profile, else built-in defaults)");
  sub->add_option("--framework", in.framework,
                  fmt::format("training framework whose overlap and gradient rules to model: {} "
                              "(default: {})",
                              fmt::join(framework_names(), " | "), kDefaultFramework));
  add_job_options(sub, in, cost);
  sub->add_flag("--causal-attention-flops", cost.flops.causal_attention,
                "count attention FLOPs for the causal half only, as Megatron-LM logs them since "
                "8873b55d (2025-03) (default: full, as PaLM and Megatron-LM before it)");
}

void add_job_options(CLI::App* sub, InputOptions& in, CostOptions& cost) {
  sub->add_option("--grad-reduce-dtype", in.grad_reduce_dtype,
                  fmt::format("dtype gradients are accumulated and reduced in, where the job "
                              "departs from its framework's default: {} (Megatron-LM "
                              "--grad-reduce-in-bf16, NeMo grad_sync_dtype, FSDP reduce_dtype)",
                              fmt::join(grad_reduce_dtypes(), " | ")));
  sub->add_flag(
      "--fp8-params", cost.memory.fp8_params,
      "FP8 training stores the linear layers' weights in FP8 (Megatron-LM "
      "--fp8-param-gather, NeMo fp8_params, torchtitan enable_fsdp_float8_all_gather): no BF16 "
      "copy beside the cached FP8 weights, and ZeRO gathers them in FP8");
}

void add_launcher_option(CLI::App* sub, InputOptions& in) {
  sub->add_flag("--any-launcher", in.any_launcher,
                "also rank layouts the framework's launcher cannot run (by default a framework "
                "with an export format ranks only layouts its export accepts)");
}

SearchOptions::LauncherCheck launcher_check(const CostOptions& cost, const InputOptions& in) {
  const char* name = framework_launcher(cost.framework);
  if (in.any_launcher || !name) return {};
  const Launcher launcher = *parse_launcher(name);
  return {launcher_title(launcher),
          [launcher, job = cost.job()](const ModelSpec& model, const TrainingSpec& training,
                                       const Layout& layout) {
            return launcher_refuses(launcher, model, training, layout, job);
          },
          [launcher, job = cost.job()](const ModelSpec& model, const TrainingSpec& training,
                                       Layout& layout, const std::array<bool, 4>& zeros,
                                       std::array<const char*, 4>& out) {
            launcher_refuses_by_zero(launcher, model, training, layout, zeros, out, job);
          },
          /*counts_alike=*/true};
}

void add_tokens_option(CLI::App* sub, double& tokens) {
  sub->add_option("--tokens", tokens,
                  "token budget, e.g. 15e12: also print the time and GPU-hours to train it")
      ->check(finite_number(1, 1e18));
}

void add_format_option(CLI::App* sub, std::string& format,
                       const std::vector<std::string>& choices) {
  sub->add_option("--format", format, "output format")->check(CLI::IsMember(choices));
}

std::string framework_line(const CostOptions& cost) {
  Result<FrameworkPreset> f = find_framework(cost.framework);
  return fmt::format(
      "framework: {}{}{}{}\n", cost.framework, f ? std::string(" — ") + f->description : "",
      cost.grad_reduce_dtype.empty() ? "" : "; gradients reduced in " + cost.grad_reduce_dtype,
      cost.memory.fp8_params ? "; FP8 parameters when training in FP8" : "");
}

std::string mtp_line(const ModelSpec& model) {
  if (model.mtp_layers == 0) return "";
  return fmt::format(
      "mtp: trains {} multi-token-prediction module{} (mtp_layers) on the last pipeline stage, "
      "each a layer with its own pass through the LM head and loss\n",
      model.mtp_layers, model.mtp_layers > 1 ? "s" : "");
}

std::string closing_lines(const CostModel& model) {
  return framework_line(model.options()) + mtp_line(model.model()) +
         moe_caution_line(model.model());
}

std::string moe_caution_line(const ModelSpec& model) {
  if (!model.moe) return "";
  return "caution: MoE training times are not validated to the dense models' standard: meshplan's "
         "errors on the published MoE runs of tests/data/published_runs_moe.yaml are several "
         "times larger, most of them too fast (README, `meshplan validate`); compare MoE layouts "
         "with care\n";
}

void add_framework_json(nlohmann::ordered_json& j, const CostOptions& cost) {
  j["framework"] = cost.framework;
  if (!cost.grad_reduce_dtype.empty()) j["grad_reduce_dtype"] = cost.grad_reduce_dtype;
  if (cost.memory.fp8_params) j["fp8_params"] = true;
}

int print_errors(const std::vector<Diagnostic>& errors) {
  std::fputs(format_diagnostics(errors).c_str(), stderr);
  return kExitBadInput;
}

int write_report_files(const std::vector<ReportFile>& files, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return print_errors(
        {Diagnostic{{dir, 0, 0, ""}, "", "", "cannot create the report folder: " + ec.message()}});
  for (const ReportFile& f : files) {
    const std::filesystem::path path = std::filesystem::path(dir) / f.name;
    errno = 0;
    std::ofstream out(path, std::ios::binary);
    out << f.content;
    out.flush();
    if (!out) {
      const int err = errno;
      return print_errors({Diagnostic{{path.string(), 0, 0, ""},
                                      "",
                                      "",
                                      fmt::format("cannot write the report file: {}",
                                                  err ? std::strerror(err) : "write failed")}});
    }
  }
  return 0;
}

namespace {

// On stderr, so that output stays the same: what a --profile merged over the cluster's profile
// took from each file, and why a profile is suspect for this cluster.
void print_profile_notes(const InputOptions& in, const Inputs& inputs,
                         const std::optional<CalibrationProfile>& profile_override) {
  if (!in.profile_path.empty())
    for (const std::string& source : inputs.profile.provenance.sources)
      if (source.rfind("merged: ", 0) == 0)
        std::fprintf(stderr, "profile: %s\n", source.substr(8).c_str());
  std::vector<std::string> warnings = profile_warnings(inputs.profile, inputs.cluster);
  // Merged over the cluster's profile, an imported file's fits on levels the cluster lacks
  // leave the merged profile's other levels in use: ask the file alone.
  if (profile_override) {
    if (std::optional<std::string> w =
            unused_levels_warning(*profile_override, inputs.cluster, "those fits are not used"))
      if (std::find(warnings.begin(), warnings.end(), *w) == warnings.end()) warnings.push_back(*w);
  }
  for (const std::string& warning : warnings)
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
}

}  // namespace

std::optional<Inputs> load_inputs(const InputOptions& in, bool with_layout) {
  ScenarioRequest request;
  request.model_path = in.model_path;
  request.cluster_path = in.cluster_path;
  request.seq_len = in.seq_len;
  request.global_batch = in.global_batch;
  request.precision = in.precision;
  request.gpus = in.gpus;
  request.gpus_where = SourceLocation{"--gpus", 0, 0, ""};
  // Resolved for every subcommand, so a typo in the cluster's `profile:` is an error even where
  // the profile is not used (memory, export).
  request.with_profile = true;
  request.profile_path = in.profile_path;
  request.profile_search = profile_search_path(in.profile_dir);
  Result<Scenario> scenario = load_scenario(request);
  if (!scenario) {
    print_errors(scenario.errors());
    return std::nullopt;
  }
  Inputs out{scenario->model, scenario->cluster, scenario->training,
             Layout{},        scenario->gpus,    scenario->profile};
  print_profile_notes(in, out, scenario->profile_override);
  if (!with_layout) return out;
  Result<Layout> layout = parse_layout(in.layout_text);
  if (!layout) {
    print_errors(layout.errors());
    return std::nullopt;
  }
  out.layout = layout.value();
  std::vector<Diagnostic> errors = check_layout(out.layout, out.model, out.gpus, out.training);
  if (errors.empty()) errors = check_layout_on_cluster(out.layout, out.cluster);
  if (out.layout.offloads() && !out.cluster.host.known()) {
    errors.push_back(Diagnostic{{"--layout", 0, 0, ""},
                                out.layout.offload != Offload::none ? "offload" : "act_offload",
                                out.layout.offload != Offload::none
                                    ? to_string(out.layout.offload)
                                    : std::to_string(out.layout.act_offload),
                                fmt::format("cluster '{}' describes no host (its GPU has no "
                                            "built-in DGX host; add host: memory_GiB, "
                                            "memory_GBps, pcie_GBps, nvme_TB, nvme_GBps)",
                                            out.cluster.name)});
  }
  locate_in_layout(errors, in.layout_text);
  if (!errors.empty()) {
    print_errors(errors);
    return std::nullopt;
  }
  return out;
}

std::optional<Planning> load_planning(const InputOptions& in, const CostOptions& cost,
                                      bool with_layout) {
  std::optional<Inputs> inputs = load_inputs(in, with_layout);
  if (!inputs) return std::nullopt;
  const std::string name = in.framework.empty() ? kDefaultFramework : in.framework;
  Result<FrameworkPreset> framework = find_framework(name, SourceLocation{"--framework", 0, 0, ""});
  if (!framework) {
    print_errors(framework.errors());
    return std::nullopt;
  }
  CostOptions options = cost;
  apply_framework(framework.value(), options);
  Result<bool> grads = apply_grad_reduce_dtype(in.grad_reduce_dtype, options,
                                               SourceLocation{"--grad-reduce-dtype", 0, 0, ""});
  if (!grads) {
    print_errors(grads.errors());
    return std::nullopt;
  }
  auto model = std::make_unique<CostModel>(inputs->model, inputs->cluster, inputs->profile,
                                           inputs->training, options);
  return Planning{std::move(inputs.value()), std::move(model)};
}

}  // namespace meshplan::cli
