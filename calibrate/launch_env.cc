#include "calibrate/launch_env.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace meshplan::calibrate {
namespace {

// A positive decimal count in `name`, else 1.
int env_count(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > INT_MAX) return 1;
  return static_cast<int>(value);
}

}  // namespace

int launched_processes() {
  return std::max({env_count("OMPI_COMM_WORLD_SIZE"), env_count("PMI_SIZE"), env_count("PMIX_SIZE"),
                   env_count("SLURM_STEP_NUM_TASKS")});
}

}  // namespace meshplan::calibrate
