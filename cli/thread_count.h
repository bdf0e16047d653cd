// The --threads option that the searching subcommands share. Output never depends on the count
// (the search merges in a fixed order); it only changes how long the command takes.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <thread>

namespace meshplan::cli {

// More threads than this is a typo (a thread each costs a stack; machines have ≤ 1024 cores).
constexpr int kMaxThreads = 1024;

// The worker threads to use: `requested` when positive, otherwise (0, the default) one per
// hardware thread, and at least one when the count is unknown.
inline int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Adds --threads (a non-negative count; 0 means every core) to `sub`, stored in `threads`.
inline CLI::Option* add_threads_option(CLI::App* sub, int& threads, const std::string& help) {
  return sub->add_option("--threads", threads, help)->check(CLI::Range(0, kMaxThreads));
}

}  // namespace meshplan::cli
