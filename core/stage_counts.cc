#include "core/stage_counts.h"

#include <mutex>
#include <set>

namespace meshplan {

StageCounts::StageCounts(const std::vector<int64_t>& counts) {
  if (counts.empty()) return;
  static std::mutex mutex;
  static std::set<std::vector<int64_t>> interned;  // set nodes never move
  const std::lock_guard<std::mutex> lock(mutex);
  list_ = &*interned.insert(counts).first;
}

}  // namespace meshplan
