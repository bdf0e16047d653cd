// core/collective.cc: the collectives table (nccl-tests doc/PERFORMANCE.md factors).
#include "core/collective.h"

#include <doctest/doctest.h>

#include <string>

namespace meshplan {
namespace {

TEST_CASE("bus factors over 8 ranks: 2·7/8, 7/8, 7/8, 7/8, 1, 1, 1") {
  const double expected[] = {1.75, 0.875, 0.875, 0.875, 1.0, 1.0, 1.0};
  REQUIRE(collectives().size() == 7);
  for (size_t i = 0; i < collectives().size(); ++i)
    CHECK(collectives()[i].bus_factor(8) == expected[i]);
}

TEST_CASE("ring steps over 4 ranks: all-reduce 6, all-gather 3, send/recv 1") {
  CHECK(collective_info(Collective::all_reduce).ring_steps(4) == 6.0);
  CHECK(collective_info(Collective::all_gather).ring_steps(4) == 3.0);
  CHECK(collective_info(Collective::reduce_scatter).ring_steps(4) == 3.0);
  CHECK(collective_info(Collective::all_to_all).ring_steps(4) == 3.0);
  CHECK(collective_info(Collective::send_recv).ring_steps(4) == 1.0);
}

TEST_CASE("the planner's collectives come first, in enum order, names find their rows") {
  CHECK(std::string(collective_info(Collective::reduce_scatter).name) == "reduce_scatter");
  CHECK(std::string(collective_info(Collective::send_recv).nccl_tests_name) == "sendrecv");
  REQUIRE(find_collective("broadcast") != nullptr);
  CHECK_FALSE(find_collective("broadcast")->calibrated);
  CHECK(find_collective("all_to_all") == &collective_info(Collective::all_to_all));
  CHECK(find_collective("gather") == nullptr);
}

}  // namespace
}  // namespace meshplan
