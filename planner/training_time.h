// Time to train a token budget at a predicted throughput, and what it costs in GPU-hours
// (`meshplan sweep`, and `estimate` / `plan` with --tokens).
#pragma once

#include <cstdint>

namespace meshplan {

struct TrainingTime {
  double seconds = 0;    // tokens / tokens_per_s (steps need not be whole)
  double gpu_hours = 0;  // gpus · seconds / 3600
  double cost_usd = 0;   // gpu_hours · usd_per_gpu_hour
};

// REQUIRES: tokens >= 0, tokens_per_s > 0, gpus > 0, usd_per_gpu_hour >= 0.
inline TrainingTime training_time(double tokens, double tokens_per_s, int64_t gpus,
                                  double usd_per_gpu_hour) {
  TrainingTime t;
  t.seconds = tokens / tokens_per_s;
  t.gpu_hours = static_cast<double>(gpus) * t.seconds / 3600;
  t.cost_usd = t.gpu_hours * usd_per_gpu_hour;
  return t;
}

}  // namespace meshplan
