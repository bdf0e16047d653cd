// CollectiveMemo keeps a group's ring terms and answers CollectiveModel::time_s's own seconds,
// bit for bit, for every collective, group and size (all-to-all from its own terms); the
// hierarchical algorithm passes through.
#include "planner/collective_memo.h"

#include <doctest/doctest.h>

#include <vector>

#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

// Groups of one and two dimensions inside a node, across nodes and across both, and one rank.
std::vector<GroupShape> groups() {
  std::vector<GroupShape> out = {GroupShape::of(1, 1), GroupShape::of(2, 1),  GroupShape::of(8, 1),
                                 GroupShape::of(4, 2), GroupShape::of(16, 1), GroupShape::of(4, 8),
                                 GroupShape::of(32, 8)};
  GroupShape two;
  two.dims = {GroupShape::Dim{2, 1}, GroupShape::Dim{8, 8}};
  two.dim_count = 2;
  out.push_back(two);
  return out;
}

void check_bit_for_bit(const CollectiveModel& model) {
  CollectiveMemo memo(model);
  for (int round = 0; round < 2; ++round)  // asked afresh, then remembered
    for (int c = 0; c < kCollectiveCount; ++c)
      for (const GroupShape& g : groups())
        for (double bytes : {0.0, 1.0, 4096.0, 3.7e6, 1e9}) {
          const auto collective = static_cast<Collective>(c);
          CAPTURE(c);
          CAPTURE(g.size());
          CAPTURE(bytes);
          CHECK(memo.time_s(collective, g, bytes) == model.time_s(collective, g, bytes));
        }
}

}  // namespace

TEST_CASE("a remembered collective time is the ring model's own, bit for bit") {
  const ClusterSpec c = two_level_cluster(16);
  check_bit_for_bit(CollectiveModel(CalibrationProfile{}, c));
  check_bit_for_bit(CollectiveModel(CalibrationProfile{}, c, CollectiveAlgorithm::ring, false));
}

TEST_CASE("the hierarchical algorithm's times pass through the memo unchanged") {
  const ClusterSpec c = two_level_cluster(16);
  const CollectiveModel model(CalibrationProfile{}, c, CollectiveAlgorithm::hierarchical);
  CHECK(!model.ring_terms(Collective::all_reduce, GroupShape::of(16, 1)));
  check_bit_for_bit(model);
}

TEST_CASE("ring terms: the fitted latency plus bytes times the bus factor over the bandwidth") {
  const ClusterSpec c = two_level_cluster(4);
  const CollectiveModel model(CalibrationProfile{}, c);
  const auto terms = model.ring_terms(Collective::all_gather, GroupShape::of(4, 1));
  REQUIRE(terms);
  // Inside one node without a fit: 3 ring steps of 5 µs, (n − 1)/n of the bytes at the link's
  // 400 GB/s times the default bus efficiency 0.8 (the collective model's own test).
  CHECK(terms->latency_s == doctest::Approx(3 * 5e-6).epsilon(1e-12));
  CHECK(terms->factor == doctest::Approx(3.0 / 4).epsilon(1e-12));
  CHECK(terms->busbw_bytes_per_s == doctest::Approx(400e9 * 0.8).epsilon(1e-12));
  CHECK(!model.ring_terms(Collective::all_to_all, GroupShape::of(4, 1)));
  CHECK(!model.ring_terms(Collective::all_gather, GroupShape::of(1, 1)));
}

TEST_CASE("all-to-all terms: each level's latency, share of the bytes and bandwidth") {
  const ClusterSpec c = two_level_cluster(2);
  const CollectiveModel model(CalibrationProfile{}, c);
  // 16 ranks over two nodes (the collective model's own test): 7/16 of each rank's bytes stay
  // on NVLink (7 steps of 5 µs, 400 GB/s × 0.8), 8/16 cross InfiniBand (one step of 10 µs,
  // 50 GB/s × 0.94).
  const CollectiveModel::AllToAllTerms t = model.all_to_all_terms(GroupShape::of(16, 1));
  REQUIRE(t.count == 2);
  CHECK(t.levels[0].latency_s == doctest::Approx(7 * 5e-6).epsilon(1e-12));
  CHECK(t.levels[0].share == 7.0 / 16);
  CHECK(t.levels[0].busbw_bytes_per_s == doctest::Approx(400e9 * 0.8).epsilon(1e-12));
  CHECK(t.levels[1].latency_s == doctest::Approx(10e-6).epsilon(1e-12));
  CHECK(t.levels[1].share == 8.0 / 16);
  CHECK(t.levels[1].busbw_bytes_per_s == doctest::Approx(50e9 * 0.94).epsilon(1e-12));
  // Inside one node: NVLink alone.
  CHECK(model.all_to_all_terms(GroupShape::of(8, 1)).count == 1);
}
