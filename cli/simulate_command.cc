// meshplan simulate: replay one layout's training step in the discrete-event simulator.
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "planner/simulated_plan.h"
#include "reports/simulation_render.h"
#include "simulator/trace_json.h"

namespace meshplan::cli {
namespace {

struct SimulateOptions {
  InputOptions in;
  CostOptions cost;
  std::string trace_path;
  int width = 100;
};

int run_simulate(const SimulateOptions& o) {
  std::optional<Planning> p = load_planning(o.in, o.cost, /*with_layout=*/true);
  if (!p) return kExitBadInput;
  const Inputs* in = &p->inputs;
  CostModel& model = *p->model;
  Estimate analytic = model.evaluate(in->layout);
  Result<sim::PipelineSimulation> s = simulate_layout(model, in->layout);
  if (!s) return print_errors(s.errors());
  if (!o.trace_path.empty()) {
    std::ofstream out(o.trace_path, std::ios::binary);
    sim::write_chrome_trace(out, s->pipeline.graph, s->timeline);
    if (!out) {
      return print_errors(
          {Diagnostic{{o.trace_path, 0, 0, ""}, "", "", "cannot write the trace file"}});
    }
  }
  if (o.in.format == "json")
    std::cout << simulation_json(analytic, s.value()).dump(2) << "\n";
  else
    std::cout << simulation_table(analytic, s.value(), o.width);
  return 0;
}

}  // namespace

CLI::App* add_simulate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* sub =
      app.add_subcommand("simulate", "replay one layout's step in the discrete-event simulator");
  add_input_options(sub, o->in, /*with_layout=*/true);
  add_cost_options(sub, o->in, o->cost);
  sub->add_option("--trace", o->trace_path,
                  "write a Chrome Trace Event JSON timeline (Perfetto, chrome://tracing)");
  sub->add_option("--width", o->width, "columns of the text Gantt chart")
      ->check(CLI::Range(10, 1000));
  add_format_option(sub, o->in.format, {"table", "json"});
  sub->callback([o, &exit_code] { exit_code = run_simulate(*o); });
  return sub;
}

}  // namespace meshplan::cli
