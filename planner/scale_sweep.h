// Scale questions (issue 16): the best layout, step time, throughput, MFU, memory, time to
// train a token budget, GPU-hours and cost at each of several GPU counts (or sequence lengths
// at one count). Each point runs search_layouts exactly as `meshplan plan` does for that count,
// so a sweep's best layout is plan's best layout. Counts beyond the cluster run on
// extend_cluster (planner/cluster_extension.h), and the row says so.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "planner/cost_model.h"
#include "planner/layout_search.h"
#include "planner/no_layout_reason.h"

namespace meshplan {

// How the global batch follows the GPU count and sequence length.
enum class BatchRule {
  model_default,      // the model's training.global_batch (or --global-batch), at every point
  fixed_sequences,    // `value` sequences at every point
  tokens_per_step,    // `value` tokens per step: value / seq_len sequences
  sequences_per_gpu,  // `value` sequences per GPU: value · gpus sequences (weak scaling)
};

struct BatchPolicy {
  BatchRule rule = BatchRule::model_default;
  int64_t value = 0;  // unused for model_default
};

// The global batch (sequences) under `policy` at `gpus` GPUs and `seq_len` tokens; 0 when the
// rule gives no whole number of sequences (tokens_per_step not a multiple of seq_len).
// REQUIRES: gpus > 0, seq_len > 0, base.global_batch > 0.
int64_t global_batch_for(const BatchPolicy& policy, const TrainingSpec& base, int64_t gpus,
                         int64_t seq_len);

// What a sweep varies: the GPU count, or the sequence length or global batch at one count.
enum class SweepAxis { gpus, seq_len, global_batch };

struct SweepRequest {
  // GPU counts, ascending. When the sequence length or the batch is swept, exactly one count.
  std::vector<int64_t> gpu_counts;
  // Sequence lengths to sweep at gpu_counts[0], ascending; empty: the training seq_len.
  std::vector<int64_t> seq_lens;
  // Global batches (sequences) to sweep at gpu_counts[0] and one sequence length, ascending;
  // they replace `batch`. Empty or one value: `batch` decides (one value: pass it as
  // fixed_sequences).
  std::vector<int64_t> global_batches;
  BatchPolicy batch;
  double tokens = 0;             // token budget to train; 0: no time to train
  double gpu_hour_cost_usd = 0;  // price of one GPU-hour; 0: no cost
  // The search at each point, as `plan` runs it (fix, objective, threads). Only the best
  // layout is kept: top_k does not change it.
  SearchOptions search;
  // As plan --simulate-top: replay the K best layouts of each point in the simulator and keep
  // the fastest simulated one (0: rank by the analytic step time).
  int simulate_top = 0;
};

// One point of the sweep.
struct SweepRow {
  int64_t gpus = 0, seq_len = 0, global_batch = 0;
  int64_t nodes = 0;              // of the cluster the point ran on
  bool cluster_extended = false;  // nodes were added (extend_cluster)
  int64_t evaluated = 0, feasible = 0;
  std::map<std::string, int64_t> rejected;
  std::optional<Estimate> best;             // with detail; empty when no layout exists
  std::optional<NoLayoutReason> no_layout;  // set exactly when best is empty
  // Time to train SweepRequest::tokens at the best layout's tokens/s: tokens / tokens_per_s
  // (fractional steps; 0 when there is no budget or no layout).
  double time_to_train_s = 0;
  double gpu_hours = 0;  // gpus · time_to_train_s / 3600
  double cost_usd = 0;   // gpu_hours · gpu_hour_cost_usd
  // Tokens/s per GPU relative to the first row with a layout (a GPU-count sweep only; 1 at that
  // row; 0 when it does not apply).
  double scaling_efficiency = 0;
};

struct SweepResult {
  // What the sweep was about, for renderers: the prototype's model name, cluster (as given,
  // before any extension), training defaults and framework preset.
  std::string model_name;
  ClusterSpec cluster;
  TrainingSpec training;
  std::string framework;
  SweepAxis axis = SweepAxis::gpus;
  std::vector<SweepRow> rows;
};

// Errors: the simulator's, for a layout it cannot replay (with simulate_top only).
// REQUIRES: the request's counts, lengths and batches are positive and ascending, the batch
// rule gives a whole batch at every point (global_batch_for > 0), at most one of seq_lens and
// global_batches has several values, and then gpu_counts has exactly one. `prototype` carries the
// model, the (unextended) cluster, profile, training defaults and cost options; its
// training.global_batch is the model_default batch.
Result<SweepResult> run_sweep(const CostModel& prototype, const SweepRequest& request);

}  // namespace meshplan
