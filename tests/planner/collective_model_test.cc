#include "planner/collective_model.h"

#include <doctest/doctest.h>

#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

CalibrationProfile profile_with(const std::string& collective, const std::string& level,
                                int64_t group, double latency_s, double busbw) {
  CalibrationProfile p;
  CollectiveFit f;
  f.collective = collective;
  f.level = level;
  f.group_size = group;
  f.latency_s = latency_s;
  f.busbw_bytes_per_s = busbw;
  p.collectives.push_back(f);
  return p;
}

}  // namespace

TEST_CASE("ring all-reduce inside a node: α + 2(n−1)/n·S/busbw from the profile's fit") {
  ClusterSpec c = two_level_cluster(4);
  CollectiveModel m(profile_with("all_reduce", "nvlink", 8, 20e-6, 360e9), c);
  const double S = 1e9;
  CHECK(m.time_s(Collective::all_reduce, GroupShape::of(8, 1), S) ==
        doctest::Approx(20e-6 + 2.0 * 7 / 8 * S / 360e9).epsilon(1e-12));
}

TEST_CASE("without a fit: latency × ring steps and link bandwidth × default bus efficiency") {
  ClusterSpec c = two_level_cluster(4);
  CollectiveModel m(CalibrationProfile{}, c);
  const double S = 1e8;
  CHECK(m.time_s(Collective::all_gather, GroupShape::of(4, 1), S) ==
        doctest::Approx(3 * 5e-6 + 3.0 / 4 * S / (400e9 * 0.8)).epsilon(1e-12));
}

TEST_CASE(
    "a ring with 8 GPUs in each of 4 nodes drives 8 rails, capped by the ring inside the node") {
  ClusterSpec c = two_level_cluster(4);
  CollectiveModel m(CalibrationProfile{}, c);
  const double S = 1e9;
  // 32 ranks over 4 nodes: 8 NICs per node at 50 GB/s × 0.94 = 376 GB/s, more than the NVLink
  // ring's 400 GB/s × 0.8 = 320 GB/s, which bounds it. Of the 2·31 ring steps, 2·3 cross
  // nodes (10 µs each) and 56 stay on NVLink (5 µs).
  CHECK(m.time_s(Collective::all_reduce, GroupShape::of(32, 1), S) ==
        doctest::Approx(56 * 5e-6 + 6 * 10e-6 + 2.0 * 31 / 32 * S / 320e9).epsilon(1e-12));
  // 2 ranks in each of 4 nodes (stride 4): 2 rails, 94 GB/s.
  GroupShape two_per_node;
  two_per_node.dims[0] = {2, 4};
  two_per_node.dims[1] = {4, 8};
  two_per_node.dim_count = 2;
  // 7 ring steps: 3 between nodes, 4 inside them.
  CHECK(m.time_s(Collective::reduce_scatter, two_per_node, S) ==
        doctest::Approx(4 * 5e-6 + 3 * 10e-6 + 7.0 / 8 * S / (2 * 50e9 * 0.94)).epsilon(1e-12));
}

TEST_CASE(
    "a ring's latency grows with its steps: each pays the measured per-step latency of the "
    "level it crosses") {
  ClusterSpec c = two_level_cluster(64);
  // Measured: an 8-GPU all-gather in 14 µs (7 steps: 2 µs each); between 2 nodes 20 µs (1 step).
  CalibrationProfile p = profile_with("all_gather", "nvlink", 8, 14e-6, 300e9);
  p.collectives.push_back(profile_with("all_gather", "ib", 2, 20e-6, 40e9).collectives[0]);
  CollectiveModel m(p, c);
  const double S = 1e9;
  // 512 ranks on 64 nodes: 511 steps, 63 of them between nodes. Bus bandwidth: 8 rails of
  // 40 GB/s, capped by the node's ring at 300 GB/s.
  CHECK(m.time_s(Collective::all_gather, GroupShape::of(512, 1), S) ==
        doctest::Approx(448 * 2e-6 + 63 * 20e-6 + 511.0 / 512 * S / 300e9).epsilon(1e-12));
  // One GPU in each of 64 nodes (stride 8): every step crosses nodes, one rail.
  CHECK(m.time_s(Collective::all_gather, GroupShape::of(64, 8), S) ==
        doctest::Approx(63 * 20e-6 + 63.0 / 64 * S / 40e9).epsilon(1e-12));
}

TEST_CASE("without rails a ring across nodes runs at one NIC's bus bandwidth") {
  ClusterSpec c = two_level_cluster(4);
  CollectiveModel m(CalibrationProfile{}, c, CollectiveAlgorithm::ring, /*rails=*/false);
  const double S = 1e9;
  CHECK(m.time_s(Collective::all_reduce, GroupShape::of(32, 1), S) ==
        doctest::Approx(56 * 5e-6 + 6 * 10e-6 + 2.0 * 31 / 32 * S / (50e9 * 0.94)).epsilon(1e-12));
}

TEST_CASE("hierarchical all-reduce: inside the node on S, across nodes on S/8") {
  ClusterSpec c = two_level_cluster(4);
  CollectiveModel m(CalibrationProfile{}, c, CollectiveAlgorithm::hierarchical);
  const double S = 1e9;
  const double inner = 2 * 7 * 5e-6 + 2.0 * 7 / 8 * S / (400e9 * 0.8);
  const double outer = 2 * 3 * 10e-6 + 2.0 * 3 / 4 * (S / 8) / (50e9 * 0.94);
  CHECK(m.time_s(Collective::all_reduce, GroupShape::of(32, 1), S) ==
        doctest::Approx(inner + outer).epsilon(1e-12));
}

TEST_CASE("a strided group (one rank per node) uses only the outer level") {
  ClusterSpec c = two_level_cluster(4);
  CollectiveModel m(CalibrationProfile{}, c, CollectiveAlgorithm::hierarchical);
  CHECK(m.members_within(GroupShape::of(4, 8), 0) == 1);
  CHECK(m.members_within(GroupShape::of(4, 8), 1) == 4);
  CHECK(m.time_s(Collective::reduce_scatter, GroupShape::of(4, 8), 1e9) ==
        doctest::Approx(3 * 10e-6 + 3.0 / 4 * 1e9 / (50e9 * 0.94)).epsilon(1e-12));
}

TEST_CASE("oversubscription divides the bus bandwidth of the level it applies to") {
  ClusterSpec c = two_level_cluster(4);
  c.network[1].oversubscription = 7;
  CollectiveModel m(CalibrationProfile{}, c);
  CHECK(m.time_s(Collective::all_gather, GroupShape::of(4, 8), 1e9) ==
        doctest::Approx(3 * 10e-6 + 3.0 / 4 * 1e9 / (50e9 * 0.94 / 7)).epsilon(1e-12));
}

TEST_CASE("all-to-all sends each level its share, and the slowest level bounds it") {
  ClusterSpec c = two_level_cluster(2);
  CollectiveModel m(CalibrationProfile{}, c);
  const double S = 1e9;
  // 16 ranks: 7/16 of S stays on NVLink, 8/16 crosses InfiniBand.
  const double nvlink = 7 * 5e-6 + 7.0 / 16 * S / (400e9 * 0.8);
  const double ib = 1 * 10e-6 + 8.0 / 16 * S / (50e9 * 0.94);
  CHECK(m.time_s(Collective::all_to_all, GroupShape::of(16, 1), S) ==
        doctest::Approx(std::max(nvlink, ib)).epsilon(1e-12));
}

TEST_CASE("the nearest fit's busbw, between two fits, α linear in ring steps") {
  ClusterSpec c = two_level_cluster(1);
  CalibrationProfile p = profile_with("all_reduce", "nvlink", 2, 6e-6, 300e9);
  CollectiveFit eight = p.collectives.front();
  eight.group_size = 8;
  eight.latency_s = 25e-6;
  eight.busbw_bytes_per_s = 470e9;
  p.collectives.push_back(eight);
  CollectiveModel m(p, c);
  // 4 is as near 2 as 8: the smaller's busbw. α: ring steps 2(n − 1) are 2, 6 and 14, so
  // 6 µs + (25 − 6) µs · (6 − 2)/(14 − 2).
  CHECK(m.time_s(Collective::all_reduce, GroupShape::of(4, 1), 1e9) ==
        doctest::Approx(6e-6 + 19e-6 * 4 / 12 + 1.5 * 1e9 / 300e9).epsilon(1e-12));
  CHECK(m.time_s(Collective::all_reduce, GroupShape::of(8, 1), 1e9) ==
        doctest::Approx(25e-6 + 1.75 * 1e9 / 470e9).epsilon(1e-12));
}
