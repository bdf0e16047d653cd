// meshplan memory: per-stage memory of one layout and whether it fits.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "planner/memory_model.h"
#include "reports/memory_render.h"

namespace meshplan::cli {

static int run_memory(const InputOptions& opts) {
  std::optional<Inputs> in = load_inputs(opts, /*with_layout=*/true);
  if (!in) return kExitBadInput;
  MemoryEstimate e = estimate_memory(in->model, in->cluster.gpu, in->layout, in->training);
  if (opts.format == "json") {
    std::cout << memory_json(e).dump(2) << "\n";
  } else {
    std::cout << memory_table(e, in->model, in->cluster, in->layout, in->training);
  }
  return 0;
}

CLI::App* add_memory_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<InputOptions>();
  CLI::App* sub =
      app.add_subcommand("memory", "per-GPU memory of each pipeline stage under a layout");
  add_input_options(sub, *opts, /*with_layout=*/true);
  add_format_option(sub, opts->format, {"table", "json"});
  sub->callback([opts, &exit_code] { exit_code = run_memory(*opts); });
  return sub;
}

}  // namespace meshplan::cli
