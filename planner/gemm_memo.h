// GemmModel::time_s remembered by its arguments. A search asks the same few GEMMs millions of
// times (DeepSeek-V3 on 2,048 GPUs: 4.3 M questions, 19,100 distinct shapes; the layer costs of
// every ep, cp variant and overlap share their attention and dense GEMMs), and each answer walks
// the profile's samples (GemmModel::kernel_time_s). The answers are the model's own, bit for bit.
// It keeps the MoE GEMMs' routed_row_tile_factor beside them, by the same rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "planner/gemm_model.h"

namespace meshplan {

// One per cost model (not for use by two threads at once). Holds at most kMaxShapes answers of
// each kind: emptied before an insertion beyond them, so memory stays bounded whatever the search.
class GemmMemo {
 public:
  static constexpr size_t kMaxShapes = size_t{1} << 16;  // 5 MiB of slots at most

  explicit GemmMemo(const GemmModel& model) : model_(&model) {}
  GemmMemo(const GemmMemo&) = delete;
  GemmMemo& operator=(const GemmMemo&) = delete;

  // model.time_s(m, n, k, batch).
  double time_s(double m, double n, double k, double batch = 1);
  size_t size() const { return used_; }
  // routed_row_tile_factor(mean_rows), remembered: each answer sums a Poisson pmf over its
  // counts (some 10,000 instructions), and the MoE layers of a search ask a few row counts
  // thousands of times (mixtral-8x7b on 256 GPUs: 6,240 questions).
  double row_tile_factor(double mean_rows);

 private:
  struct Slot {
    double m = 0, n = 0, k = 0, batch = 0;  // m == 0: empty (time_s requires m > 0)
    double seconds = 0;
  };
  void grow();

  const GemmModel* model_;
  std::vector<Slot> slots_;  // open addressing, linear probing; a power of two in size
  size_t used_ = 0;
  std::unordered_map<double, double> row_tile_factors_;  // at most kMaxShapes
};

}  // namespace meshplan
