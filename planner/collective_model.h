// Time of a collective over a group of ranks placed on the cluster's network levels.
//
// Two algorithms for groups that span several levels (a documented choice, CostOptions):
// - ring (default): NCCL's flat ring over all n ranks, bound by the slowest level it crosses:
//   t = α + S·factor(n)/busbw. α is paid per ring step (NCCL's ring latency model, lat =
//   Σ steps × per-step latency, src/graph/tuning.cc): a step between two level-k domains pays
//   level k+1's per-step latency (the fit's α over its own ring steps), the others level 0's,
//   so a 512-GPU ring pays 63 network steps and 448 NVLink steps. busbw is that of the
//   outermost level the group spans
//   times the group's members per domain of the level inside (one NIC per GPU: rails), capped
//   by the ring inside that domain: one GPU per node gets one NIC's ~47 GB/s on NDR, eight get
//   min(8 × 47, 365) GB/s (NVIDIA: 370-380 GB/s for DGX H100 all-reduce; REFERENCE-performance
//   §4.3). Oversubscription divides a level's busbw for every ring crossing it.
// - hierarchical: as below.
// Per level: t = α + S·factor(n)/busbw, with α and busbw from the profile's fit for that
// collective, level name and the nearest measured group size; without a fit α is the level's
// latency times the ring steps and busbw the level bandwidth times the default bus efficiency
// (planner/calibration.h). Oversubscription divides a level's bus bandwidth.
// Groups spanning several levels run hierarchically (REFERENCE.md §4): all-reduce as
// reduce-scatter up the levels and all-gather down, each level moving the data left after the
// levels inside it; all-gather and reduce-scatter likewise one way; all-to-all sends each
// level its share of the (n−1)/n·S traffic concurrently, so the slowest level bounds it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/profile.h"
#include "planner/calibration.h"

namespace meshplan {

const char* to_string(Collective c);  // the profile name, "all_reduce"

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
                  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring, bool rails = true);
  // The same with the profile's scalars already resolved (resolve_calibration for the cluster's
  // GPU); the profile gives the collective fits.
  CollectiveModel(const CalibrationProfile& profile, const ClusterSpec& cluster,
                  const ResolvedCalibration& calibration,
                  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring, bool rails = true);

  // Seconds for collective `c` over `group` with nccl-tests size `bytes` (the full buffer of
  // one rank: the gathered output for all-gather, the input for reduce-scatter).
  double time_s(Collective c, const GroupShape& group, double bytes) const;
  // Where time_s times one flat ring (the ring algorithm, every collective but all-to-all), its
  // answer for a group of two or more ranks and bytes > 0 is latency_s + bytes · factor /
  // busbw_bytes_per_s, each term a function of `c` and `group` alone: a caller asking many sizes
  // keeps them (planner/collective_memo.h). nullopt where time_s does not take that form.
  struct RingTerms {
    double latency_s = 0, factor = 0, busbw_bytes_per_s = 0;
    double time_s(double bytes) const { return latency_s + bytes * factor / busbw_bytes_per_s; }
  };
  std::optional<RingTerms> ring_terms(Collective c, const GroupShape& group) const;
  // Where time_s times an all-to-all: the slowest level's latency_s + bytes · share /
  // busbw_bytes_per_s, a level's share being the part of each rank's bytes that crosses it but
  // no outer one; terms of the group alone, kept likewise.
  struct AllToAllTerms {
    struct Level {
      double latency_s = 0, share = 0, busbw_bytes_per_s = 0;
    };
    // A level's span is a multiple of the one inside it (cluster_yaml.cc), so a cluster of at
    // most kMaxClusterGpus < 2^27 GPUs has at most 27 levels.
    static constexpr size_t kMaxLevels = 32;
    std::array<Level, kMaxLevels> levels{};
    size_t count = 0;
    double time_s(double bytes) const;
  };
  AllToAllTerms all_to_all_terms(const GroupShape& group) const;
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
    double step_latency_s = 0;  // latency of one ring step on this level
  };
  // α and busbw for `c` on `level` with `members` ranks there: from the table below for a
  // power of two, else computed (fit_of).
  LevelFit fit(Collective c, size_t level, int64_t members) const;
  LevelFit fit_of(Collective c, size_t level, int64_t members) const;
  double level_time_s(Collective c, size_t level, int64_t members, double bytes) const;

  // Latency of a flat ring over `group`: each of its steps pays the per-step latency of the
  // outermost level that step crosses (NCCL's ring model, src/graph/tuning.cc).
  double ring_latency_s(Collective c, const GroupShape& group, size_t spanned) const;
  // The innermost level whose domain holds the whole group.
  size_t spanned_level(const GroupShape& group) const;
  // Bus bandwidth of a flat ring over the members of `group` inside one domain of `level`,
  // whose own fit there gives `busbw`: raised by the rails the members drive, capped by the
  // ring inside the level below (see the .cc).
  double rail_busbw(Collective c, const GroupShape& group, size_t level, double busbw) const;

  std::vector<NetworkLevel> levels_;
  CollectiveAlgorithm algorithm_ = CollectiveAlgorithm::ring;
  bool rails_ = true;
  // Per collective and level: the profile's fits, sorted by group size.
  std::array<std::vector<std::vector<CollectiveFit>>, kCollectiveCount> fits_;
  double intra_efficiency_ = 0, inter_efficiency_ = 0;
  // fit_of for 2^k members, k < kPowerFits, per collective and level: the search asks for the
  // same few groups millions of times (issue 13).
  static constexpr int kPowerFits = 24;
  std::array<std::vector<std::array<LevelFit, kPowerFits>>, kCollectiveCount> power_fits_;
};

}  // namespace meshplan
