// meshplan: a parallelism planner and cluster simulator for large-model training and serving.
#include <fmt/format.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

// glibc's malloc serves a block of 128 KiB or more by a fresh mmap, returned to the system when
// freed, and gives back the top of its heap past 128 KiB free: a search that grows lists and
// empties caches over and over then takes each page again from the kernel, one page fault per
// 4 KiB (qwen3-235b on 4,096 GPUs: 10,800 faults, 7,800 with freed memory kept for reuse).
// A planner process is short-lived, so memory it freed stays with it for its next allocations.
void keep_freed_memory() {
#if defined(__GLIBC__)
  constexpr int kKeptBytes = 256 << 20;
  mallopt(M_MMAP_THRESHOLD, kKeptBytes);
  mallopt(M_TRIM_THRESHOLD, kKeptBytes);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  CLI::App app{"meshplan: plan DP/TP/PP/CP/EP layouts for large-model training and serving"};
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
