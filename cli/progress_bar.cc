#include "cli/progress_bar.h"

#include <fmt/format.h>

#include <algorithm>

namespace meshplan::cli {

std::string progress_line(int64_t done, int64_t total, int width) {
  const int64_t t = std::max<int64_t>(total, 1);
  const int filled = static_cast<int>(width * std::clamp<int64_t>(done, 0, t) / t);
  return fmt::format("\r[{}{}] {:3d}%", std::string(static_cast<size_t>(filled), '#'),
                     std::string(static_cast<size_t>(width - filled), ' '),
                     static_cast<int>(100 * std::clamp<int64_t>(done, 0, t) / t));
}

ProgressBar::ProgressBar(Write write, Clock clock, double min_interval_s, int width)
    : write_(std::move(write)),
      clock_(std::move(clock)),
      min_interval_s_(min_interval_s),
      width_(width) {}

void ProgressBar::update(int64_t done, int64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_ || done <= shown_done_) return;
  const bool final = done >= total;
  const double now = clock_();
  if (!final && shown_done_ >= 0 && now - shown_at_s_ < min_interval_s_) return;
  std::string line = progress_line(done, total, width_);
  shown_done_ = done;
  if (line != shown_) {
    write_(line);
    shown_ = std::move(line);
    shown_at_s_ = now;
  }
  if (final) {
    write_(fmt::format("\r{}\r", std::string(static_cast<size_t>(width_ + 8), ' ')));
    finished_ = true;
  }
}

}  // namespace meshplan::cli
