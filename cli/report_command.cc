// meshplan report: search, simulate the best, and write report.md with its SVG charts.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/thread_count.h"
#include "core/count_list.h"
#include "reports/markdown_report.h"

namespace meshplan::cli {
namespace {

struct ReportOptions {
  InputOptions in;
  CostOptions cost;
  std::string out_dir;
  int top = 5;
  int sample = 200;
  int threads = 0;
  std::string objective = "mfu";
  std::string sweep;  // GPU counts for the scale section; "": none
  double tokens = 0;
};

int run_report(const ReportOptions& o) {
  std::optional<Planning> p = load_planning(o.in, o.cost, /*with_layout=*/false);
  if (!p) return kExitBadInput;
  const Inputs* in = &p->inputs;
  CostModel& model = *p->model;
  ReportRequest request;
  request.top_k = o.top;
  request.sample = std::max(o.sample, o.top);
  request.threads = thread_count(o.threads);
  request.launcher = launcher_check(model.options(), o.in);
  request.objective = o.objective == "memory"         ? Objective::memory
                      : o.objective == "tokens_per_s" ? Objective::tokens_per_s
                                                      : Objective::mfu;
  if (!o.sweep.empty()) {
    Result<std::vector<int64_t>> counts = parse_count_list(o.sweep, "--sweep", "sweep", 10'000'000);
    if (!counts) return print_errors(counts.errors());
    SweepRequest sweep;
    sweep.gpu_counts = counts.value();
    sweep.tokens = o.tokens;
    sweep.search.launcher = request.launcher;
    request.sweep = sweep;
  }
  Result<ReportData> data = build_report(model, in->gpus, request);
  if (!data) return print_errors(data.errors());
  std::vector<ReportFile> files = render_report(data.value());
  if (int rc = write_report_files(files, o.out_dir); rc != 0) return rc;
  for (const ReportFile& f : files)
    std::cout << (std::filesystem::path(o.out_dir) / f.name).string() << "\n";
  return 0;
}

}  // namespace

CLI::App* add_report_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub =
      app.add_subcommand("report", "write a Markdown report with SVG charts for the best layouts");
  add_input_options(sub, o->in, /*with_layout=*/false);
  add_cost_options(sub, o->in, o->cost);
  add_launcher_option(sub, o->in);
  sub->add_option("--objective", o->objective,
                  "ranking, as `meshplan plan`: mfu | tokens_per_s | memory")
      ->check(CLI::IsMember({"mfu", "tokens_per_s", "memory"}));
  sub->add_option("--top", o->top, "layouts in the table, each simulated")
      ->check(CLI::Range(1, 100));
  sub->add_option("--sample", o->sample, "best feasible layouts plotted in the MFU chart")
      ->check(CLI::Range(1, 5000));
  add_threads_option(sub, o->threads,
                     "search threads (default: all cores); the report is the same for any count");
  sub->add_option("--sweep", o->sweep,
                  "add a scale section: the best layout at these GPU counts (64..4096 doubles), "
                  "as `meshplan sweep` finds it");
  sub->add_option("--tokens", o->tokens, "token budget for the scale section's time to train")
      ->check(finite_number(1, 1e18));
  sub->add_option("--out", o->out_dir, "folder for report.md and its SVG files")->required();
  sub->callback([o, &exit_code] { exit_code = run_report(*o); });
  return sub;
}

}  // namespace meshplan::cli
