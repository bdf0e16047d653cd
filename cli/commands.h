// Subcommands of the meshplan executable: one file each, registered from the table in main.cc.
#pragma once

#include <CLI/CLI.hpp>

namespace meshplan::cli {

// Each adds its subcommand to `app`; when it runs, it stores its exit status in `exit_code`
// (0 ok, 1 a check failed, 2 bad input).
using AddCommand = CLI::App* (*)(CLI::App& app, int& exit_code);

CLI::App* add_memory_command(CLI::App& app, int& exit_code);
CLI::App* add_calibrate_command(CLI::App& app, int& exit_code);
CLI::App* add_estimate_command(CLI::App& app, int& exit_code);
CLI::App* add_plan_command(CLI::App& app, int& exit_code);
CLI::App* add_sweep_command(CLI::App& app, int& exit_code);
CLI::App* add_simulate_command(CLI::App& app, int& exit_code);
CLI::App* add_validate_command(CLI::App& app, int& exit_code);
CLI::App* add_bench_command(CLI::App& app, int& exit_code);
CLI::App* add_regress_command(CLI::App& app, int& exit_code);
CLI::App* add_report_command(CLI::App& app, int& exit_code);
CLI::App* add_export_command(CLI::App& app, int& exit_code);
CLI::App* add_serve_command(CLI::App& app, int& exit_code);

}  // namespace meshplan::cli
