// meshplan validate: predicted vs measured for published training runs.
#include <iostream>
#include <memory>
#include <thread>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "planner/validation.h"
#include "reports/validation_render.h"

namespace meshplan::cli {
namespace {

struct ValidateOptions {
  std::string runs_path, root = MESHPLAN_SOURCE_DIR, format = "table";
  int threads = 0;
};

int run_validate(const ValidateOptions& o) {
  Result<std::vector<PublishedRun>> runs = load_published_runs(o.runs_path);
  if (!runs) return print_errors(runs.errors());
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Result<ValidationReport> report = validate_runs(runs.value(), o.root, threads);
  if (!report) return print_errors(report.errors());
  if (o.format == "json") std::cout << validation_json(report.value()).dump(2) << "\n";
  else if (o.format == "md") std::cout << validation_markdown(report.value());
  else std::cout << validation_table(report.value());
  return 0;
}

}  // namespace

CLI::App* add_validate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand("validate", "compare predictions with published measured runs");
  sub->add_option("--runs", o->runs_path, "published runs YAML (tests/data/published_runs.yaml)")->required();
  sub->add_option("--root", o->root, "directory holding topologies/ and profiles/");
  sub->add_option("--threads", o->threads, "search threads (default: all cores)")->check(CLI::NonNegativeNumber);
  add_format_option(sub, o->format, {"table", "md", "json"});
  sub->callback([o, &exit_code] { exit_code = run_validate(*o); });
  return sub;
}

}  // namespace meshplan::cli
