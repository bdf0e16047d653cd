// meshplan regress: evaluate a scenario set and compare the predictions with a baseline
// (DESIGN.md §5; formats in docs/regress.md). Exit 0 when nothing moved beyond the tolerance,
// 1 when something did, 2 on bad input (including a missing or malformed baseline).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "checks/regression.h"
#include "checks/regression_baseline.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/thread_count.h"
#include "core/atomic_file.h"
#include "reports/regression_render.h"

namespace meshplan::cli {
namespace {

constexpr int kExitRegression = 1;

struct RegressOptions {
  std::string scenarios_path, baseline_path, format = "md";
  double tolerance_pp = 0.5;
  bool update = false;
  int threads = 0;  // 0: hardware concurrency
};

// The baseline to compare with. With --update a missing file is an empty baseline (it is being
// created); a malformed one is still an error, so a typo never silently discards it.
std::optional<RegressionRecords> read_baseline(const RegressOptions& o) {
  std::error_code ec;
  bool exists = std::filesystem::exists(o.baseline_path, ec);
  if (!exists && o.update) return RegressionRecords{};
  Result<RegressionRecords> base = load_baseline(o.baseline_path);
  if (base) return base.value();
  print_errors(base.errors());
  if (!exists) {
    std::fputs("meshplan regress: no baseline to compare with; create it with --update\n", stderr);
  }
  return std::nullopt;
}

void print_report(const RegressionReport& report, const RegressOptions& o) {
  RegressMode mode = o.update ? RegressMode::update : RegressMode::check;
  if (o.format == "json")
    std::cout << regress_json(report, mode).dump(2) << "\n";
  else
    std::cout << regress_markdown(report, mode);
}

int run_regress(const RegressOptions& o) {
  Result<std::vector<RegressionScenario>> scenarios = load_scenarios(o.scenarios_path);
  if (!scenarios) return print_errors(scenarios.errors());
  std::optional<RegressionRecords> baseline = read_baseline(o);
  if (!baseline) return kExitBadInput;
  Result<RegressionRecords> now = evaluate_scenarios(scenarios.value(), thread_count(o.threads));
  if (!now) return print_errors(now.errors());
  RegressionReport report = compare_to_baseline(now.value(), *baseline, o.tolerance_pp);
  if (o.update) {
    if (auto error = write_file_atomically(o.baseline_path, baseline_yaml(now.value()))) {
      return print_errors({*error});
    }
  }
  print_report(report, o);
  return o.update || report.passed() ? 0 : kExitRegression;
}

}  // namespace

CLI::App* add_regress_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RegressOptions>();
  CLI::App* sub = app.add_subcommand(
      "regress", "compare predicted MFU, step time, memory and layouts with a baseline");
  sub->add_option("--scenarios", o->scenarios_path, "scenario file (YAML; see docs/regress.md)")
      ->required();
  sub->add_option("--baseline", o->baseline_path, "baseline file (YAML), written by --update")
      ->required();
  sub->add_option("--tolerance", o->tolerance_pp,
                  "largest MFU change that passes, in percentage points (default 0.5)")
      ->check(finite_number(0, 100));
  sub->add_flag("--update", o->update,
                "rewrite the baseline from the current predictions and print what changed");
  add_format_option(sub, o->format, {"md", "json"});
  add_threads_option(
      sub, o->threads,
      "search worker threads (default: all cores); output is the same for any count");
  sub->callback([o, &exit_code] { exit_code = run_regress(*o); });
  return sub;
}

}  // namespace meshplan::cli
