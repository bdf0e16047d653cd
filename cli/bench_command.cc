// meshplan bench: the speed targets of the search and the simulator, as numbers.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/thread_count.h"
#include "planner/layout_search.h"
#include "planner/profile_defaults.h"
#include "planner/simulated_plan.h"
#include "reports/text_format.h"
#include "simulator/simulator_bench.h"

namespace meshplan::cli {
namespace {

struct SearchCase {
  const char* name;
  const char* model;
  const char* cluster;
  int64_t gpus;          // 0: all
  int64_t global_batch;  // 0: the model's
  int64_t seq_len;       // 0: the model's
};

// The cases named by the cost-model issue.
const SearchCase kCases[] = {
    {"llama3-405b / 16,384 H100", "models/llama3-405b.yaml", "topologies/dgx-h100-2048n.yaml", 0,
     2048, 8192},
    {"llama3-405b / 24,576 H100 (Llama 3)", "models/llama3-405b.yaml",
     "topologies/llama3-24k-h100.yaml", 0, 2048, 8192},
    {"gpt3-175b / 1,024 A100", "models/gpt3-175b.yaml", "topologies/selene-a100.yaml", 1024, 0, 0},
    {"mixtral-8x7b / 256 H100", "models/mixtral-8x7b.yaml", "topologies/dgx-h100-64n.yaml", 256, 0,
     0},
};

struct BenchOptions {
  std::string root = MESHPLAN_SOURCE_DIR;
  int threads = 0;
};

int run_bench(const BenchOptions& o) {
  const int threads = thread_count(o.threads);
  std::vector<std::vector<std::string>> rows;
  for (const SearchCase& c : kCases) {
    InputOptions in;
    in.model_path = o.root + "/" + c.model;
    in.cluster_path = o.root + "/" + c.cluster;
    in.gpus = c.gpus;
    in.global_batch = c.global_batch;
    in.seq_len = c.seq_len;
    std::optional<Inputs> inputs = load_inputs(in, false);
    if (!inputs) return kExitBadInput;
    Result<CalibrationProfile> profile = resolve_profile(inputs->cluster, "");
    if (!profile) return print_errors(profile.errors());
    CostModel model(inputs->model, inputs->cluster, profile.value(), inputs->training);
    SearchOptions s;
    s.threads = threads;
    SearchResult r = search_layouts(model, inputs->gpus, s);
    rows.push_back({c.name, with_commas(r.evaluated), with_commas(r.feasible), seconds(r.wall_s),
                    fmt::format("{:.2f} M", static_cast<double>(r.evaluated) / r.wall_s / 1e6),
                    r.ranked.empty() ? "-" : fmt::format("{:.1f}%", 100 * r.ranked.front().mfu)});
  }
  std::cout << fmt::format("layout search ({} threads)\n", threads)
            << text_table({"case", "evaluated", "fit", "wall", "layouts/s", "best MFU"}, rows)
            << "\n";
  sim::SimBenchResult b = sim::run_simulator_benchmark(5);
  std::cout << fmt::format(
      "simulator: llama3-405b-like step, pp=16 v=8 m=128, 126 layers over 128 chunks (uneven), one "
      "thread\n"
      "  {} operations, {} events; best of {}: build {}, event loop {}, summary {}, total {} "
      "({:.1f} M events/s)\n",
      with_commas(b.ops), with_commas(b.events), b.repetitions, seconds(b.build_s),
      seconds(b.simulate_s), seconds(b.summarize_s), seconds(b.total_s), b.events_per_s / 1e6);
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
