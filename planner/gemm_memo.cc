#include "planner/gemm_memo.h"

#include <bit>

#include "planner/hash_mix.h"

namespace meshplan {
namespace {

size_t hash_of(double m, double n, double k, double batch) {
  return static_cast<size_t>(hashed(std::bit_cast<uint64_t>(m), std::bit_cast<uint64_t>(n),
                                    std::bit_cast<uint64_t>(k), std::bit_cast<uint64_t>(batch)));
}

}  // namespace

double GemmMemo::time_s(double m, double n, double k, double batch) {
  if (!(m > 0)) return model_->time_s(m, n, k, batch);  // outside time_s' contract: not kept
  if (2 * (used_ + 1) > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash_of(m, n, k, batch) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.m == 0) {
      s = Slot{m, n, k, batch, model_->time_s(m, n, k, batch)};
      ++used_;
      return s.seconds;
    }
    if (s.m == m && s.n == n && s.k == k && s.batch == batch) return s.seconds;
  }
}

double GemmMemo::row_tile_factor(double mean_rows) {
  if (const auto it = row_tile_factors_.find(mean_rows); it != row_tile_factors_.end())
    return it->second;
  if (row_tile_factors_.size() >= kMaxShapes) row_tile_factors_.clear();
  const double factor = routed_row_tile_factor(mean_rows);
  row_tile_factors_.emplace(mean_rows, factor);
  return factor;
}

void GemmMemo::grow() {
  if (used_ >= kMaxShapes) {  // full: start again (every answer is recomputed alike)
    slots_.assign(slots_.size(), Slot{});
    used_ = 0;
    return;
  }
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : 2 * old.size(), Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.m == 0) continue;
    size_t i = hash_of(s.m, s.n, s.k, s.batch) & mask;
    while (slots_[i].m != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

}  // namespace meshplan
