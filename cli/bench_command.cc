// meshplan bench: the speed targets of the search and the simulator, as numbers.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/process_probe.h"
#include "cli/thread_count.h"
#include "planner/layout_search.h"
#include "planner/profile_lookup.h"
#include "planner/simulated_plan.h"
#include "reports/text_format.h"
#include "simulator/simulator_bench.h"

namespace meshplan::cli {
namespace {

struct SearchCase {
  const char* name;
  const char* model;
  const char* cluster;
  int64_t gpus;                   // 0: all
  int64_t global_batch;           // 0: the model's
  int64_t seq_len;                // 0: the model's
  const char* profile = nullptr;  // nullptr: the cluster's
};

// The cases named by the cost-model and speed issues.
const SearchCase kCases[] = {
    {"llama3-405b / 16,384 H100", "models/llama3-405b.yaml", "topologies/dgx-h100-2048n.yaml", 0,
     2048, 8192},
    {"llama3-405b / 24,576 H100 (Llama 3)", "models/llama3-405b.yaml",
     "topologies/llama3-24k-h100.yaml", 0, 2048, 8192},
    {"gpt3-175b / 1,024 A100", "models/gpt3-175b.yaml", "topologies/selene-a100.yaml", 1024, 0, 0},
    {"mixtral-8x7b / 256 H100", "models/mixtral-8x7b.yaml", "topologies/dgx-h100-64n.yaml", 256, 0,
     0},
    {"qwen3-235b / 4,096 H100", "models/qwen3-235b-a22b.yaml", "topologies/dgx-h100-2048n.yaml",
     4096, 0, 0},
    {"deepseek-v3 / 2,048 H100", "models/deepseek-v3.yaml", "topologies/dgx-h100-2048n.yaml", 2048,
     0, 0},
    // A calibrated profile: thousands of measured GEMM shapes, which every GEMM time
    // interpolates between (GemmModel::kernel_time_s; the search remembers them: GemmMemo).
    {"deepseek-v3 / 2,048 H100 (measured)", "models/deepseek-v3.yaml",
     "topologies/dgx-h100-2048n.yaml", 2048, 0, 0, "profiles/h100-measured.yaml"},
};

struct BenchOptions {
  std::string root = MESHPLAN_SOURCE_DIR;
  int threads = 0;
};

// The `meshplan plan` command line of a case, for the whole-process runs.
std::vector<std::string> plan_args(const SearchCase& c, const std::string& root, int threads,
                                   int top) {
  std::vector<std::string> args = {"plan",
                                   "--model",
                                   root + "/" + c.model,
                                   "--cluster",
                                   root + "/" + c.cluster,
                                   "--threads",
                                   std::to_string(threads),
                                   "--top",
                                   std::to_string(top)};
  if (c.gpus > 0) args.insert(args.end(), {"--gpus", std::to_string(c.gpus)});
  if (c.global_batch > 0)
    args.insert(args.end(), {"--global-batch", std::to_string(c.global_batch)});
  if (c.seq_len > 0) args.insert(args.end(), {"--seq-len", std::to_string(c.seq_len)});
  if (c.profile) args.insert(args.end(), {"--profile", root + "/" + c.profile});
  return args;
}

std::string mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// The best (least wall time) of `n` runs of this executable; empty if one fails.
std::optional<ProcessRun> best_run(const std::vector<std::string>& args, int n) {
  std::optional<ProcessRun> best;
  for (int i = 0; i < n; ++i) {
    std::optional<ProcessRun> r = run_self(args);
    if (!r || r->exit_code != 0) return std::nullopt;
    if (!best || r->wall_s < best->wall_s) best = r;
  }
  return best;
}

std::string wall_or_dash(const std::optional<ProcessRun>& r) {
  return r ? seconds(r->wall_s) : "-";
}

// A case's model, cluster and cost model, loaded as `plan` would.
struct LoadedCase {
  Inputs inputs;
  std::unique_ptr<CostModel> model;
};

std::optional<LoadedCase> load_case(const SearchCase& c, const std::string& root, int& exit_code) {
  InputOptions in;
  in.model_path = root + "/" + c.model;
  in.cluster_path = root + "/" + c.cluster;
  in.gpus = c.gpus;
  in.global_batch = c.global_batch;
  in.seq_len = c.seq_len;
  std::optional<Inputs> inputs = load_inputs(in, false);
  if (!inputs) {
    exit_code = kExitBadInput;
    return std::nullopt;
  }
  Result<CalibrationProfile> profile = resolve_profile(
      inputs->cluster, c.profile ? root + "/" + c.profile : "", ProfileSearchPath{});
  if (!profile) {
    exit_code = print_errors(profile.errors());
    return std::nullopt;
  }
  LoadedCase loaded{std::move(*inputs), nullptr};
  loaded.model = std::make_unique<CostModel>(loaded.inputs.model, loaded.inputs.cluster,
                                             profile.value(), loaded.inputs.training);
  return loaded;
}

// Whole-process runs first, while this process is still small (process_probe.h).
std::vector<std::vector<std::string>> whole_process_rows(const std::string& root) {
  std::vector<std::vector<std::string>> rows;
  for (const SearchCase& c : kCases) {
    const std::optional<ProcessRun> plan = best_run(plan_args(c, root, 1, 10), 3);
    const std::optional<ProcessRun> top = best_run(plan_args(c, root, 1, 1000), 1);
    rows.push_back({c.name, wall_or_dash(plan), plan ? mib(plan->peak_rss_bytes) : "-",
                    wall_or_dash(top), top ? mib(top->peak_rss_bytes) : "-"});
  }
  return rows;
}

// Issue 17's question on a whole cluster as a user asks it: `meshplan serve` for llama3-70b in
// FP8 on 64 H100s at 20 requests/s of 2,000 + 500 tokens within TTFT 1 s and TPOT 33.3 ms
// (a search with its replica counts bisected and every layout checked for overload).
std::vector<std::string> serve_args(const std::string& root, int threads) {
  return {"serve",
          "--model",
          root + "/models/llama3-70b.yaml",
          "--cluster",
          root + "/topologies/dgx-h100-64n.yaml",
          "--gpus",
          "64",
          "--isl",
          "2000",
          "--osl",
          "500",
          "--weights",
          "fp8",
          "--request-rate",
          "20",
          "--slo-ttft",
          "1",
          "--slo-tpot",
          "0.0333",
          "--threads",
          std::to_string(threads)};
}

// The same search also splitting the GPUs into prefill and decode pools (--disaggregated).
std::vector<std::string> disaggregated_args(const std::string& root, int threads) {
  std::vector<std::string> args = serve_args(root, threads);
  args.push_back("--disaggregated");
  return args;
}

// "1 thread", "2 threads".
std::string threads_word(int threads) {
  return fmt::format("{} thread{}", threads, threads == 1 ? "" : "s");
}

// A search as a whole process on one thread and on `threads`, one run each (seconds each).
std::string serving_runs(const std::vector<std::string>& one_thread,
                         const std::vector<std::string>& all_threads, int threads) {
  const std::optional<ProcessRun> one = best_run(one_thread, 1);
  const std::optional<ProcessRun> many = best_run(all_threads, 1);
  return fmt::format("1 thread {} ({}), {} {} ({}){}", wall_or_dash(one),
                     one ? mib(one->peak_rss_bytes) : "-", threads_word(threads),
                     wall_or_dash(many), many ? mib(many->peak_rss_bytes) : "-",
                     one && many ? fmt::format(", {:.2f}×", one->wall_s / many->wall_s) : "");
}

std::string serving_search_line(const std::string& root, int threads) {
  return fmt::format(
      "serving search, whole process: meshplan serve llama3-70b, 64 H100, FP8, 20 requests/s of "
      "2,000 + 500 tokens, TTFT ≤ 1 s, TPOT ≤ 33.3 ms: {}; with --disaggregated: {}\n\n",
      serving_runs(serve_args(root, 1), serve_args(root, threads), threads),
      serving_runs(disaggregated_args(root, 1), disaggregated_args(root, threads), threads));
}

// The issue-13 trace case as a user runs it: Llama 3 405B's pp16/vpp7 step as a whole
// `simulate --trace` process, best of 3; the trace's size and events read back from its file.
constexpr const char* kTraceLayout =
    "tp=8,pp=16,vpp=7,dp=128,mbs=1,schedule=interleaved,uneven=true";
constexpr int64_t kTraceSequences = 16384;

struct TracedRun {
  std::optional<ProcessRun> run;
  int64_t bytes = 0, events = 0;
};

TracedRun whole_process_trace(const std::string& root) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "meshplan-bench-trace.json";
  TracedRun out;
  out.run = best_run({"simulate", "--model", root + "/models/llama3-405b.yaml", "--cluster",
                      root + "/topologies/dgx-h100-2048n.yaml", "--layout", kTraceLayout,
                      "--global-batch", std::to_string(kTraceSequences), "--trace", path.string()},
                     3);
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  out.bytes = static_cast<int64_t>(text.size());
  for (size_t at = text.find("\"ph\":"); at != std::string::npos; at = text.find("\"ph\":", at + 5))
    ++out.events;  // every event, metadata and operations, has one "ph"
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return out;
}

// Whether two searches of one case found the same: ranked layouts and step times, and the
// counts (`pruned` too with `with_pruned`: not where one of them timed every layout).
bool same_search(const SearchResult& a, const SearchResult& b, bool with_pruned) {
  if (a.evaluated != b.evaluated || a.feasible != b.feasible || a.rejected != b.rejected ||
      a.launcher_refused != b.launcher_refused || a.ranked.size() != b.ranked.size() ||
      (with_pruned && a.pruned != b.pruned))
    return false;
  for (size_t i = 0; i < a.ranked.size(); ++i)
    if (to_string(a.ranked[i].layout) != to_string(b.ranked[i].layout) ||
        a.ranked[i].step_time_s != b.ranked[i].step_time_s)
      return false;
  return true;
}

int run_bench(const BenchOptions& o) {
  const int threads = thread_count(o.threads);
  const int64_t own_rss = own_peak_rss_bytes();
  const std::optional<ProcessRun> version = best_run({"--version"}, 5);
  std::vector<std::string> memory_args = {"memory",
                                          "--model",
                                          o.root + "/models/llama3-8b.yaml",
                                          "--cluster",
                                          o.root + "/topologies/dgx-h100-1n.yaml",
                                          "--layout",
                                          "tp=8"};
  const std::optional<ProcessRun> memory = best_run(memory_args, 5);
  // The same with a calibrated profile (thousands of GEMM samples to read).
  memory_args.insert(memory_args.end(), {"--profile", o.root + "/profiles/h100-measured.yaml"});
  const std::optional<ProcessRun> measured = best_run(memory_args, 5);
  const std::vector<std::vector<std::string>> process_rows = whole_process_rows(o.root);
  const TracedRun traced = whole_process_trace(o.root);
  const std::string serving = serving_search_line(o.root, threads);
  std::vector<std::vector<std::string>> search_rows, tail_rows;
  std::string pruning;
  for (const SearchCase& c : kCases) {
    int exit_code = 0;
    std::optional<LoadedCase> loaded = load_case(c, o.root, exit_code);
    if (!loaded) return exit_code;
    SearchOptions s;
    s.launcher = launcher_check(loaded->model->options(), InputOptions{});  // as `plan` does
    s.threads = 1;
    const SearchResult one = search_layouts(*loaded->model, loaded->inputs.gpus, s);
    s.threads = threads;
    const SearchResult many = search_layouts(*loaded->model, loaded->inputs.gpus, s);
    const double per_thread = static_cast<double>(one.evaluated) / one.wall_s;
    search_rows.push_back(
        {c.name, with_commas(one.evaluated), with_commas(one.feasible),
         with_commas(one.feasible - one.pruned), seconds(one.wall_s),
         fmt::format("{:.1f} M", per_thread / 1e6), seconds(many.wall_s),
         fmt::format("{:.2f}×", one.wall_s / many.wall_s),
         one.ranked.empty() ? "-" : fmt::format("{:.1f}%", 100 * one.ranked.front().mfu)});
    // Runs counted at once against placing each of their layouts: one thread, the two
    // alternated, best of 3 each (their walls differ by less than a loaded host's noise).
    s.threads = 1;
    double counted_s = one.wall_s, each_s = std::numeric_limits<double>::infinity();
    SearchResult each;
    for (int i = 0; i < 3; ++i) {
      s.count_at_once = false;
      each = search_layouts(*loaded->model, loaded->inputs.gpus, s);
      each_s = std::min(each_s, each.wall_s);
      if (i == 2) break;
      s.count_at_once = true;
      counted_s =
          std::min(counted_s, search_layouts(*loaded->model, loaded->inputs.gpus, s).wall_s);
    }
    const auto n = static_cast<double>(one.evaluated);
    tail_rows.push_back({c.name, with_commas(one.counted_at_once), seconds(counted_s),
                         seconds(each_s), fmt::format("{:.2f}×", each_s / counted_s),
                         fmt::format("{:.1f} M", n / counted_s / 1e6),
                         fmt::format("{:.1f} M", n / each_s / 1e6),
                         same_search(one, each, true) ? "same" : "DIFFERENT"});
    s.count_at_once = false;
    if (pruning.empty()) {  // the first case, timed again without branch and bound
      s.prune = false;
      const SearchResult all = search_layouts(*loaded->model, loaded->inputs.gpus, s);
      pruning = fmt::format(
          "branch and bound on {}, one thread: {} against {} timing every layout that fits "
          "({:.1f}× faster, {} of {} timed, {})\n\n",
          c.name, seconds(one.wall_s), seconds(all.wall_s), all.wall_s / one.wall_s,
          with_commas(one.feasible - one.pruned), with_commas(all.feasible),
          same_search(one, all, false) ? "same results" : "DIFFERENT results");
    }
  }
  std::cout
      << fmt::format(
             "layout search in process, as `plan` runs it (Megatron-LM's rules): 1 thread, "
             "then {} (same results; `fit`: layouts that fit and Megatron-LM runs; "
             "`timed`: of those, timed in full, the rest pruned exactly by a step-time "
             "floor; layouts/s counts every layout evaluated, those counted at once included)\n",
             threads_word(threads))
      << text_table({"case", "evaluated", "fit", "timed", "wall 1T", "layouts/s/thread",
                     fmt::format("wall {}T", threads), "speed-up", "best MFU"},
                    search_rows)
      << "\n"
      << "runs of recompute counts counted at once (lost tails: past a lost step-time floor; "
         "unfit heads: up to the first that fits), one thread, against placing each of their "
         "layouts, best of 3 each (`counts`: evaluated, fit, pruned, rejected and the ranked "
         "layouts compared)\n"
      << text_table({"case", "counted at once", "wall", "wall placing each", "speed-up",
                     "layouts/s", "layouts/s placing each", "counts"},
                    tail_rows)
      << "\n"
      << pruning;
  std::cout << fmt::format(
                   "whole process: `meshplan plan --threads 1`, --top 10 (best of 3) and --top "
                   "1000 (peak "
                   "RSS at least this process's own {} at the spawn: Linux keeps it across exec)\n",
                   mib(own_rss))
            << text_table({"case", "wall", "peak RSS", "wall --top 1000", "peak RSS --top 1000"},
                          process_rows)
            << "\n";
  std::cout << fmt::format(
      "start-up (best of 5): meshplan --version {} ({}), meshplan memory llama3-8b {} ({}); with "
      "--profile profiles/h100-measured.yaml {} ({})\n\n",
      wall_or_dash(version), version ? mib(version->peak_rss_bytes) : "-", wall_or_dash(memory),
      memory ? mib(memory->peak_rss_bytes) : "-", wall_or_dash(measured),
      measured ? mib(measured->peak_rss_bytes) : "-");
  std::cout << serving;
  sim::SimBenchResult b = sim::run_simulator_benchmark(5);
  std::cout << fmt::format(
      "simulator: llama3-405b-like step, pp=16 v=8 m=128, 126 layers over 128 chunks (uneven), one "
      "thread\n"
      "  {} operations, {} events; best of {}: build {}, event loop {}, summary {}, total {} "
      "({:.1f} M events/s)\n"
      "  Chrome trace: {} in {} ({:.0f} MB/s, {:.2f} µs per operation)\n",
      with_commas(b.ops), with_commas(b.events), b.repetitions, seconds(b.build_s),
      seconds(b.simulate_s), seconds(b.summarize_s), seconds(b.total_s), b.events_per_s / 1e6,
      mib(b.trace_bytes), seconds(b.trace_s), static_cast<double>(b.trace_bytes) / b.trace_s / 1e6,
      b.trace_s / static_cast<double>(b.ops) * 1e6);
  std::cout << fmt::format(
      "  whole process: meshplan simulate --trace, llama3-405b {} on 2,048 nodes, {} sequences "
      "({} events, {}): {} ({}) (best of 3)\n",
      kTraceLayout, with_commas(kTraceSequences), with_commas(traced.events),
      traced.run ? mib(traced.bytes) : "-", wall_or_dash(traced.run),
      traced.run ? mib(traced.run->peak_rss_bytes) : "-");
  return 0;
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub =
      app.add_subcommand("bench", "measure search and simulator speed on the reference cases");
  sub->add_option("--root", o->root, "directory holding models/, topologies/ and profiles/");
  add_threads_option(sub, o->threads, "search threads (default: all cores)");
  sub->callback([o, &exit_code] { exit_code = run_bench(*o); });
  return sub;
}

}  // namespace meshplan::cli
