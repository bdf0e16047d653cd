#include "planner/scale_sweep.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "planner/cluster_extension.h"
#include "planner/simulated_plan.h"
#include "planner/training_time.h"

namespace meshplan {
namespace {

// One point; `global_batch` > 0 overrides the request's batch rule.
Result<SweepRow> run_point(const CostModel& prototype, const SweepRequest& request, int64_t gpus,
                           int64_t seq_len, int64_t global_batch = 0) {
  TrainingSpec training = prototype.training();
  training.seq_len = seq_len;
  training.global_batch =
      global_batch > 0 ? global_batch
                       : global_batch_for(request.batch, prototype.training(), gpus, seq_len);
  assert(training.global_batch > 0);
  const ClusterSpec cluster = extend_cluster(prototype.cluster(), gpus);
  CostModel model(prototype.model(), cluster, prototype.profile(), training, prototype.options());
  SearchOptions search = request.search;
  search.top_k = std::max(1, request.simulate_top);
  search.progress = nullptr;
  SearchResult r = search_layouts(model, gpus, search);
  if (auto error = check_search_size(r, "sweep")) return std::vector<Diagnostic>{*error};
  if (request.simulate_top > 0) {
    std::vector<Diagnostic> errors = rerank_by_simulation(model, r, request.simulate_top);
    if (!errors.empty()) return errors;
  }

  SweepRow row;
  row.gpus = gpus, row.seq_len = seq_len, row.global_batch = training.global_batch;
  row.nodes = cluster.nodes;
  row.cluster_extended = needs_extension(prototype.cluster(), gpus);
  row.evaluated = r.evaluated, row.feasible = r.feasible;
  row.rejected = r.rejected;
  if (r.ranked.empty()) {
    row.no_layout = explain_no_layout(r, prototype.model(), training, gpus, search);
    return row;
  }
  row.best = r.ranked.front();
  if (request.tokens > 0 && row.best->tokens_per_s > 0) {
    const TrainingTime t =
        training_time(request.tokens, row.best->tokens_per_s, gpus, request.gpu_hour_cost_usd);
    row.time_to_train_s = t.seconds, row.gpu_hours = t.gpu_hours, row.cost_usd = t.cost_usd;
  }
  return row;
}

}  // namespace

int64_t global_batch_for(const BatchPolicy& policy, const TrainingSpec& base, int64_t gpus,
                         int64_t seq_len) {
  assert(gpus > 0 && seq_len > 0 && base.global_batch > 0);
  switch (policy.rule) {
    case BatchRule::model_default:
      return base.global_batch;
    case BatchRule::fixed_sequences:
      return policy.value;
    case BatchRule::tokens_per_step:
      return policy.value % seq_len == 0 ? policy.value / seq_len : 0;
    case BatchRule::sequences_per_gpu:
      return policy.value * gpus;
  }
  return 0;
}

Result<SweepResult> run_sweep(const CostModel& prototype, const SweepRequest& request) {
  assert(!request.gpu_counts.empty());
  assert(request.seq_lens.size() <= 1 || request.gpu_counts.size() == 1);
  assert(request.global_batches.size() <= 1 || request.gpu_counts.size() == 1);
  assert(request.global_batches.size() <= 1 || request.seq_lens.size() <= 1);
  SweepResult out;
  out.model_name = prototype.model().name;
  out.cluster = prototype.cluster();
  out.training = prototype.training();
  out.framework = prototype.options().framework;
  out.axis = request.seq_lens.size() > 1         ? SweepAxis::seq_len
             : request.global_batches.size() > 1 ? SweepAxis::global_batch
                                                 : SweepAxis::gpus;
  if (out.axis == SweepAxis::seq_len) {
    for (int64_t s : request.seq_lens) {
      Result<SweepRow> row = run_point(prototype, request, request.gpu_counts.front(), s);
      if (!row) return row.errors();
      out.rows.push_back(std::move(row).value());
    }
    return out;
  }
  const int64_t seq_len =
      request.seq_lens.empty() ? prototype.training().seq_len : request.seq_lens.front();
  if (out.axis == SweepAxis::global_batch) {
    for (int64_t b : request.global_batches) {
      Result<SweepRow> row = run_point(prototype, request, request.gpu_counts.front(), seq_len, b);
      if (!row) return row.errors();
      out.rows.push_back(std::move(row).value());
    }
    return out;
  }
  for (int64_t gpus : request.gpu_counts) {
    Result<SweepRow> row = run_point(prototype, request, gpus, seq_len);
    if (!row) return row.errors();
    out.rows.push_back(std::move(row).value());
  }
  const SweepRow* base = nullptr;
  for (SweepRow& row : out.rows) {
    if (!row.best) continue;
    if (!base) base = &row;
    const double per_gpu = row.best->tokens_per_s / static_cast<double>(row.gpus);
    const double base_per_gpu = base->best->tokens_per_s / static_cast<double>(base->gpus);
    row.scaling_efficiency = base_per_gpu > 0 ? per_gpu / base_per_gpu : 0;
  }
  return out;
}

}  // namespace meshplan
