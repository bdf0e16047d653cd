// The replays of a disaggregated layout kept across the pool sizes a search tries.
//
// In a disaggregated replay (disaggregated_replay.h) a prompt goes to the idle prefill worker of
// lowest index and a sequence to the decode worker holding the fewest, ties to the lowest index;
// everything else a worker does depends on its own work alone. Where a replay left a worker of a
// pool without work, that worker was idle (empty) at every choice in its pool, so every choice
// went to an idle (empty) worker below it: the workers above the highest one used never took
// part, and more workers would not have changed a choice. A replay of pools of P prefill and C
// decode workers that used p of the first and c of the second is therefore the replay of every
// pair (P', C') with P' ≥ p if p < P (else P' = P), and likewise C' ≥ c if c < C (else C' = C):
// the same requests at the same times, the same steps and batches, the same busy seconds (each
// pool's summed in a fixed order: disaggregated_replay.cc); only the pools' busy shares differ,
// set for the sizes asked (set_pool_busy). A search whose pools outgrow the load (more decode
// replicas than sequences in flight, more prefill workers than prompts at once) replays such a
// layout once instead of once per size.
//
// Shared by the search's threads; what a thread finds is bit for bit what it would have
// computed, so the output does not depend on which thread kept what.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "serving/request_replay.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

class PoolReplayMemo {
 public:
  // What a disaggregated replay depends on within one search besides its pools' sizes: the
  // layout (max batch resolved), the load, and the KV transfer (NVLink within a node, else the
  // fabric: kv_transfer_cost).
  struct Shape {
    ServingLayout layout;
    LoadKind load = LoadKind::offline;
    double transfer_latency_s = 0, transfer_s_per_token = 0;
  };
  // What a search keeps of a replay: the result with the front end added
  // (ReplayLimits::front_end_s) and without the requests' times, and what those gave under the
  // search's SLO (ServingEstimate::slo_attainment, slo_scale).
  struct Outcome {
    ReplayResult replay;
    double slo_attainment = 1, slo_scale = 0;
  };
  // A kept outcome that is `shape`'s, its pools' busy shares set for its layout's sizes;
  // nothing if none is.
  std::optional<Outcome> find(const Shape& shape) const;
  // Keeps `outcome`, `shape`'s, where it is another size's too (a pool left a worker without
  // work).
  void keep(const Shape& shape, Outcome outcome);
  // Replays found so far.
  int64_t hits() const;

 private:
  struct Kept {
    int64_t prefill_workers = 0, decode_workers = 0;  // the pools it replayed
    Outcome outcome;
  };
  // Whether `k` is the replay of pools of `prefill` and `decode` workers.
  static bool covers(const Kept& k, int64_t prefill, int64_t decode);
  // The shape but for its pools' sizes.
  using Key =
      std::tuple<int64_t, int64_t, int64_t, int64_t, bool, int64_t, LoadKind, double, double>;
  static Key key(const Shape& shape);

  mutable std::mutex mutex_;
  std::map<Key, std::vector<Kept>> kept_;
  mutable int64_t hits_ = 0;
};

}  // namespace meshplan::serving
