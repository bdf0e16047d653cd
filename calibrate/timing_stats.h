// Order statistics of timed iterations (nccl-tests and MAMF report medians; we add p95).
#pragma once

#include <vector>

namespace meshplan::calibrate {

struct TimingStats {
  double median_s = 0;
  double p95_s = 0;
  double min_s = 0;
};

// Median (mean of the middle two for even counts) and nearest-rank p95 of `samples_s`.
// Empty input gives all zeros.
TimingStats summarize(std::vector<double> samples_s);

}  // namespace meshplan::calibrate
