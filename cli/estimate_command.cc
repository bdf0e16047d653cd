// meshplan estimate: one layout's memory, step time, bubble and MFU.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "planner/cost_model.h"
#include "reports/estimate_render.h"
#include "reports/layer_ops_render.h"
#include "reports/training_time_render.h"

namespace meshplan::cli {

static int run_estimate(const InputOptions& opts, const CostOptions& cost, double tokens,
                        bool ops) {
  std::optional<Planning> p = load_planning(opts, cost, /*with_layout=*/true);
  if (!p) return kExitBadInput;
  CostModel& model = *p->model;
  const Inputs* in = &p->inputs;
  Estimate e = model.evaluate(in->layout);
  if (opts.format == "json") {
    nlohmann::ordered_json j = estimate_json(e);
    add_framework_json(j, model.options());
    if (tokens > 0) j["time_to_train"] = time_to_train_json(tokens, e, in->gpus);
    if (ops) j["layer_ops"] = layer_ops_json(layer_ops_report(model, in->layout));
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << estimate_table(e, model);
    if (tokens > 0)
      std::cout << time_to_train_line(tokens, training_time(tokens, e.tokens_per_s, in->gpus, 0));
    std::cout << closing_lines(model);
    if (ops) std::cout << layer_ops_table(layer_ops_report(model, in->layout));
  }
  return 0;
}

CLI::App* add_estimate_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<InputOptions>();
  auto cost = std::make_shared<CostOptions>();
  auto tokens = std::make_shared<double>(0);
  auto ops = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("estimate", "memory, step time, bubble and MFU of one layout");
  add_input_options(sub, *opts, /*with_layout=*/true);
  add_cost_options(sub, *opts, *cost);
  add_tokens_option(sub, *tokens);
  add_format_option(sub, opts->format, {"table", "json"});
  sub->add_flag("--ops", *ops,
                "also price one micro-batch's layer op by op: each GEMM's shape, FLOPs and "
                "seconds, attention, the memory-bound ops, exposed communication (JSON: "
                "layer_ops)");
  sub->callback([opts, cost, tokens, ops, &exit_code] {
    exit_code = run_estimate(*opts, *cost, *tokens, *ops);
  });
  return sub;
}

}  // namespace meshplan::cli
