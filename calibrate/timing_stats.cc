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

namespace meshplan::calibrate {

int runs_within(int wanted, double budget_s, double each_s, int floor) {
  if (budget_s <= 0 || each_s <= 0) return wanted;
  const double fit = budget_s / each_s;
  const int cut = fit < wanted ? static_cast<int>(fit) : wanted;
  return std::max(std::min(wanted, floor), cut);
}

SustainedSplit split_sustained(const std::vector<double>& window_s, double work_per_window,
                               double burst_s) {
  SustainedSplit out;
  if (window_s.empty()) return out;
  size_t burst_end = 1;  // windows ending within burst_s of the start
  for (double t = window_s[0]; burst_end < window_s.size() && t + window_s[burst_end] <= burst_s;)
    t += window_s[burst_end++];
  const size_t tail = std::max<size_t>(1, window_s.size() / 4);
  auto rate = [&](size_t from, size_t to) {
    double median = summarize({window_s.begin() + static_cast<std::ptrdiff_t>(from),
                               window_s.begin() + static_cast<std::ptrdiff_t>(to)})
                        .median_s;
    return median > 0 ? work_per_window / median : 0.0;
  };
  out.burst_per_s = rate(0, burst_end);
  out.sustained_per_s = rate(window_s.size() - tail, window_s.size());
  return out;
}

}  // namespace meshplan::calibrate
