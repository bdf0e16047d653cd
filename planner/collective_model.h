// Time of a collective over a group of ranks placed on the cluster's network levels.
//
// Two algorithms for groups that span several levels (a documented choice, CostOptions):
// - ring (default): NCCL's flat ring over all n ranks, bound by the slowest level it crosses:
//   t = α + S·factor(n)/busbw of the outermost level the group spans. This is what nccl-tests
//   reports as multi-node bus bandwidth (~46-48 GB/s on NDR, ~23.5 on HDR per GPU;
//   REFERENCE.md §3), and it reproduces the ZeRO-3 scaling of Narayanan et al. 2021 Table 2.
//   Only 1 in `inner` ring edges leaves a domain of the level inside (inner = the group's
//   members per such domain), so an oversubscribed level slows the ring by
//   max(1, oversubscription / inner), not by the full oversubscription.
// - hierarchical: as below.
// Per level: t = α + S·factor(n)/busbw, with α and busbw from the profile's fit for that
// collective, level name and the nearest measured group size; without a fit α is the level's
// latency times the ring steps and busbw the level bandwidth times the default bus efficiency
// (profile_defaults.h). Oversubscription divides a level's bus bandwidth.
// Groups spanning several levels run hierarchically (REFERENCE.md §4): all-reduce as
// reduce-scatter up the levels and all-gather down, each level moving the data left after the
// levels inside it; all-gather and reduce-scatter likewise one way; all-to-all sends each
// level its share of the (n−1)/n·S traffic concurrently, so the slowest level bounds it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/cluster_spec.h"
#include "core/profile.h"

namespace meshplan {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
constexpr int kCollectiveCount = 5;
const char* to_string(Collective c);

// A group as the ranks of one or more layout dimensions: sizes and strides (ranks between
// consecutive members of each dimension).
struct GroupShape {
  struct Dim {
    int64_t size = 1, stride = 1;
  };
  std::array<Dim, 2> dims{};
  int dim_count = 0;
  int64_t size() const;
  static GroupShape of(int64_t size, int64_t stride) { return {{{{size, stride}, {}}}, 1}; }
};

enum class CollectiveAlgorithm { ring, hierarchical };

class CollectiveModel {
 public:
  CollectiveModel(const CalibrationProfile& profile, const ClusterSpec& cluster,
                  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring);

  // Seconds for collective `c` over `group` with nccl-tests size `bytes` (the full buffer of
  // one rank: the gathered output for all-gather, the input for reduce-scatter).
  double time_s(Collective c, const GroupShape& group, double bytes) const;
  // One step of a ring over `group` (each rank sends `bytes` to its neighbour at once): bound
  // by the outermost level the ring crosses.
  double ring_step_time_s(const GroupShape& group, double bytes) const;
  // Point-to-point between ranks `distance` apart.
  double p2p_time_s(int64_t distance, double bytes) const;
  // Members of `group` inside one domain of level `level`.
  int64_t members_within(const GroupShape& group, size_t level) const;

 private:
  struct LevelFit {
    double latency_s = 0, busbw_bytes_per_s = 0;
    bool measured = false;
  };
  // α and busbw for `c` on `level` with `members` ranks there.
  LevelFit fit(Collective c, size_t level, int64_t members) const;
  double level_time_s(Collective c, size_t level, int64_t members, double bytes) const;

  double ring_time_s(Collective c, const GroupShape& group, double bytes) const;

  std::vector<NetworkLevel> levels_;
  CollectiveAlgorithm algorithm_ = CollectiveAlgorithm::ring;
  // Per collective and level: the profile's fits, sorted by group size.
  std::array<std::vector<std::vector<CollectiveFit>>, kCollectiveCount> fits_;
  double intra_efficiency_ = 0, inter_efficiency_ = 0;
};

}  // namespace meshplan
