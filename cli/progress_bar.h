// A one-line terminal progress bar for work counted in items. Updates come from worker threads
// in any order; the bar redraws at most once per `min_interval_s` (the first and the final
// state always), only when its text changes, and never moves backwards.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace meshplan::cli {

// "\r[#####     ]  50%": width '#'/' ' cells and the percentage, both rounded down.
std::string progress_line(int64_t done, int64_t total, int width);

class ProgressBar {
 public:
  using Clock = std::function<double()>;                  // seconds, monotonic
  using Write = std::function<void(const std::string&)>;  // e.g. to stderr

  ProgressBar(Write write, Clock clock, double min_interval_s = 0.1, int width = 40);

  // Thread-safe. `done` ≤ `total`; a `done` below one already shown is ignored. At
  // done == total the bar is drawn once more and then cleared.
  void update(int64_t done, int64_t total);

 private:
  Write write_;
  Clock clock_;
  double min_interval_s_;
  int width_;
  std::mutex mutex_;
  int64_t shown_done_ = -1;
  double shown_at_s_ = 0;
  std::string shown_;
  bool finished_ = false;
};

}  // namespace meshplan::cli
