#include "serving/saturation_memo.h"

namespace meshplan::serving {

SaturationMemo::Key SaturationMemo::key(const ServingLayout& layout, int64_t requests) {
  return {layout.tp, layout.pp, layout.ep, layout.max_batch, layout.attention_dp, requests};
}

std::optional<OfflineReplay> SaturationMemo::find(const ServingLayout& layout,
                                                  int64_t requests) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kept_.find(key(layout, requests));
  if (it == kept_.end()) return std::nullopt;
  return it->second;
}

void SaturationMemo::keep(const ServingLayout& layout, int64_t requests,
                          const OfflineReplay& replay) {
  const std::lock_guard<std::mutex> lock(mutex_);
  kept_.emplace(key(layout, requests), replay);
}

}  // namespace meshplan::serving
