// The one place exceptions stop: whatever a subcommand throws becomes a message and an exit
// status, never an abort. Input errors are supposed to arrive as values; an exception here is
// a bug, reported as such with the command line that triggered it.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace meshplan::cli {

constexpr int kExitInternalError = 3;

// "internal error: WHAT\n  while running: ARGS\n" (args joined by spaces).
inline std::string internal_error_message(const std::string& what,
                                          const std::vector<std::string>& args) {
  return fmt::format("internal error: {}\n  while running: {}\n", what, fmt::join(args, " "));
}

// Runs `body` and returns its exit status. An InputError that escaped a library is printed as
// diagnostics (exit 2); any other exception as an internal error (exit 3). Messages go to `err`.
template <class Body, class Print>
int run_within_boundary(Body&& body, const std::vector<std::string>& args, Print&& err) {
  try {
    return body();
  } catch (const InputError& e) {
    err(format_diagnostics(e.diagnostics));
    return 2;
  } catch (const std::exception& e) {
    err(internal_error_message(e.what(), args));
  } catch (...) {
    err(internal_error_message("an exception of unknown type", args));
  }
  return kExitInternalError;
}

}  // namespace meshplan::cli
