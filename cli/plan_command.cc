// meshplan plan: exhaustive layout search, ranked.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "cli/thread_count.h"
#include "planner/layout_search.h"
#include "planner/simulated_plan.h"
#include "reports/estimate_render.h"
#include "reports/training_time_render.h"

namespace meshplan::cli {
namespace {

struct PlanOptions {
  InputOptions in;
  CostOptions cost;
  std::string fix, objective = "mfu";
  int top = 10;
  int threads = 0;  // 0: hardware concurrency
  int simulate_top = 0;
  double tokens = 0;  // token budget; 0: no time to train
  int64_t max_uneven_deficit = SearchOptions{}.max_uneven_deficit;
};

// A progress bar on stderr, only when stderr is a terminal (cli/progress_bar.h).
std::function<void(int64_t, int64_t)> progress_bar() {
  if (!isatty(fileno(stderr))) return nullptr;
  auto bar = std::make_shared<ProgressBar>(
      [](const std::string& s) { std::fputs(s.c_str(), stderr); },
      [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
      });
  return [bar](int64_t done, int64_t total) { bar->update(done, total); };
}

int run_plan(const PlanOptions& o) {
  std::optional<Planning> p = load_planning(o.in, o.cost, /*with_layout=*/false);
  if (!p) return kExitBadInput;
  const Inputs* in = &p->inputs;
  CostModel& model = *p->model;
  SearchOptions search;
  if (!o.fix.empty()) {
    Result<LayoutFix> fix = parse_layout_fix(o.fix);
    if (!fix) return print_errors(fix.errors());
    search.fix = fix.value();
  }
  search.objective = o.objective == "memory"         ? Objective::memory
                     : o.objective == "tokens_per_s" ? Objective::tokens_per_s
                                                     : Objective::mfu;
  search.top_k = o.top;
  search.max_uneven_deficit = o.max_uneven_deficit;
  search.threads = thread_count(o.threads);
  search.progress = progress_bar();
  search.launcher = launcher_check(model.options(), o.in);
  SearchResult r = search_layouts(model, in->gpus, search);
  if (auto error = check_search_size(r, "plan")) return print_errors({*error});
  if (o.simulate_top > 0) {
    std::vector<Diagnostic> errors =
        rerank_by_simulation(model, r, o.simulate_top, search.objective);
    if (!errors.empty()) return print_errors(errors);
  }
  if (o.in.format == "json") {
    nlohmann::ordered_json j = plan_json(r);
    add_framework_json(j, model.options());
    if (o.tokens > 0 && !r.ranked.empty())
      j["time_to_train"] = time_to_train_json(o.tokens, r.ranked.front(), in->gpus);
    std::cout << j.dump(2) << "\n";
  } else if (o.in.format == "csv") {
    std::cout << plan_csv(r);
  } else if (o.in.format == "md") {
    std::cout << plan_markdown(r);
  } else {
    std::cout << plan_table(r, model, in->gpus);
    if (o.tokens > 0 && !r.ranked.empty()) {
      const Estimate& best = r.ranked.front();
      std::cout << time_to_train_line(o.tokens,
                                      training_time(o.tokens, best.tokens_per_s, in->gpus, 0));
    }
    std::cout << closing_lines(model);
  }
  return 0;
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand("plan", "search every layout and rank those that fit");
  add_input_options(sub, o->in, /*with_layout=*/false);
  add_cost_options(sub, o->in, o->cost);
  add_launcher_option(sub, o->in);
  sub->add_option("--fix", o->fix, "pin layout fields, e.g. tp=8,pp=16");
  sub->add_option("--objective", o->objective, "ranking: mfu | tokens_per_s | memory")
      ->check(CLI::IsMember({"mfu", "tokens_per_s", "memory"}));
  sub->add_option("--top", o->top, "layouts to show")->check(CLI::Range(1, 10000));
  sub->add_option("--max-uneven-deficit", o->max_uneven_deficit,
                  "search pp·vpp chunk counts that leave up to this many layers short of equal "
                  "chunks (default 2; DeepSeek-V3's 61 layers over 16 stages need 3)")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000}));
  add_threads_option(sub, o->threads,
                     "worker threads (default: all cores); output is the same for any count");
  sub->add_option("--simulate-top", o->simulate_top,
                  "simulate the K best layouts and re-rank them by simulated step time")
      ->check(CLI::Range(0, 1000));
  add_tokens_option(sub, o->tokens);
  add_format_option(sub, o->in.format, {"table", "json", "csv", "md"});
  sub->callback([o, &exit_code] { exit_code = run_plan(*o); });
  return sub;
}

}  // namespace meshplan::cli
