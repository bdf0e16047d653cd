// Runs this executable again as a child process and measures it from outside: wall time and
// peak resident memory (getrusage via wait4), for `meshplan bench`'s whole-process figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshplan::cli {

struct ProcessRun {
  double wall_s = 0;
  int64_t peak_rss_bytes = 0;
  int exit_code = 0;
};

// Runs /proc/self/exe with `args` (argv[1..]), its output sent to /dev/null. Empty when the
// child cannot be started or does not exit normally. Linux carries a process's peak RSS across
// exec, so a child's figure is at least this process's own peak at the spawn (own_peak_rss_bytes):
// measure before this process grows.
std::optional<ProcessRun> run_self(const std::vector<std::string>& args);

// This process's peak resident memory so far (VmHWM in /proc/self/status); 0 if unknown.
int64_t own_peak_rss_bytes();

}  // namespace meshplan::cli
