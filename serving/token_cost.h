// What serving costs per token at a GPU-hour price (`serve --gpu-hour-cost`): the plan's GPUs
// for the hours its output takes. The price is the user's; meshplan has no default for it.
#pragma once

#include <cstdint>

namespace meshplan::serving {

constexpr double kSecondsPerHour = 3600;
constexpr double kTokensPerMillion = 1e6;

// USD per million output tokens of `gpus` GPUs serving `output_tokens_per_s` (all of them) at
// `usd_per_gpu_hour` (REQUIRES: output_tokens_per_s > 0).
inline double usd_per_million_output_tokens(int64_t gpus, double output_tokens_per_s,
                                            double usd_per_gpu_hour) {
  const double usd_per_s = static_cast<double>(gpus) * usd_per_gpu_hour / kSecondsPerHour;
  return usd_per_s / output_tokens_per_s * kTokensPerMillion;
}

}  // namespace meshplan::serving
