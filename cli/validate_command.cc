// meshplan validate: predicted vs measured for published training runs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "checks/validation.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/thread_count.h"
#include "reports/validation_render.h"
#include "serving/serving_validation.h"

namespace meshplan::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> runs_paths;
  std::string serving_path;  // --serving: published serving runs instead of training runs
  std::string root = MESHPLAN_SOURCE_DIR, format = "table";
  int threads = 0;
  std::vector<std::string>
      bounds;                 // "NAME=FRACTION": mean |error| of that summary must not exceed it
  double max_run_error = -1;  // every run's |error| at most this (negative: no bound)
  bool require_fit = false;   // every run predicted to fit (it ran)
  std::vector<std::string> profile_swaps;  // "NAME=OTHER": price NAME's clusters with OTHER
  std::string profile_dir;                 // --profile-dir: looked in first for profile names
};

// Exit 1 when a run's |error| exceeds `max_run_error` or, with `require_fit`, when a run is
// predicted not to fit; each offender is named on stderr.
int check_runs(const ValidationReport& r, double max_run_error, bool require_fit) {
  int status = 0;
  for (const ValidationRow& row : r.rows) {
    if (max_run_error >= 0 && std::fabs(row.relative_error) > max_run_error) {
      std::cerr << fmt::format("validate: {} error {:+.1f}% exceeds the per-run bound {:.1f}%\n",
                               row.id, 100 * row.relative_error, 100 * max_run_error);
      status = 1;
    }
    if (require_fit && !row.fits) {
      std::cerr << fmt::format("validate: {} is predicted not to fit, but the run ran\n", row.id);
      status = 1;
    }
  }
  if (status == 0 && (max_run_error >= 0 || require_fit))
    std::cerr << fmt::format(
        "validate: every run {}{}{}: ok\n",
        max_run_error >= 0 ? fmt::format("within {:.1f}%", 100 * max_run_error) : "",
        max_run_error >= 0 && require_fit ? " and " : "", require_fit ? "predicted to fit" : "");
  return status;
}

// One --max-error: the summary it names and its bound on the mean |error|.
struct Bound {
  std::string name;
  double limit = 0;
};

Diagnostic bound_error(const std::string& value, const std::string& rule) {
  return flag_error("--max-error", value, rule);
}

// Reads every NAME=FRACTION; the names are checked against the summaries later.
Result<std::vector<Bound>> parse_bounds(const std::vector<std::string>& bounds) {
  std::vector<Bound> out;
  for (const std::string& b : bounds) {
    const size_t eq = b.rfind('=');
    char* end = nullptr;
    const double limit = eq == std::string::npos ? -1 : std::strtod(b.c_str() + eq + 1, &end);
    if (eq == std::string::npos || end == b.c_str() + eq + 1 || *end != '\0' ||
        !std::isfinite(limit) || limit < 0)
      return bound_error(b, "must be NAME=FRACTION, e.g. all=0.15");
    out.push_back({b.substr(0, eq), limit});
  }
  return out;
}

// An error for the first bound that names no summary of `r`.
std::optional<Diagnostic> unknown_bound(const ValidationReport& r,
                                        const std::vector<Bound>& bounds) {
  for (const Bound& b : bounds) {
    const bool found = std::any_of(r.summaries.begin(), r.summaries.end(),
                                   [&](const ErrorSummary& s) { return s.name == b.name; });
    if (!found) return bound_error(b.name, "names no summary (sources, 'source table' or all)");
  }
  return std::nullopt;
}

// Exit 1 when a summary's mean absolute error exceeds its bound. REQUIRES: !unknown_bound().
int check_bounds(const ValidationReport& r, const std::vector<Bound>& bounds) {
  int status = 0;
  for (const Bound& b : bounds) {
    const ErrorSummary* found = nullptr;
    for (const ErrorSummary& s : r.summaries)
      if (s.name == b.name) found = &s;
    const bool ok = found->mean_abs <= b.limit;
    std::cerr << fmt::format("validate: {} mean |error| {:.1f}% (bound {:.1f}%): {}\n", b.name,
                             100 * found->mean_abs, 100 * b.limit, ok ? "ok" : "EXCEEDED");
    if (!ok) status = 1;
  }
  return status;
}

// --serving: every replayable run of the file, then each --max-error bound on its summaries
// (throughput, ttft, tpot, or "<group> <metric>").
int run_serving_validate(const ValidateOptions& o, const std::vector<Bound>& bounds) {
  Result<std::vector<serving::ServingRun>> runs = serving::load_serving_runs(o.serving_path);
  if (!runs) return print_errors(runs.errors());
  Result<ProfileSwaps> swaps = ProfileSwaps::parse(o.profile_swaps);
  if (!swaps) return print_errors(swaps.errors());
  Result<serving::ServingValidation> v =
      serving::validate_serving(runs.value(), o.root, swaps.value(), thread_count(o.threads),
                                profile_search_path(o.profile_dir));
  if (!v) return print_errors(v.errors());
  for (const Bound& b : bounds) {
    const bool found = std::any_of(v->summaries.begin(), v->summaries.end(),
                                   [&](const auto& s) { return s.name == b.name; });
    if (!found)
      return print_errors({bound_error(
          b.name, "names no serving summary (throughput, ttft, tpot or '<group> <metric>')")});
  }
  // Tables are Markdown-safe as they are: md prints the table in a code block.
  if (o.format == "json")
    std::cout << serving::serving_validation_json(v.value());
  else if (o.format == "md")
    std::cout << "```\n" << serving::serving_validation_table(v.value()) << "```\n";
  else
    std::cout << serving::serving_validation_table(v.value());
  int status = 0;
  for (const Bound& b : bounds)
    for (const serving::ServingErrorSummary& s : v->summaries) {
      if (s.name != b.name) continue;
      const bool ok = s.mean_abs <= b.limit;
      std::cerr << fmt::format("validate: {} mean |error| {:.1f}% (bound {:.1f}%): {}\n", b.name,
                               100 * s.mean_abs, 100 * b.limit, ok ? "ok" : "EXCEEDED");
      if (!ok) status = 1;
    }
  return status;
}

int run_validate(const ValidateOptions& o) {
  Result<std::vector<Bound>> bounds = parse_bounds(o.bounds);
  if (!bounds) return print_errors(bounds.errors());
  if (!o.serving_path.empty()) return run_serving_validate(o, bounds.value());
  if (o.runs_paths.empty())
    return print_errors(
        {flag_error("--runs", "", "give --runs FILE (training runs) or --serving FILE")});
  std::vector<PublishedRun> runs;
  std::vector<Diagnostic> errors;
  for (const std::string& path : o.runs_paths) {
    Result<std::vector<PublishedRun>> file = load_published_runs(path);
    if (!file)
      errors.insert(errors.end(), file.errors().begin(), file.errors().end());
    else
      runs.insert(runs.end(), file->begin(), file->end());
  }
  if (!errors.empty()) return print_errors(errors);
  Result<ProfileSwaps> swaps = ProfileSwaps::parse(o.profile_swaps);
  if (!swaps) return print_errors(swaps.errors());
  Result<ValidationReport> report = validate_runs(
      runs, o.root, thread_count(o.threads), swaps.value(), profile_search_path(o.profile_dir));
  if (!report) return print_errors(report.errors());
  if (auto error = unknown_bound(report.value(), bounds.value())) return print_errors({*error});
  if (o.format == "json")
    std::cout << validation_json(report.value()).dump(2) << "\n";
  else if (o.format == "md")
    std::cout << validation_markdown(report.value());
  else
    std::cout << validation_table(report.value());
  const int bound_status = check_bounds(report.value(), bounds.value());
  return std::max(bound_status, check_runs(report.value(), o.max_run_error, o.require_fit));
}

}  // namespace

CLI::App* add_validate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* sub =
      app.add_subcommand("validate", "compare predictions with published measured runs");
  sub->add_option(
      "--runs", o->runs_paths,
      "published runs YAML (tests/data/published_runs.yaml, published_runs_modern.yaml); "
      "repeatable: the files' runs are validated and summarized together");
  sub->add_option("--serving", o->serving_path,
                  "published serving runs YAML (tests/data/serving_runs.yaml): predicted vs "
                  "measured throughput, TTFT and TPOT of `meshplan serve`");
  sub->add_option("--root", o->root, "directory holding topologies/ and profiles/");
  add_threads_option(sub, o->threads,
                     "search threads, or serving runs replayed at once (default: all cores)");
  sub->add_option("--max-error", o->bounds,
                  "NAME=FRACTION: exit 1 when that summary's mean |error| exceeds it (repeatable)");
  sub->add_option("--max-run-error", o->max_run_error,
                  "FRACTION: exit 1 when any run's |error| exceeds it")
      ->check(finite_number(0, 1000));
  sub->add_flag(
      "--require-fit", o->require_fit,
      "exit 1 when a run is predicted not to fit in GPU memory (every published run ran)");
  sub->add_option("--profile", o->profile_swaps,
                  "NAME=OTHER: price the runs whose cluster names profile NAME with profile OTHER "
                  "(e.g. h100-published=h100-measured; repeatable; training and serving runs)");
  sub->add_option("--profile-dir", o->profile_dir,
                  "folder of calibration profiles (NAME.yaml) looked in first for the runs' "
                  "profile names and --profile's OTHER, then $MESHPLAN_DATA/profiles, --root's "
                  "profiles/, the installed ones")
      ->check(CLI::ExistingDirectory);
  add_format_option(sub, o->format, {"table", "md", "json"});
  sub->callback([o, &exit_code] { exit_code = run_validate(*o); });
  return sub;
}

}  // namespace meshplan::cli
