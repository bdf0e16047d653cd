// meshplan export: the chosen layout as launcher configuration (Megatron-LM arguments, DeepSpeed
// JSON, NeMo YAML keys, torchtitan overrides).
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "launchers/launcher_export.h"
#include "planner/framework_preset.h"

namespace meshplan::cli {
namespace {

struct ExportOptions {
  InputOptions in;
  CostOptions job;  // the job options alone (add_job_options)
  std::string launcher;
};

int run_export(const ExportOptions& o) {
  std::optional<Inputs> in = load_inputs(o.in, /*with_layout=*/true);
  if (!in) return kExitBadInput;
  CostOptions job = o.job;
  Result<bool> grads = apply_grad_reduce_dtype(o.in.grad_reduce_dtype, job,
                                               SourceLocation{"--grad-reduce-dtype", 0, 0, ""});
  if (!grads) return print_errors(grads.errors());
  Result<std::string> text =
      export_launcher(*parse_launcher(o.launcher), in->model, in->training, in->layout, job.job());
  if (!text) return print_errors(text.errors());
  std::cout << text.value();
  return 0;
}

}  // namespace

CLI::App* add_export_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export", "print a layout as launcher configuration");
  add_input_options(sub, o->in, /*with_layout=*/true);
  add_job_options(sub, o->in, o->job);
  sub->add_option("--format", o->launcher,
                  "launcher: megatron | deepspeed | nemo (NeMo 1 YAML) | nemo2 (NeMo 2 recipe) | "
                  "torchtitan (command-line overrides) | "
                  "torchtitan-toml (a job file)")
      ->required()
      ->check(CLI::IsMember(launcher_names()));
  sub->callback([o, &exit_code] { exit_code = run_export(*o); });
  return sub;
}

}  // namespace meshplan::cli
