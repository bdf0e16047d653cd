#include "calibrate/timing_stats.h"

#include <algorithm>
#include <cmath>

namespace meshplan::calibrate {

TimingStats summarize(std::vector<double> samples_s) {
  TimingStats s;
  if (samples_s.empty()) return s;
  std::sort(samples_s.begin(), samples_s.end());
  size_t n = samples_s.size();
  s.min_s = samples_s.front();
  s.median_s = n % 2 ? samples_s[n / 2] : 0.5 * (samples_s[n / 2 - 1] + samples_s[n / 2]);
  // Nearest rank: the smallest sample with at least 95% of samples at or below it.
  size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
  s.p95_s = samples_s[std::max<size_t>(rank, 1) - 1];
  return s;
}

}  // namespace meshplan::calibrate
