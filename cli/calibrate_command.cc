// meshplan calibrate: measure GEMM, HBM and NCCL throughput into a profile, or import
// nccl-tests logs (issue 5). Thin over meshplan_calibrate; the only place that prints.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>

#include "calibrate/backend.h"
#include "calibrate/calibration_run.h"
#include "calibrate/model_gemm_shapes.h"
#include "calibrate/nccl_tests_import.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "core/cluster_spec.h"
#include "core/diagnostic.h"
#include "core/model_limits.h"
#include "core/model_spec.h"

namespace meshplan::cli {
namespace {

constexpr int kBadInput = 2;

struct CalibrateOptions {
  std::string backend = "cpu";
  bool quick = false, gemm = false, hbm = false, nccl = false;
  std::string model;
  int64_t tp = 1;
  int64_t micro_batch = 1;
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

int run_measure(const CalibrateOptions& o) {
  auto bench = calibrate::make_benchmarker(o.backend, nullptr, nullptr);
  if (!bench) return fail(bench.errors());
  calibrate::CalibrationPlan plan =
      o.backend == "cpu" ? calibrate::cpu_plan(o.quick) : calibrate::cuda_plan(o.quick);
  if (o.gemm || o.hbm || o.nccl) {  // a section flag selects only the named sections
    plan.gemm = o.gemm;
    plan.hbm = o.hbm;
    plan.collectives = o.nccl;
  }
  if (!o.model.empty()) {
    auto model = load_model(o.model);
    if (!model) return fail(model.errors());
    // Model shapes first: they matter most to the planner. 4096 tokens per sequence (issue 5).
    auto shapes = calibrate::model_gemm_shapes(*model, o.tp, 4096 * o.micro_batch);
    shapes.insert(shapes.end(), plan.gemm_shapes.begin(), plan.gemm_shapes.end());
    plan.gemm_shapes = shapes;
  }
  plan.out_path = o.out;
  plan.command = o.command;
  plan.date = utc_now();
  auto profile = calibrate::run_calibration(**bench, plan, progress_bar());
  if (!profile) return fail(profile.errors());
  if ((*bench)->is_reporting_rank()) std::fprintf(stderr, "wrote %s\n", o.out.c_str());
  return 0;
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
  nt->callback([o, nt, &exit_code] {
    std::string cmd = "meshplan calibrate import nccl-tests";
    for (const auto& f : o->files) cmd += " " + f;
    exit_code = run_import(*o, cmd + " --out " + o->out);
    (void)nt;
  });
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateOptions>();
  o->backend = calibrate::backend_names().front();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "measure GEMM, HBM and collective throughput into a calibration profile");
  sub->add_option("--backend", o->backend, "cuda (GPUs) or cpu (tests, laptops)")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  sub->add_flag("--quick", o->quick, "about 2 minutes on an 8-GPU node (full: about 15)");
  sub->add_flag("--gemm", o->gemm, "measure GEMMs (with --hbm/--nccl: only those sections)");
  sub->add_flag("--hbm", o->hbm, "measure memory bandwidth");
  sub->add_flag("--nccl", o->nccl, "measure collectives");
  sub->add_option("--model", o->model, "also time this model's layer GEMMs (YAML or config.json)");
  sub->add_option("--tp", o->tp, "tensor-parallel degree for --model")
      ->check(integer_range(1, kMaxWidth));
  sub->add_option("--mbs", o->micro_batch, "micro-batch (sequences of 4096 tokens) for --model")
      ->check(integer_range(1, kMaxGlobalBatch));
  sub->add_option("--out", o->out, "profile to write (rewritten after every section)")
      ->capture_default_str();
  add_import(sub, exit_code);
  sub->callback([o, sub, &exit_code] {
    if (!sub->get_subcommands().empty()) return;  // import ran
    o->command = "meshplan calibrate --backend " + o->backend + (o->quick ? " --quick" : "") +
                 (o->model.empty() ? "" : " --model " + o->model + fmt::format(" --tp {}", o->tp)) +
                 " --out " + o->out;
    exit_code = run_measure(*o);
  });
  return sub;
}

}  // namespace meshplan::cli
