// meshplan memory: per-stage memory of one layout and whether it fits.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "planner/memory_model.h"
#include "reports/memory_render.h"

namespace meshplan::cli {

namespace {

struct MemoryCliOptions {
  InputOptions in;
  CostOptions cost;
};

// The framework's memory rules (gradient dtype, ZeRO-3 live parameters, FP8 amax history,
// what FP8 stores) come from its preset, as in estimate and plan.
int run_memory(const MemoryCliOptions& o) {
  std::optional<Planning> p = load_planning(o.in, o.cost, /*with_layout=*/true);
  if (!p) return kExitBadInput;
  const Inputs* in = &p->inputs;
  const InputOptions& opts = o.in;
  MemoryEstimate e = estimate_memory(in->model, in->cluster.gpu, in->layout, in->training,
                                     p->model->options().memory);
  if (opts.format == "json") {
    std::cout << memory_json(e).dump(2) << "\n";
  } else {
    std::cout << memory_table(e, in->model, in->cluster, in->layout, in->training);
  }
  return 0;
}

}  // namespace

CLI::App* add_memory_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<MemoryCliOptions>();
  CLI::App* sub =
      app.add_subcommand("memory", "per-GPU memory of each pipeline stage under a layout");
  add_input_options(sub, opts->in, /*with_layout=*/true);
  add_cost_options(sub, opts->in, opts->cost);
  add_format_option(sub, opts->in.format, {"table", "json"});
  sub->callback([opts, &exit_code] { exit_code = run_memory(*opts); });
  return sub;
}

}  // namespace meshplan::cli
