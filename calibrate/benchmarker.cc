#include "calibrate/benchmarker.h"

namespace meshplan::calibrate {

std::vector<int64_t> collective_groups_of(int64_t world) {
  std::vector<int64_t> out;
  for (int64_t g = 2; g < world; g *= 2)
    if (world % g == 0) out.push_back(g);
  if (world >= 2) out.push_back(world);
  return out;
}

}  // namespace meshplan::calibrate
