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

// Runs to make: `wanted`, cut so that they take about `budget_s` at `each_s` per run (budget 0:
// no cut), never fewer than min(wanted, floor).
int runs_within(int wanted, double budget_s, double each_s, int floor);

// Burst and sustained throughput of a series of timed windows of equal work: the median over
// the windows that end within `burst_s` of the start (at least the first), and the median over
// the last quarter of the windows (at least the last). `window_s`: each window's length.
struct SustainedSplit {
  double burst_per_s = 0, sustained_per_s = 0;
};
SustainedSplit split_sustained(const std::vector<double>& window_s, double work_per_window,
                               double burst_s);

}  // namespace meshplan::calibrate
