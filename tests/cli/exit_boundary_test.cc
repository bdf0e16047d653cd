// cli/exit_boundary.h: nothing a subcommand throws escapes main as an abort.
#include "cli/exit_boundary.h"

#include <doctest/doctest.h>

#include <new>
#include <stdexcept>

using namespace meshplan;
using namespace meshplan::cli;

namespace {

const std::vector<std::string> kArgs = {"meshplan", "simulate", "--model", "m.yaml"};

}  // namespace

TEST_CASE("an exception escaping a subcommand is an internal error, exit 3, with the command") {
  std::string err;
  const int rc = run_within_boundary([]() -> int { throw std::bad_alloc(); }, kArgs,
                                     [&](const std::string& m) { err += m; });
  CHECK(rc == 3);
  CHECK(err ==
        "internal error: std::bad_alloc\n"
        "  while running: meshplan simulate --model m.yaml\n");
}

TEST_CASE("an exception of no standard type is an internal error too") {
  std::string err;
  const int rc = run_within_boundary([]() -> int { throw 42; }, kArgs,
                                     [&](const std::string& m) { err += m; });
  CHECK(rc == 3);
  CHECK(err ==
        "internal error: an exception of unknown type\n"
        "  while running: meshplan simulate --model m.yaml\n");
}

TEST_CASE("an input error that escaped a library is printed as diagnostics, exit 2") {
  std::string err;
  const int rc = run_within_boundary(
      []() -> int {
        throw InputError{{Diagnostic{{"m.yaml", 0, 0, ""}, "layers", "0", "must be positive"}}};
      },
      kArgs, [&](const std::string& m) { err += m; });
  CHECK(rc == 2);
  CHECK(err == "m.yaml: error: field 'layers' = '0': must be positive\n");
}

TEST_CASE("a subcommand's own status passes through the boundary") {
  std::string err;
  CHECK(run_within_boundary([] { return 1; }, kArgs, [&](const std::string& m) { err += m; }) == 1);
  CHECK(err.empty());
}
