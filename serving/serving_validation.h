// Predicted vs measured for published serving runs (tests/data/serving_runs.yaml): each row
// that names a shipped model, a GPU with a shipped cluster, a TP/PP layout and isl/osl is
// replayed with `meshplan serve`'s model; rows it cannot express are listed as skipped with
// the reason (no model file, disaggregated serving, no isl/osl in the source).
//
// Row → problem: model by name (Llama-3.1-8B/70B/405B → llama3-*, Mixtral-8x7B → mixtral-8x7b,
// DeepSeek-R1 → deepseek-v3: the same architecture); GPU H100 → topologies/dgx-h100-1n,
// H200 → dgx-h200-64n, A100 → selene-a100 (each with its published profile), using the row's
// GPU count; weights fp8 when the row says fp8, else BF16 (FP16 has the same bytes); KV fp8
// only when the row says so; engine vLLM when the backend says vllm, else TensorRT-LLM (every
// other source ran it); load: request_rate_qps (inf: offline), concurrency, or offline. The
// TensorRT-LLM online table ran 500 requests (its section header); the perf overview's
// offline rows use its dataset sizes and KV fraction 0.95 (its "Reproducing" section); others
// use the defaults.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "planner/profile_lookup.h"
#include "planner/profile_swaps.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

enum class ServingMetric { throughput, ttft, tpot };
// The engine limits trtllm-bench builds for a dataset (tensorrt_llm/bench/build/tuning.py,
// calc_engine_setting and finetune_setting): the requests the KV cache holds at the dataset's
// isl + osl, estimated from the memory left after the weights times the KV fraction, capped at
// 4096 and divided by pp, rounded up to a multiple of 32 (at least 64), 128 from 256 and 256
// from 1024, is max_batch_size; that batch times 1 + isl/osl, capped at 32768, rounded up to
// 256 (at least 2048), 512 from 4096 and 1024 from 8192, is max_num_tokens.
struct BenchLimits {
  int64_t max_batch = 0, max_num_tokens = 0;
};

BenchLimits trtllm_bench_limits(double kv_requests, int64_t isl, int64_t osl, int64_t pp);

const char* to_string(ServingMetric m);

struct ServingRun {
  std::string id, group, model_name;
  std::string model_file, cluster_file;  // relative to the root; empty when skipped
  std::string skip_reason;               // non-empty: not replayed
  int64_t gpus = 0;
  ServingLayout layout;
  Workload workload;
  ServingOptions options;
  double measured[3] = {0, 0, 0};  // by ServingMetric; 0: not given
};

struct ServingRunResult {
  const ServingRun* run = nullptr;
  bool moe = false;  // the run's model has routed experts
  double predicted[3] = {0, 0, 0};
  std::string error;  // a replayed row that failed (does not fit, bad layout)
};

struct ServingErrorSummary {
  // "throughput", "ttft", "tpot", "<group> <metric>", or "dense <metric>" / "moe <metric>" (the
  // runs whose model has routed experts, and the others)
  std::string name;
  int count = 0;
  double mean_abs = 0, max_abs = 0;
  // The median error, signed: the model's bias, which a heavy-tailed mean |error| hides.
  double median = 0;
};

struct ServingValidation {
  std::vector<ServingRun> runs;
  std::vector<ServingRunResult> results;  // one per run not skipped
  std::vector<ServingErrorSummary> summaries;
};

Result<std::vector<ServingRun>> load_serving_runs(const std::string& path);
// Replays every run not skipped, on `threads` threads (the results in the runs' order whatever
// the count); `root` holds models/ and topologies/, each file read once.
// `profile_swaps` (planner/profile_swaps.h): rows whose cluster names profile NAME are priced
// with profile OTHER (h200-published → h200-measured); a swap no row uses is an error.
// `search` (planner/profile_lookup.h): where profile names are looked for besides `root`'s
// profiles/ (the CLI's --profile-dir, $MESHPLAN_DATA, the installed data).
Result<ServingValidation> validate_serving(std::vector<ServingRun> runs, const std::string& root,
                                           ProfileSwaps profile_swaps = {}, int threads = 1,
                                           const ProfileSearchPath& search = {});

std::string serving_validation_table(const ServingValidation& v);
// Rows (id, group, layout, predicted and measured per metric, error) and summaries.
std::string serving_validation_json(const ServingValidation& v);

}  // namespace meshplan::serving
