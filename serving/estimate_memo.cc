#include "serving/estimate_memo.h"

namespace meshplan::serving {

EstimateMemo::Key EstimateMemo::key(const ServingOptions& options, const ServingLayout& layout) {
  return {static_cast<int>(options.weights),
          options.mixed_chunk,
          layout.tp,
          layout.pp,
          layout.ep,
          layout.replicas,
          layout.max_batch,
          layout.attention_dp,
          layout.prefill_tp,
          layout.prefill_replicas};
}

std::optional<std::optional<ServingEstimate>> EstimateMemo::find(
    const ServingOptions& options, const ServingLayout& layout) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kept_.find(key(options, layout));
  if (it == kept_.end()) return std::nullopt;
  ++hits_;
  return it->second;
}

void EstimateMemo::keep(const ServingOptions& options, const ServingLayout& layout,
                        const std::optional<ServingEstimate>& estimate) {
  const std::lock_guard<std::mutex> lock(mutex_);
  kept_.emplace(key(options, layout), estimate);
}

int64_t EstimateMemo::hits() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace meshplan::serving
