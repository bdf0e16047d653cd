#include "calibrate/launch_env.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <initializer_list>

namespace meshplan::calibrate {
namespace {

// Sets the launcher variables for one test and clears them after it.
struct LauncherEnv {
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                           "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"};
  LauncherEnv() { clear(); }
  ~LauncherEnv() { clear(); }
  static void clear() {
    for (const char* name : kNames) unsetenv(name);
  }
  void set(const char* name, const char* value) { setenv(name, value, 1); }
};

TEST_CASE("one process when no launcher announced a count") {
  LauncherEnv env;
  CHECK(launched_processes() == 1);
}

TEST_CASE("each launcher's variable gives the process count, the largest wins") {
  LauncherEnv env;
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  CHECK(launched_processes() == 2);
  env.set("PMIX_SIZE", "16");
  CHECK(launched_processes() == 16);
  LauncherEnv::clear();
  env.set("PMI_SIZE", "4");
  CHECK(launched_processes() == 4);
  LauncherEnv::clear();
  env.set("SLURM_STEP_NUM_TASKS", "8");
  CHECK(launched_processes() == 8);
}

TEST_CASE("an sbatch allocation's task count alone is one process") {
  LauncherEnv env;
  env.set("SLURM_NTASKS", "16");  // set for the batch script, which runs as one process
  CHECK(launched_processes() == 1);
}

TEST_CASE("a count that is not a positive decimal integer is ignored") {
  LauncherEnv env;
  for (const char* bad : {"", "0", "-3", "2x", "abc", "99999999999999999999"}) {
    env.set("OMPI_COMM_WORLD_SIZE", bad);
    CHECK_MESSAGE(launched_processes() == 1, bad);
  }
}

}  // namespace
}  // namespace meshplan::calibrate
