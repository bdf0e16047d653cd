// A cost model's collective times, their terms remembered per collective and group: the layer
// costs of a search ask the same groups for many sizes (deepseek-v3 on 512 GPUs: 1.4 M questions
// of some 140 groups), and each answer walks the network levels (the level the group spans, its
// ring's latency step by step, the rails' bandwidth). Where CollectiveModel::time_s times one
// ring its answer is latency + bytes · factor / busbw of terms fixed by the collective and the
// group (CollectiveModel::RingTerms), and an all-to-all's is the slowest of its levels' terms
// (CollectiveModel::AllToAllTerms): kept here, each answer is computed from them in the same
// order, bit for bit time_s's own; other answers are asked of the model each time. Not
// thread-safe: one per cost model, as its other caches.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "planner/collective_model.h"

namespace meshplan {

class CollectiveMemo {
 public:
  explicit CollectiveMemo(const CollectiveModel& model) : model_(&model) {}
  CollectiveMemo(const CollectiveMemo&) = delete;
  CollectiveMemo& operator=(const CollectiveMemo&) = delete;

  // model.time_s(c, group, bytes).
  double time_s(Collective c, const GroupShape& group, double bytes);

 private:
  // One group's terms, in a direct-mapped table: a group whose slot another holds takes it over
  // (the terms are asked again when the other returns). A ring's (nullopt where the model's
  // answer is not one ring) and an all-to-all's.
  template <class Terms>
  struct Slot {
    int64_t collective = -1;  // -1: empty
    GroupShape group;
    Terms terms;
  };
  static constexpr size_t kSlots = 1024;
  static constexpr size_t kAllToAllSlots = 256;

  const CollectiveModel* model_;
  std::vector<Slot<std::optional<CollectiveModel::RingTerms>>> slots_;  // kSlots once asked
  std::vector<Slot<CollectiveModel::AllToAllTerms>> all_to_all_slots_;  // kAllToAllSlots once asked
};

}  // namespace meshplan
