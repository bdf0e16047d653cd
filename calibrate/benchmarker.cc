#include "calibrate/benchmarker.h"

#include <algorithm>

namespace meshplan::calibrate {

std::vector<int64_t> collective_groups_of(int64_t world) {
  std::vector<int64_t> out;
  for (int64_t g = 2; g < world; g *= 2)
    if (world % g == 0) out.push_back(g);
  if (world >= 2) out.push_back(world);
  return out;
}

int64_t collective_floats(const std::string& collective, int64_t group, int64_t bytes) {
  if (collective == "all_reduce" || collective == "send_recv")
    return std::max<int64_t>(bytes / 4, 1);
  return std::max<int64_t>(bytes / 4 / group, 1) * group;
}

bool has_in_place_form(const std::string& collective) {
  return collective != "all_to_all" && collective != "send_recv";
}

}  // namespace meshplan::calibrate
