// meshplan sweep: plan's search at each of several GPU counts (or sequence lengths), with time
// to train, GPU-hours, cost and scaling efficiency (issue 16).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/thread_count.h"
#include "core/count_list.h"
#include "planner/layout_search.h"
#include "planner/scale_sweep.h"
#include "reports/sweep_render.h"
#include "reports/sweep_report.h"

namespace meshplan::cli {
namespace {

// Largest GPU count or sequence length a list may hold.
constexpr int64_t kMaxCount = 10'000'000;

struct SweepOptions {
  InputOptions in;
  CostOptions cost;
  std::string gpus, seq_lens, global_batches, fix, objective = "mfu", out_dir;
  int64_t tokens_per_step = 0, batch_per_gpu = 0;
  double tokens = 0, gpu_hour_cost = 0;
  int threads = 0;
  int simulate_top = 0;
};

// The batch rule from the three exclusive flags (CLI11 enforces the exclusion); `batches` is
// --global-batch parsed (one value: a fixed batch; several: swept, not a rule).
BatchPolicy batch_policy(const SweepOptions& o, const std::vector<int64_t>& batches) {
  if (batches.size() == 1) return {BatchRule::fixed_sequences, batches.front()};
  if (o.tokens_per_step > 0) return {BatchRule::tokens_per_step, o.tokens_per_step};
  if (o.batch_per_gpu > 0) return {BatchRule::sequences_per_gpu, o.batch_per_gpu};
  return {};
}

// The request from the flags, or every error in them.
Result<SweepRequest> sweep_request(const SweepOptions& o, const CostModel& model) {
  std::vector<Diagnostic> errors;
  SweepRequest r;
  if (o.gpus.empty()) {
    r.gpu_counts = {model.cluster().gpus()};
  } else if (Result<std::vector<int64_t>> g =
                 parse_count_list(o.gpus, "--gpus", "gpus", kMaxCount)) {
    r.gpu_counts = g.value();
  } else {
    errors.insert(errors.end(), g.errors().begin(), g.errors().end());
  }
  if (!o.seq_lens.empty()) {
    Result<std::vector<int64_t>> s =
        parse_count_list(o.seq_lens, "--seq-len", "seq-len", kMaxCount);
    if (s)
      r.seq_lens = s.value();
    else
      errors.insert(errors.end(), s.errors().begin(), s.errors().end());
  }
  std::vector<int64_t> batches;
  if (!o.global_batches.empty()) {
    Result<std::vector<int64_t>> b =
        parse_count_list(o.global_batches, "--global-batch", "global-batch", kMaxCount);
    if (b)
      batches = b.value();
    else
      errors.insert(errors.end(), b.errors().begin(), b.errors().end());
  }
  if (!errors.empty()) return errors;
  if (r.seq_lens.size() > 1 && r.gpu_counts.size() > 1)
    return flag_error("--seq-len", o.seq_lens,
                      "sweeps one thing at a time: several sequence lengths need one --gpus count");
  if (batches.size() > 1 && (r.gpu_counts.size() > 1 || r.seq_lens.size() > 1))
    return flag_error("--global-batch", o.global_batches,
                      "sweeps one thing at a time: several batches need one --gpus count and one "
                      "--seq-len");
  if (batches.size() > 1) r.global_batches = batches;
  r.batch = batch_policy(o, batches);
  const std::vector<int64_t> lengths =
      r.seq_lens.empty() ? std::vector<int64_t>{model.training().seq_len} : r.seq_lens;
  for (int64_t s : lengths) {
    if (global_batch_for(r.batch, model.training(), 1, s) > 0) continue;
    return flag_error("--tokens-per-step", std::to_string(o.tokens_per_step),
                      fmt::format("must be a multiple of the sequence length ({})", s));
  }
  r.tokens = o.tokens;
  r.gpu_hour_cost_usd = o.gpu_hour_cost;
  if (r.gpu_hour_cost_usd > 0 && r.tokens <= 0)
    return flag_error("--gpu-hour-cost", fmt::format("{}", o.gpu_hour_cost),
                      "needs --tokens (the cost is that of training the token budget)");
  if (!o.fix.empty()) {
    Result<LayoutFix> fix = parse_layout_fix(o.fix);
    if (!fix) return fix.errors();
    r.search.fix = fix.value();
  }
  r.search.objective = o.objective == "memory"         ? Objective::memory
                       : o.objective == "tokens_per_s" ? Objective::tokens_per_s
                                                       : Objective::mfu;
  r.search.threads = thread_count(o.threads);
  r.search.launcher = launcher_check(model.options(), o.in);
  r.simulate_top = o.simulate_top;
  return r;
}

int run_sweep_command(const SweepOptions& o) {
  if (!o.out_dir.empty() && o.in.format != "md" && o.in.format != "table")
    return print_errors({flag_error(
        "--out", o.out_dir, "writes sweep.md and its SVG charts; use it with --format md")});
  std::optional<Planning> p = load_planning(o.in, o.cost, /*with_layout=*/false);
  if (!p) return kExitBadInput;
  const CostModel& model = *p->model;
  Result<SweepRequest> request = sweep_request(o, model);
  if (!request) return print_errors(request.errors());
  Result<SweepResult> swept = run_sweep(model, request.value());
  if (!swept) return print_errors(swept.errors());
  const SweepResult& s = swept.value();
  if (!o.out_dir.empty()) {
    std::vector<ReportFile> files = render_sweep_report(s, request.value());
    if (int rc = write_report_files(files, o.out_dir); rc != 0) return rc;
    for (const ReportFile& f : files)
      std::cout << (std::filesystem::path(o.out_dir) / f.name).string() << "\n";
  } else if (o.in.format == "json") {
    std::cout << sweep_json(s, request.value()).dump(2) << "\n";
  } else if (o.in.format == "csv") {
    std::cout << sweep_csv(s);
  } else if (o.in.format == "md") {
    std::cout << render_sweep_report(s, request.value()).front().content;
  } else {
    std::cout << sweep_table(s, request.value()) << closing_lines(model);
  }
  return 0;
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "plan at several GPU counts (or sequence lengths): throughput, MFU, time and cost");
  sub->add_option("--model", o->in.model_path,
                  "model YAML (models/*.yaml) or Hugging Face config.json")
      ->required();
  sub->add_option("--cluster", o->in.cluster_path,
                  "cluster YAML; counts beyond it add nodes of the same kind, same network levels")
      ->required();
  sub->add_option("--gpus", o->gpus,
                  "GPU counts: 64,128,512 or 64..16384 (doubling) or 64..16384*4 (default: the "
                  "cluster's GPUs)");
  sub->add_option("--seq-len", o->seq_lens,
                  "tokens per sequence; several (4096,8192) sweep it at one --gpus count "
                  "(default: the model's training.seq_len)");
  CLI::Option* gb = sub->add_option("--global-batch", o->global_batches,
                                    "sequences per step at every point, or several (256,512,1024) "
                                    "swept at one --gpus count (default: the model's "
                                    "training.global_batch)");
  CLI::Option* tps =
      sub->add_option("--tokens-per-step", o->tokens_per_step,
                      "tokens per step at every point: the batch is this / the sequence length")
          ->check(integer_range(1, 1'000'000'000'000));
  CLI::Option* bpg = sub->add_option("--batch-per-gpu", o->batch_per_gpu,
                                     "sequences per GPU: the batch grows with the GPU count")
                         ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  gb->excludes(tps)->excludes(bpg);
  tps->excludes(bpg);
  sub->add_option("--tokens", o->tokens, "token budget to train, e.g. 15e12: time and GPU-hours")
      ->check(finite_number(1, 1e18));
  sub->add_option("--gpu-hour-cost", o->gpu_hour_cost,
                  "price of one GPU-hour in USD: the cost of the token budget")
      ->check(finite_number(1e-6, 1e6));
  add_cost_options(sub, o->in, o->cost);
  add_launcher_option(sub, o->in);
  sub->add_option("--fix", o->fix, "pin layout fields at every point, e.g. tp=8,pp=4");
  sub->add_option("--objective", o->objective, "ranking: mfu | tokens_per_s | memory")
      ->check(CLI::IsMember({"mfu", "tokens_per_s", "memory"}));
  sub->add_option("--simulate-top", o->simulate_top,
                  "as plan: simulate each count's K best layouts and keep the fastest simulated")
      ->check(CLI::Range(0, 1000));
  add_threads_option(sub, o->threads,
                     "search threads (default: all cores); output is the same for any count");
  add_format_option(sub, o->in.format, {"table", "json", "csv", "md"});
  sub->add_option("--out", o->out_dir,
                  "folder for sweep.md and its SVG charts (--format md alone prints sweep.md)");
  sub->callback([o, &exit_code] { exit_code = run_sweep_command(*o); });
  return sub;
}

}  // namespace meshplan::cli
