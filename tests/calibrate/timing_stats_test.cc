// calibrate/timing_stats.cc: medians, the time budget's run counts, burst vs sustained windows.
#include "calibrate/timing_stats.h"

#include <doctest/doctest.h>

namespace meshplan::calibrate {
namespace {

TEST_CASE("median and nearest-rank p95 of timed iterations") {
  TimingStats s = summarize({4, 1, 3, 2});
  CHECK(s.median_s == 2.5);
  CHECK(s.p95_s == 4);
  CHECK(s.min_s == 1);
  CHECK(summarize({}).median_s == 0);
}

TEST_CASE("a budget cuts runs to what fits, never below the floor, never above the wish") {
  CHECK(runs_within(50, 0, 1e-3, 3) == 50);        // no budget
  CHECK(runs_within(50, 0.05, 1e-4, 3) == 50);     // 500 would fit: the wish caps it
  CHECK(runs_within(50, 0.05, 2e-3, 3) == 25);     // 50 ms / 2 ms
  CHECK(runs_within(50, 0.05, 0.150, 3) == 3);     // a 150 ms kernel: the floor
  CHECK(runs_within(2, 0.05, 0.150, 3) == 2);      // the floor never exceeds the wish
  CHECK(runs_within(10, 1e300, 1e-300, 1) == 10);  // a huge quotient does not overflow
}

TEST_CASE("burst is the first second's median window, sustained the last quarter's") {
  // Eight windows of 100 units: the first four end by 0.9 s (500, 500, 400, 400 /s), the last
  // two are the last quarter (300, 300 /s). Rates are work over the median window time.
  const std::vector<double> window_s = {0.2, 0.2, 0.25, 0.25, 0.3, 0.3, 1.0 / 3, 1.0 / 3};
  SustainedSplit s = split_sustained(window_s, 100, 1.0);
  CHECK(s.burst_per_s == doctest::Approx(100 / 0.225));  // the median window, 0.225 s
  CHECK(s.sustained_per_s == doctest::Approx(300));
  // A window ending after the first second is not burst: 1.0 s cuts to the first three.
  CHECK(split_sustained(window_s, 100, 0.7).burst_per_s == doctest::Approx(500));
  // One window: it is both.
  SustainedSplit one = split_sustained({2.0}, 100, 1.0);
  CHECK(one.burst_per_s == 50);
  CHECK(one.sustained_per_s == 50);
  CHECK(split_sustained({}, 100, 1.0).burst_per_s == 0);
}

}  // namespace
}  // namespace meshplan::calibrate
