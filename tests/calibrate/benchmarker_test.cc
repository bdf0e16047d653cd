#include "calibrate/benchmarker.h"

#include <doctest/doctest.h>

namespace meshplan::calibrate {
namespace {

TEST_CASE("collectives are measured on power-of-two groups dividing the world, then the world") {
  CHECK(collective_groups_of(1).empty());
  CHECK(collective_groups_of(2) == std::vector<int64_t>{2});
  CHECK(collective_groups_of(8) == std::vector<int64_t>{2, 4, 8});
  CHECK(collective_groups_of(12) == std::vector<int64_t>{2, 4, 12});
  CHECK(collective_groups_of(16) == std::vector<int64_t>{2, 4, 8, 16});
  CHECK(collective_groups_of(6) == std::vector<int64_t>{2, 6});
}

}  // namespace
}  // namespace meshplan::calibrate
