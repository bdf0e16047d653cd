// One serving layout evaluated: memory, step times and the request replay's latencies and
// throughput, with the SLO verdict. Pure function of its inputs.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/cluster_spec.h"
#include "core/diagnostic.h"
#include "core/model_spec.h"
#include "core/profile.h"
#include "core/result.h"
#include "serving/pool_replay_memo.h"
#include "serving/request_replay.h"
#include "serving/saturation_memo.h"
#include "serving/serving_memory.h"
#include "serving/serving_options.h"
#include "serving/step_time.h"

namespace meshplan::serving {

class EstimateMemo;  // estimate_memo.h

struct ServingProblem {
  ModelSpec model;
  ClusterSpec cluster;
  CalibrationProfile profile;
  int64_t gpus = 0;  // GPUs available (≤ the cluster's)
  Workload workload;
  ServingOptions options;
  bool record_steps = false;  // keep the replay's steps (ReplayResult::recorded) for a trace
  bool step_ops = false;      // keep the decode step op by op (ServingEstimate::decode_ops)
  // Threads a search replays its layouts on (serving_search.h); the results never depend on it.
  int threads = 1;
  // One replica's offline replays kept across a search's layouts (none: each asked afresh).
  std::shared_ptr<SaturationMemo> saturation_memo = nullptr;
  // Disaggregated replays kept across a search's pool sizes (none: each replayed afresh), and
  // whether a search keeps them (pool_replay_memo.h: the same output either way).
  std::shared_ptr<PoolReplayMemo> pool_replay_memo = nullptr;
  bool reuse_pool_replays = true;
  // Layouts' evaluations kept across the searches of "how many GPUs" (estimate_memo.h; none:
  // each search replays its layouts afresh; the same output either way).
  std::shared_ptr<EstimateMemo> estimate_memo = nullptr;
};

struct ServingEstimate {
  ServingLayout layout;                       // max_batch resolved
  WeightFormat weights = WeightFormat::bf16;  // the format it was evaluated at
  bool mixed_chunk = false;                   // SGLang --enable-mixed-chunk, as evaluated
  ServingMemory memory;
  StepBatch decode_batch;     // a decode step at the replay's mean batch, mid-answer context
  StepBreakdown decode_step;  // its time
  std::optional<StepOps> decode_ops;  // the same op by op (ServingProblem::step_ops)
  StepBreakdown prefill_step;  // one whole prompt alone (on a prefill worker if disaggregated)
  std::optional<ServingMemory> prefill_memory;  // one prefill worker's, when disaggregated
  double kv_transfer_s = 0;                     // one request's KV to the decode pool
  ReplayResult replay;             // one replica (disaggregated: every worker of both pools)
  double output_tokens_per_s = 0;  // all replicas
  double output_tokens_per_s_per_gpu = 0;
  double tokens_per_s_per_user = 0;  // 1 / mean TPOT
  double goodput_tokens_per_s = 0;   // output tokens of requests meeting the SLO, all replicas
  double slo_attainment = 1;         // share of requests meeting the SLO
  // The least factor by which every objective of the SLO would have to be multiplied for the
  // layout to meet it (≤ 1 where the share within it suffices; 0 without an SLO): how near one
  // that misses it comes.
  double slo_scale = 0;
  // At least 99% of requests meet the SLO, and under an open loop the layout keeps up with the
  // offered load (not `overloaded`); with an SLO margin (Slo::margin), also with every step that
  // much longer.
  bool meets_slo = true;
  // It meets the SLO as predicted but not with the SLO margin's longer steps.
  bool misses_margin = false;
  // Open loops (a request rate, a trace's arrivals): the requests/s offered (the rate asked, or
  // a trace's over its first to last arrival) and served (requests over the first arrival to
  // the last finish), all replicas.
  double offered_requests_per_s = 0, served_requests_per_s = 0;
  // The most requests/s the layout sustains, all replicas: the same requests replayed offline
  // (all at once: its saturation throughput). Asked wherever the replay served less than the
  // offered rate (0: not asked). The served rate alone cannot tell: a layout that keeps up
  // serves less than offered by the drain after the last arrival (about 7% at 20 requests/s on
  // 7 tp2 replicas of llama3-70b, 2,000 + 500 tokens), and one offered a little more than it
  // sustains serves about what it sustains (92% of the 20 offered by the same 7 replicas
  // capped at batch 64, TTFT climbing to 14 s by the end: a 90% threshold let it through).
  double saturation_requests_per_s = 0;
  // The offered rate's share of saturation_requests_per_s; 0 where either is unknown.
  double utilization() const {
    return offered_requests_per_s > 0 && saturation_requests_per_s > 0
               ? offered_requests_per_s / saturation_requests_per_s
               : 0;
  }
  // The offered rate exceeds saturation_requests_per_s: the queue grows without bound (its
  // latencies grow with the replay's length), so the layout does not meet the load.
  bool overloaded = false;
};

// Served / offered requests/s under which an open-loop replay is checked for overload: any
// shortfall (saturation_requests_per_s).
constexpr double kOverloadCheckShare = 1.0;

// Problems with `layout` on `p` (each a diagnostic naming the --layout field, value and rule):
// sizes ≥ 1, tp within one node, ep dividing tp and the expert count (MoE only), the splits
// the engine runs (split_refusal), GPUs.
std::vector<Diagnostic> check_serving_layout(const ServingProblem& p, const ServingLayout& layout);
// Why the engine cannot split the model as one worker of `layout` splits it, or empty where it
// can: tensor parallelism gives each GPU whole attention heads and whole shares of the KV heads,
// the FFN and each expert's FFN (vLLM's ModelConfig.verify_with_parallel_config: "Total number
// of attention heads (28) must be divisible by tensor parallel size (8)"; its linear layers
// divide their widths evenly; the same rules as training's, core/layout_rules.h), and a
// block-quantized FP8 checkpoint's shards are whole blocks (fp8_block_split.h). A
// disaggregated layout's prefill worker is asked apart (its prefill_worker()).
std::string split_refusal(const ServingProblem& p, const ServingLayout& worker);

// The most tokens (requests × (isl + osl)) one replay may process: every step moves at least one,
// so this bounds the replay's steps and its time (about a minute at the worst).
constexpr double kMaxReplayTokens = 1e8;

// Problems with the workload: the replay's size beyond kMaxReplayTokens (named by flag).
std::vector<Diagnostic> check_workload(const Workload& w);
// Requests longer (isl + osl) than the model's context window (ModelSpec::context_tokens, where
// stated), which vLLM, SGLang and TensorRT-LLM refuse: named by --isl (every request alike), by
// --isl-stdev (a spread's longest) or by --requests-file (a trace's).
std::vector<Diagnostic> check_context(const ServingProblem& p);
// An engine's own options asked of another: SGLang's --enable-mixed-chunk, --search-mixed-chunk,
// --max-prefill-tokens; TensorRT-LLM's --enable-chunked-context and
// --capacity-scheduler-policy MAX_UTILIZATION.
std::vector<Diagnostic> check_engine_options(const ServingOptions& o);
// A weight format the model cannot take: MXFP4 holds routed experts only (bytes_per_weight), so a
// model without them would be served in BF16 under its name.
std::vector<Diagnostic> check_weights(const ServingProblem& p);
// A TPOT objective where every answer is one token (--osl 1): nothing to time after the first
// token, so nothing to bound (the TPOT statistics have no samples and print "-").
std::vector<Diagnostic> check_slo(const ServingProblem& p);
// A prompt longer than a step's tokens where the engine refuses it: TensorRT-LLM without chunked
// prefill (--enable-chunked-context) runs each prompt whole within max_num_tokens.
std::vector<Diagnostic> check_step_tokens(const ServingProblem& p);
// A shared prompt prefix (--prefix-tokens) the model cannot take: with a prompt-length spread
// (--isl-stdev), not below --isl, with
// disaggregated prefill (`layout`, or the search's --disaggregated), or on sliding-window
// layers the engine frees (vLLM's hybrid cache, whose prefix reuse there is not modelled).
std::vector<Diagnostic> check_prefix(const ServingProblem& p, const ServingLayout* layout);

// Memory of `layout` with max_batch resolved (0 → the engine default, capped by what fits).
ServingMemory resolved_memory(const ServingProblem& p, ServingLayout& layout);

// The most requests/s `layout` sustains on `p`'s requests: the same requests replayed offline
// (all at once), over all replicas; 0 when the layout does not fit.
double saturation_requests_per_s(const ServingProblem& p, const ServingLayout& layout);

// Evaluates a checked layout; nullopt when its weights leave no room for one request (under a
// length spread, the longest the replay draws).
std::optional<ServingEstimate> evaluate_serving(const ServingProblem& p, ServingLayout layout);

// The weight formats to evaluate: options.weights, or with weights_auto BF16, FP8 (when the GPU
// has FP8 tensor cores) and MXFP4 (when the model's checkpoint holds its experts so,
// ModelSpec::mxfp4_experts).
std::vector<WeightFormat> weight_formats(const ServingProblem& p);
// `p` with options.weights = `w`.
ServingProblem with_weights(const ServingProblem& p, WeightFormat w);
// The problems a plan evaluates: each weight format (weight_formats) and, when searched, SGLang
// with and without --enable-mixed-chunk.
std::vector<ServingProblem> problem_variants(const ServingProblem& p);
// The options `e` was evaluated with: `o` at e's weight format and mixed-chunk setting.
ServingOptions evaluated_options(const ServingOptions& o, const ServingEstimate& e);
// The variant of `p` that `e` was evaluated as (evaluated_options).
ServingProblem as_evaluated(const ServingProblem& p, const ServingEstimate& e);

// One request's KV cache from a prefill worker to a decode worker: isl × the decode layout's KV
// bytes per token and GPU, every rank sending its shard at once, over NVLink when the plan fits
// one node and the outermost network level otherwise (its latency plus bytes / bandwidth).
// NIXL/UCX or NCCL transfer overheads and overlap with the prefill's later layers are not priced.
struct KvTransferCost {
  double latency_s = 0, s_per_token = 0;
};
KvTransferCost kv_transfer_cost(const ServingProblem& p, const ServingLayout& layout,
                                const ServingMemory& decode_memory);
// The transfer of a request of the workload's isl.
double kv_transfer_s(const ServingProblem& p, const ServingLayout& layout,
                     const ServingMemory& decode_memory);

// The share of the workload one replica of `replicas` sees (a trace's requests round robin).
Workload replica_workload(const Workload& w, int64_t replicas);

}  // namespace meshplan::serving
