// What the subcommands share: the --model/--cluster/--layout options, loading them with every
// error printed as file:line:col diagnostics, and writing output.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/diagnostic.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "core/profile.h"
#include "planner/cost_model.h"
#include "planner/layout_search.h"
#include "planner/planner_options.h"
#include "planner/profile_lookup.h"
#include "reports/markdown_report.h"

namespace meshplan::cli {

constexpr int kExitBadInput = 2;

struct InputOptions {
  std::string model_path, cluster_path, layout_text, profile_path;
  std::string profile_dir;        // --profile-dir: searched first for the cluster's profile: name
  int64_t seq_len = 0;            // 0: the model's training.seq_len
  int64_t global_batch = 0;       // 0: the model's training.global_batch
  int64_t gpus = 0;               // 0: every GPU of the cluster
  std::string precision;          // bf16 | fp8; "": the model's training.precision
  std::string framework;          // "": the default preset (megatron-core)
  std::string grad_reduce_dtype;  // "": the framework's (apply_grad_reduce_dtype)
  std::string format = "table";
  bool any_launcher = false;  // --any-launcher: rank layouts the framework's launcher refuses
};

// Adds --model, --cluster, --seq-len, --global-batch, --precision, --gpus, --profile-dir (and
// --layout when `with_layout`).
void add_input_options(CLI::App* sub, InputOptions& in, bool with_layout);
// Adds --profile-dir.
void add_profile_dir_option(CLI::App* sub, InputOptions& in);
// Where a cluster's `profile: NAME` is looked for: --profile-dir, $MESHPLAN_DATA/profiles, the
// profiles/ folder beside the cluster's folder, the installed <prefix>/share/meshplan/profiles
// (beside the executable's bin/), then the source tree's profiles/.
ProfileSearchPath profile_search_path(const std::string& profile_dir);
// Adds --profile, --framework, the job options and --causal-attention-flops.
void add_cost_options(CLI::App* sub, InputOptions& in, CostOptions& cost);
// Adds the job options both priced and exported (JobSettings): --grad-reduce-dtype, --fp8-params.
void add_job_options(CLI::App* sub, InputOptions& in, CostOptions& cost);
// Adds --any-launcher (searches: plan, report, sweep).
void add_launcher_option(CLI::App* sub, InputOptions& in);
// Adds --tokens (a token budget; estimate and plan then print the time to train it).
void add_tokens_option(CLI::App* sub, double& tokens);
// Adds --format with the given choices.
void add_format_option(CLI::App* sub, std::string& format, const std::vector<std::string>& choices);

struct Inputs {
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  Layout layout;  // checked and resolved when a layout was requested
  int64_t gpus = 0;
  CalibrationProfile profile;  // --profile's, else the cluster's, else the defaults
};

// Loads and checks everything; on failure prints the diagnostics to stderr and returns nullopt.
std::optional<Inputs> load_inputs(const InputOptions& in, bool with_layout);

// The inputs and a cost model on them (the cluster's or --profile's calibration profile), with
// the --framework preset applied to the cost options.
struct Planning {
  Inputs inputs;
  std::unique_ptr<CostModel> model;
};
// Loads inputs and profile; on failure prints the diagnostics and returns nullopt.
std::optional<Planning> load_planning(const InputOptions& in, const CostOptions& cost,
                                      bool with_layout);

// The launcher check of a search (SearchOptions::launcher): the framework's launcher
// (framework_launcher), so that `plan --framework X` ranks only layouts X's export accepts;
// none with --any-launcher or for a framework meshplan exports nothing for.
SearchOptions::LauncherCheck launcher_check(const CostOptions& cost, const InputOptions& in);

// "framework: NAME — description" for text output (estimate, plan).
std::string framework_line(const CostOptions& cost);
// The same for JSON output: `framework`, and `grad_reduce_dtype` / `fp8_params` where the job
// set them.
void add_framework_json(nlohmann::ordered_json& j, const CostOptions& cost);
// For a model with routed experts, the caution that MoE training times are not validated to the
// dense models' standard (tests/data/published_runs_moe.yaml: errors several times the dense
// sets', most of them optimistic); "" for a dense model.
std::string moe_caution_line(const ModelSpec& model);
// For a model with multi-token-prediction modules (ModelSpec::mtp_layers), the line saying they
// are trained, on the last pipeline stage; "" without.
std::string mtp_line(const ModelSpec& model);
// The lines closing estimate's, plan's and sweep's text: framework_line, mtp_line and
// moe_caution_line for the cost model's options and model.
std::string closing_lines(const CostModel& model);

// Writes each file under `dir` (created when missing); on failure prints the error and returns
// kExitBadInput, else 0.
int write_report_files(const std::vector<ReportFile>& files, const std::string& dir);

// Prints diagnostics to stderr; returns kExitBadInput.
int print_errors(const std::vector<Diagnostic>& errors);

}  // namespace meshplan::cli
