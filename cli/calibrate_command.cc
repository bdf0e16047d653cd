// meshplan calibrate: measure GEMM, HBM and NCCL throughput into a profile, or import
// nccl-tests logs (issue 5). Thin over meshplan_calibrate; the only place that prints.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>

#include "calibrate/backend.h"
#include "calibrate/calibration_run.h"
#include "calibrate/model_gemm_shapes.h"
#include "calibrate/nccl_tests_import.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "core/cluster_spec.h"
#include "core/diagnostic.h"
#include "core/model_limits.h"
#include "core/model_spec.h"
#include "core/profile_comparison.h"
#include "core/profile_merge.h"
#include "planner/gemm_model_comparison.h"
#include "reports/profile_comparison_render.h"

namespace meshplan::cli {
namespace {

constexpr int kBadInput = 2;

struct CalibrateOptions {
  std::string backend = "cpu";
  bool quick = false, gemm = false, hbm = false, nccl = false;
  std::vector<std::string> models;
  std::vector<int64_t> tps{1};
  std::vector<int64_t> tokens{4096};
  std::vector<int64_t> eps{1, 8};  // EP degrees whose per-expert rows a MoE model's experts get
  std::vector<std::string> dtypes;
  double sustained_seconds = -1;  // < 0: the plan's default
  int max_algorithms = 0;         // 0: the plan's default
  double budget_ms = -1;          // < 0: the plan's default
  bool dry_run = false;
  std::string out = "profile.yaml";
  std::string command;
};

struct ImportCliOptions {
  std::vector<std::string> files;
  std::string out = "profile.yaml";
  calibrate::ImportOptions import;
};

int fail(const std::vector<Diagnostic>& errors) {
  std::fputs(format_diagnostics(errors).c_str(), stderr);
  return kBadInput;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// A one-line bar redrawn in place; only when stderr is a terminal.
calibrate::ProgressFn progress_bar() {
  if (!isatty(fileno(stderr))) return {};
  return [](const calibrate::Progress& p) {
    const int width = 30;
    int filled = p.total ? static_cast<int>(width * p.done / p.total) : 0;
    std::fprintf(stderr, "\r[%s%s] %lld/%lld %-12s %-40.40s", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), static_cast<long long>(p.done + 1),
                 static_cast<long long>(p.total), p.section.c_str(), p.item.c_str());
    if (p.done + 1 == p.total) std::fputc('\n', stderr);
  };
}

// --dry-run: what a run would measure, without a device (sizes a run before renting one).
int print_plan(const calibrate::CalibrationPlan& plan) {
  double flops = 0;
  for (const auto& s : plan.gemm_shapes)
    flops += 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  const auto bf16_only = std::count_if(plan.gemm_shapes.begin(), plan.gemm_shapes.end(),
                                       [](const calibrate::GemmShape& s) { return s.bf16_only; });
  std::printf("gemm: %zu shapes per dtype (%s), %.3g PFLOP per pass%s%s\n", plan.gemm_shapes.size(),
              plan.dtypes.empty() ? "every dtype the device offers"
                                  : fmt::format("{}", fmt::join(plan.dtypes, ", ")).c_str(),
              flops * 1e-15, plan.gemm ? "" : " (section off)",
              bf16_only > 0
                  ? fmt::format("; {} of them in bf16 only (LM head, router)", bf16_only).c_str()
                  : "");
  std::printf("timing: %d warm-ups, %d samples, budget %g ms per shape, up to %d algorithms\n",
              plan.gemm_timing.warmup, plan.gemm_timing.iterations, plan.gemm_timing.budget_s * 1e3,
              plan.gemm_timing.max_algorithms);
  std::printf("sustained: %g s; hbm: %s; collectives: %s\n", plan.sustained_seconds,
              plan.hbm ? "yes" : "no", plan.collectives ? "yes" : "no");
  for (const auto& s : plan.gemm_shapes)
    std::printf("%lld %lld %lld %s%s\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), s.label.c_str(), s.bf16_only ? " (bf16 only)" : "");
  return 0;
}

// The plan the options ask for: the backend's default, then each option's override.
Result<calibrate::CalibrationPlan> plan_for(const CalibrateOptions& o) {
  calibrate::CalibrationPlan plan =
      o.backend == "cpu" ? calibrate::cpu_plan(o.quick) : calibrate::cuda_plan(o.quick);
  if (o.gemm || o.hbm || o.nccl) {  // a section flag selects only the named sections
    plan.gemm = o.gemm;
    plan.hbm = o.hbm;
    plan.collectives = o.nccl;
  }
  if (!o.models.empty()) {
    std::vector<ModelSpec> models;
    for (const std::string& path : o.models) {
      auto model = load_model(path);
      if (!model) return model.errors();
      models.push_back(std::move(model).value());
    }
    // Model shapes first: they matter most to the planner; then the plan's grid.
    auto shapes = calibrate::model_gemm_sweep(models, o.tps, o.tokens, o.eps);
    calibrate::append_unique_shapes(shapes, plan.gemm_shapes);
    plan.gemm_shapes = shapes;
  }
  if (!o.dtypes.empty()) plan.dtypes = o.dtypes;
  if (o.sustained_seconds >= 0) plan.sustained_seconds = o.sustained_seconds;
  if (o.max_algorithms > 0) plan.gemm_timing.max_algorithms = o.max_algorithms;
  if (o.budget_ms >= 0) plan.gemm_timing.budget_s = o.budget_ms * 1e-3;
  plan.out_path = o.out;
  plan.command = o.command;
  plan.date = utc_now();
  return plan;
}

// Set by SIGINT/SIGTERM during a measurement run: the loop finishes the measurement in
// progress, saves an incomplete profile and stops (CalibrationPlan::stop_requested). A second
// signal takes the default action, so a stuck run can still be killed.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void request_stop(int signal_number) {
  g_stop_signal = signal_number;
  std::signal(signal_number, SIG_DFL);
}

// Installs the handlers for the run's lifetime, restoring the previous ones after it.
class StopOnSignal {
 public:
  StopOnSignal() {
    g_stop_signal = 0;
    int_ = std::signal(SIGINT, request_stop);
    term_ = std::signal(SIGTERM, request_stop);
  }
  ~StopOnSignal() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  void (*int_)(int) = SIG_DFL;
  void (*term_)(int) = SIG_DFL;
};

int run_measure(const CalibrateOptions& o) {
  auto plan = plan_for(o);
  if (!plan) return fail(plan.errors());
  if (o.dry_run) return print_plan(*plan);
  auto bench = calibrate::make_benchmarker(o.backend, nullptr, nullptr);
  if (!bench) return fail(bench.errors());
  const std::vector<std::string> offered = (*bench)->gemm_dtypes();
  for (const std::string& d : plan->dtypes)
    if (std::find(offered.begin(), offered.end(), d) == offered.end())
      return fail(
          {Diagnostic{{},
                      "--dtypes",
                      d,
                      fmt::format("this device runs GEMMs in {}", fmt::join(offered, ", "))}});
  calibrate::CalibrationPlan run_plan = *plan;
  run_plan.stop_requested = [] { return g_stop_signal != 0; };
  StopOnSignal stop;
  // One progress bar for a multi-process run: rank 0's.
  auto profile = calibrate::run_calibration(
      **bench, run_plan, (*bench)->is_reporting_rank() ? progress_bar() : calibrate::ProgressFn{});
  if (!profile) return fail(profile.errors());
  if (!(*bench)->is_reporting_rank()) return profile->complete ? 0 : 128 + g_stop_signal;
  if (profile->complete) {
    std::fprintf(stderr, "wrote %s\n", o.out.c_str());
    return 0;
  }
  std::fprintf(stderr, "interrupted: wrote %s with complete: false; missing: %s\n", o.out.c_str(),
               fmt::format("{}", fmt::join(profile->missing, ", ")).c_str());
  return 128 + g_stop_signal;  // the shell's convention for a run ended by a signal
}

int run_import(const ImportCliOptions& o, const std::string& command) {
  auto profile = calibrate::import_nccl_tests(o.files, o.import);
  if (!profile) return fail(profile.errors());
  CalibrationProfile p = std::move(profile).value();
  p.provenance.command = command;
  p.provenance.date = utc_now();
  auto w = write_profile_atomically(p, o.out);
  if (!w) return fail(w.errors());
  std::fprintf(stderr, "wrote %s (%zu collectives)\n", o.out.c_str(), p.collectives.size());
  // What was read leniently and where each fit holds (also in the profile's notes).
  for (const std::string& note : p.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return 0;
}

// The command as a user would type it again (recorded in the profile's provenance).
std::string command_line(const CalibrateOptions& o) {
  std::string c = "meshplan calibrate --backend " + o.backend + (o.quick ? " --quick" : "");
  for (const auto& [flag, on] :
       {std::pair{" --gemm", o.gemm}, {" --hbm", o.hbm}, {" --nccl", o.nccl}})
    if (on) c += flag;
  for (const std::string& m : o.models) c += " --model " + m;
  if (!o.models.empty())
    c += fmt::format(" --tp {} --tokens {} --ep {}", fmt::join(o.tps, ","),
                     fmt::join(o.tokens, ","), fmt::join(o.eps, ","));
  if (!o.dtypes.empty()) c += fmt::format(" --dtypes {}", fmt::join(o.dtypes, ","));
  if (o.sustained_seconds >= 0) c += fmt::format(" --sustained-seconds {:g}", o.sustained_seconds);
  if (o.max_algorithms > 0) c += fmt::format(" --algorithms {}", o.max_algorithms);
  if (o.budget_ms >= 0) c += fmt::format(" --budget-ms {:g}", o.budget_ms);
  return c + " --out " + o.out;
}

// The import as a user would type it again, with every option that shaped the profile.
std::string import_command_line(const ImportCliOptions& o) {
  std::string c = "meshplan calibrate import nccl-tests";
  for (const std::string& f : o.files) c += " " + f;
  if (!o.import.collective.empty()) c += " --collective " + o.import.collective;
  if (o.import.ranks > 0) c += fmt::format(" --ranks {}", o.import.ranks);
  if (o.import.nodes > 0) c += fmt::format(" --nodes {}", o.import.nodes);
  if (!o.import.level.empty()) c += " --level " + o.import.level;
  return c + " --out " + o.out;
}

void add_import(CLI::App* sub, int& exit_code) {
  auto o = std::make_shared<ImportCliOptions>();
  CLI::App* imp = sub->add_subcommand("import", "import measurements made by other tools");
  imp->require_subcommand(1);
  CLI::App* nt = imp->add_subcommand("nccl-tests", "import nccl-tests logs (text or -J JSON)");
  nt->add_option("files", o->files, "nccl-tests output files")
      ->required()
      ->check(CLI::ExistingFile);
  nt->add_option("--out", o->out, "profile to write")->capture_default_str();
  nt->add_option("--collective", o->import.collective, "collective, when the log does not say")
      ->check(CLI::IsMember(collective_names()));
  nt->add_option("--ranks", o->import.ranks, "ranks in the run")
      ->check(integer_range(1, kMaxClusterGpus));
  nt->add_option("--nodes", o->import.nodes, "nodes in the run")
      ->check(integer_range(1, kMaxClusterGpus));
  nt->add_option("--level", o->import.level, "network level name (default nvlink / ib)");
  nt->callback([o, &exit_code] { exit_code = run_import(*o, import_command_line(*o)); });
}

struct MergeOptions {
  std::vector<std::string> files;
  std::string out = "profile.yaml";
  std::string name;
  std::vector<std::string> sources;  // --source: facts to record (clocks, power limit, ...)
};

int run_merge(const MergeOptions& o) {
  std::vector<ProfileLayer> layers;
  std::vector<Diagnostic> errors;
  for (const std::string& path : o.files) {
    auto p = load_profile(path);
    if (!p)
      errors.insert(errors.end(), p.errors().begin(), p.errors().end());
    else
      layers.push_back({std::move(p).value(), path});
  }
  if (!errors.empty()) return fail(errors);
  const std::string name = o.name.empty() ? layers.back().profile.name : o.name;
  CalibrationProfile merged = merge_profiles(layers, name);
  merged.provenance.sources.insert(merged.provenance.sources.begin(), o.sources.begin(),
                                   o.sources.end());
  auto w = write_profile_atomically(merged, o.out);
  if (!w) return fail(w.errors());
  std::fprintf(stderr, "wrote %s (%zu profiles merged; later ones win section by section)\n",
               o.out.c_str(), layers.size());
  return 0;
}

void add_merge(CLI::App* sub, int& exit_code) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* merge = sub->add_subcommand(
      "merge",
      "overlay profiles: each later file's sections replace the earlier ones' (say a "
      "one-node calibration over a published multi-node profile)");
  merge->add_option("files", o->files, "profiles, base first")
      ->required()
      ->expected(2, -1)
      ->check(CLI::ExistingFile);
  merge->add_option("--out", o->out, "profile to write")->capture_default_str();
  merge->add_option("--name", o->name, "name of the merged profile (default: the last file's)");
  merge->add_option("--source", o->sources,
                    "a fact to record first in provenance.sources (device clocks, power limit, "
                    "...; repeatable)");
  merge->callback([o, &exit_code] { exit_code = run_merge(*o); });
}

struct CompareOptions {
  std::string base, other;
  std::string gpu;  // price both profiles' GEMMs for this GPU of the catalog
  std::string format = "table";
};

int run_compare(const CompareOptions& o) {
  auto base = load_profile(o.base);
  auto other = load_profile(o.other);
  std::vector<Diagnostic> errors;
  if (!base) errors.insert(errors.end(), base.errors().begin(), base.errors().end());
  if (!other) errors.insert(errors.end(), other.errors().begin(), other.errors().end());
  if (!errors.empty()) return fail(errors);
  ProfileComparison c = compare_profiles(base.value(), other.value());
  if (!o.gpu.empty()) compare_gemm_models(base.value(), other.value(), *find_gpu(o.gpu), c);
  if (o.format == "json")
    std::cout << profile_comparison_json(c).dump(2) << "\n";
  else if (o.format == "md")
    std::cout << profile_comparison_markdown(c);
  else
    std::cout << profile_comparison_table(c);
  return 0;
}

void add_compare(CLI::App* sub, int& exit_code) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* compare = sub->add_subcommand(
      "compare",
      "two profiles side by side: a repeat on another machine against the first, a measured "
      "profile against the published one (ratios other/base at the samples both measured)");
  compare->add_option("base", o->base, "the profile compared against")
      ->required()
      ->check(CLI::ExistingFile);
  compare->add_option("other", o->other, "the profile compared with it")
      ->required()
      ->check(CLI::ExistingFile);
  compare
      ->add_option("--gpu", o->gpu,
                   "also price both profiles' GEMMs with the cost model for this GPU, at every "
                   "shape either measured (base time / other time)")
      ->check(CLI::IsMember(gpu_names()));
  add_format_option(compare, o->format, {"table", "json", "md"});
  compare->callback([o, &exit_code] { exit_code = run_compare(*o); });
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateOptions>();
  o->backend = calibrate::backend_names().front();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "measure GEMM, HBM and collective throughput into a calibration profile");
  sub->add_option(
         "--backend", o->backend,
         "cuda (GPUs) or cpu (tests, laptops); launched as several processes (mpirun, srun) each "
         "rank drives one GPU (cuda) or the ranks time MPI collectives between them (cpu)")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  sub->add_flag("--quick", o->quick, "about 2 minutes on an 8-GPU node (full: about 15)");
  sub->add_flag("--gemm", o->gemm, "measure GEMMs (with --hbm/--nccl: only those sections)");
  sub->add_flag("--hbm", o->hbm, "measure memory bandwidth");
  sub->add_flag("--nccl", o->nccl, "measure collectives");
  sub->add_option("--model", o->models,
                  "also time these models' layer GEMMs (YAML or config.json; repeatable)");
  sub->add_option("--tp", o->tps, "tensor-parallel degrees for --model (default 1)")
      ->check(integer_range(1, kMaxWidth))
      ->delimiter(',');
  sub->add_option("--tokens", o->tokens,
                  "tokens per micro-batch for --model (sequence × micro-batch; default 4096)")
      ->check(integer_range(1, kMaxSeqLen))
      ->delimiter(',');
  sub->add_option("--ep", o->eps,
                  "expert-parallel degrees for --model's MoE layers: each routed expert is timed "
                  "at the rows it gets at each degree (tokens·top_k·capacity·ep/experts; degrees "
                  "that do not divide the expert count are skipped; default 1,8)")
      ->check(integer_range(1, kMaxWidth))
      ->delimiter(',');
  sub->add_option("--dtypes", o->dtypes, "GEMM dtypes to measure (default: all the device has)")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp32"}))
      ->delimiter(',');
  sub->add_option("--sustained-seconds", o->sustained_seconds,
                  "run one 8192³ GEMM back to back this long for the sustained/burst ratio "
                  "(full default 30, quick 0)")
      ->check(finite_number(0, 3600));
  sub->add_option("--algorithms", o->max_algorithms,
                  "cuBLASLt algorithms timed per shape (full default 8, quick 4)")
      ->check(CLI::Range(1, 64));
  sub->add_option(
         "--budget-ms", o->budget_ms,
         "time per GEMM shape before iterations and algorithms are cut (full 50, quick 20)")
      ->check(finite_number(0, 60000));
  sub->add_flag("--dry-run", o->dry_run, "print what would be measured and exit");
  sub->add_option("--out", o->out, "profile to write (rewritten after every section)")
      ->capture_default_str();
  add_import(sub, exit_code);
  add_merge(sub, exit_code);
  add_compare(sub, exit_code);
  sub->callback([o, sub, &exit_code] {
    if (!sub->get_subcommands().empty()) return;  // import ran
    o->command = command_line(*o);
    exit_code = run_measure(*o);
  });
  return sub;
}

}  // namespace meshplan::cli
