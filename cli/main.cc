// meshplan: a parallelism planner and cluster simulator for large-model training.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/command_lookup.h"
#include "cli/commands.h"
#include "cli/exit_boundary.h"

namespace {

struct CommandEntry {
  const char* name;
  meshplan::cli::AddCommand add;
};

// Subcommands, in the order `meshplan --help` lists them.
const CommandEntry kCommands[] = {
    {"memory", meshplan::cli::add_memory_command},
    {"estimate", meshplan::cli::add_estimate_command},
    {"plan", meshplan::cli::add_plan_command},
    {"sweep", meshplan::cli::add_sweep_command},
    {"serve", meshplan::cli::add_serve_command},
    {"simulate", meshplan::cli::add_simulate_command},
    {"validate", meshplan::cli::add_validate_command},
    {"bench", meshplan::cli::add_bench_command},
    {"calibrate", meshplan::cli::add_calibrate_command},
    {"regress", meshplan::cli::add_regress_command},
    {"report", meshplan::cli::add_report_command},
    {"export", meshplan::cli::add_export_command},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshplan: plan DP/TP/PP/CP/EP layouts for large-model training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "meshplan 0.1.0");
  int exit_code = 0;
  for (const auto& c : kCommands) c.add(app, exit_code);
  const std::vector<std::string> args(argv, argv + argc);
  return meshplan::cli::run_within_boundary(
      [&] {
        std::vector<std::string> words = args;
        std::string err;
        if (auto rc = meshplan::cli::handle_first_word(app, words, err)) {
          std::fputs(err.c_str(), stderr);
          return *rc;
        }
        std::vector<const char*> word_ptrs;
        for (const std::string& w : words) word_ptrs.push_back(w.c_str());
        try {
          app.parse(static_cast<int>(word_ptrs.size()), word_ptrs.data());
        } catch (const CLI::ExtrasError&) {
          std::fputs(meshplan::cli::unexpected_arguments_error(app).c_str(), stderr);
          return 2;
        } catch (const CLI::ParseError& e) {
          if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
          std::fputs(meshplan::cli::option_error(app, e).c_str(), stderr);
          return 2;
        }
        return exit_code;
      },
      args, [](const std::string& message) { std::fputs(message.c_str(), stderr); });
}
