// Predictions against published, measured training runs: tests/data/published_runs.yaml (a
// copy of ../shared/validation/published_runs.yaml, Megatron-LM 2021, DeepSpeed ZeRO-3, BLOOM)
// and tests/data/published_runs_modern.yaml (Megatron-Core README, LLM Foundry, NVIDIA
// dgxc-benchmarking, torchtitan, Megatron-Bridge), and tests/data/published_runs_moe.yaml
// (Megatron-Bridge's DGX H100 MoE runs). Fields a source does not publish are searched, and the
// best prediction is compared (the authors tuned their runs); each row says which fields were
// searched.
//
// A runs file holds `runs:` and optionally `frameworks:` (source → framework preset, a name or
// {framework: NAME, notes: ...}) and `models:` (name → the keys of models/*.yaml but `name`:
// MoE, MLA, windows and the rest; core/model_yaml.h). A run
// names its framework (`framework:`, else its source's, else megatron-core) and, where its
// configuration departs from the framework's gradient dtype, `grad_reduce_dtype`, and
// `fp8_params: true` where it stored FP8 weights (MemoryOptions::fp8_params); its model inline
// (2021 style: GPT-3-like defaults) or by name from `models:` (with `seq_len` on the run), its
// `precision` (bf16 | fp8), and what the source measured: hardware_tflops_per_gpu (eq. 3),
// iteration_s, tokens_per_s_per_gpu or model_tflops_per_gpu (Megatron's FLOP formula), compared
// in that order of preference; mfu_as_published is kept for reading only. Its `layout` pins what
// the source states (tp, pp, dp, cp, ep, vpp, mbs, zero, recompute, sp, schedule, tp_overlap,
// an MoE recipe's etp, ep_overlap and dispatch, and recompute_modules); the rest is searched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/result.h"
#include "planner/framework_preset.h"
#include "planner/layout_search.h"
#include "planner/model_flops_megatron.h"
#include "planner/profile_lookup.h"
#include "planner/profile_swaps.h"

namespace meshplan {

struct PublishedRun {
  SourceLocation where;  // the run's entry in its runs file
  std::string id, source, table, cluster;
  std::string framework = kDefaultFramework;  // a framework_preset.h name
  std::string grad_reduce_dtype;              // "": the framework's (apply_grad_reduce_dtype)
  bool fp8_params = false;                    // MemoryOptions::fp8_params
  int64_t gpus = 0;
  ModelSpec model;
  LayoutFix fix;
  int64_t tp_times_pp = 0;            // when only the product is published
  std::vector<std::string> searched;  // layout fields not published
  int64_t global_batch = 0;
  // What the source measured; 0: not published.
  double measured_hardware_tflops = 0;  // per GPU, eq. 3 accounting (includes recompute)
  double measured_iteration_s = 0;      // seconds per optimizer step
  double measured_tokens_per_s_per_gpu = 0;
  double measured_model_tflops = 0;  // per GPU, Megatron-LM's num_floating_point_operations
  // Which count of it the source's Megatron-LM logged (measured: model_flops, "megatron-r0.8"
  // or "megatron-causal"): planner/model_flops_megatron.h.
  MegatronFlops model_flops = MegatronFlops::r0_8;
  double mfu_as_published = 0;  // the source's own FLOP convention; informational
};

Result<std::vector<PublishedRun>> load_published_runs(const std::string& path);

// The quantity a row compares, chosen from what its source measured.
inline constexpr const char* kMetricHardwareTflops = "hardware TFLOP/s per GPU";
inline constexpr const char* kMetricStepTime = "seconds per step";
inline constexpr const char* kMetricTokens = "tokens/s per GPU";
inline constexpr const char* kMetricModelTflops = "model TFLOP/s per GPU (Megatron formula)";
inline constexpr const char* kMetricModelTflopsCausal =
    "model TFLOP/s per GPU (Megatron formula, causal attention)";

struct ValidationRow {
  std::string id, source, table, framework;
  std::string metric = kMetricHardwareTflops;
  double measured = 0, predicted = 0;  // in the metric's unit
  // Predicted throughput / measured throughput − 1: positive = optimistic. For throughput
  // metrics (predicted − measured) / measured; for seconds per step measured / predicted − 1.
  double relative_error = 0;
  std::string layout;    // the layout predicted (best over the searched fields)
  std::string searched;  // e.g. "mbs, vpp"
  bool fits = true;
};

struct ErrorSummary {
  std::string name;
  int64_t runs = 0;
  double mean_abs = 0, median_abs = 0, max_abs = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<ErrorSummary> summaries;  // per source, per source table, and "all"
};

ErrorSummary summarize_errors(const std::string& name, const std::vector<double>& relative_errors);

// `repo_root` locates topologies/ and profiles/. Cluster names map to shipped topologies:
// selene → selene-a100.yaml, jean_zay_a100 → jean-zay-a100.yaml, dgx_h100 → dgx-h100-64n.yaml,
// dgx_h200 → dgx-h200-64n.yaml, mosaic_h100 → mosaic-h100.yaml, mosaic_a100 → mosaic-a100.yaml,
// resized to the run's GPUs. Each run is predicted with its framework preset applied to
// CostOptions{}. `profile_swaps` (planner/profile_swaps.h): clusters that name profile NAME are
// priced with profile OTHER instead (OTHER.yaml along `search`), e.g. h100-published →
// h100-measured. A NAME no run's cluster uses is an error (a typo would otherwise validate the
// unswapped profile silently). `search` (planner/profile_lookup.h): where profile names are looked
// for besides `repo_root`'s profiles/ (the CLI's --profile-dir, $MESHPLAN_DATA, the installed
// data).
Result<ValidationReport> validate_runs(const std::vector<PublishedRun>& runs,
                                       const std::string& repo_root, int threads,
                                       ProfileSwaps profile_swaps = {},
                                       const ProfileSearchPath& search = {});

}  // namespace meshplan
