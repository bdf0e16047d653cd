#include "reports/training_time_render.h"

#include <fmt/format.h>

#include <cmath>

#include "reports/text_format.h"

namespace meshplan {
namespace {

constexpr double kSecondsPerDay = 86400;

}  // namespace

std::string duration_text(double s) {
  if (s >= 100 * kSecondsPerDay)
    return fmt::format("{} days",
                       with_commas(static_cast<int64_t>(std::llround(s / kSecondsPerDay))));
  if (s >= kSecondsPerDay) return fmt::format("{:.1f} days", s / kSecondsPerDay);
  return fmt::format("{:.1f} h", s / 3600);
}

std::string time_to_train_line(double tokens, const TrainingTime& t) {
  return fmt::format("time to train {} tokens: {}, {} GPU-hours\n", short_count(tokens),
                     duration_text(t.seconds),
                     with_commas(static_cast<int64_t>(std::llround(t.gpu_hours))));
}

nlohmann::ordered_json time_to_train_json(double tokens, const Estimate& e, int64_t gpus) {
  const TrainingTime t = training_time(tokens, e.tokens_per_s, gpus, 0);
  return {{"tokens", tokens}, {"seconds", t.seconds}, {"gpu_hours", t.gpu_hours}};
}

}  // namespace meshplan
