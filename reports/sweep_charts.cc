#include "reports/sweep_charts.h"

#include <fmt/format.h>

#include "reports/svg_canvas.h"
#include "reports/svg_charts.h"
#include "reports/text_format.h"

namespace meshplan {
namespace {

constexpr double kSecondsPerDay = 86400;

double x_of(const SweepResult& s, const SweepRow& row) {
  return static_cast<double>(s.axis == SweepAxis::seq_len        ? row.seq_len
                             : s.axis == SweepAxis::global_batch ? row.global_batch
                                                                 : row.gpus);
}

std::string x_label(const SweepResult& s) {
  return s.axis == SweepAxis::seq_len        ? "sequence length (tokens)"
         : s.axis == SweepAxis::global_batch ? "global batch (sequences)"
                                             : "GPUs";
}

// Every swept value, for the log x axis.
std::vector<double> x_ticks(const SweepResult& s) {
  std::vector<double> out;
  for (const SweepRow& row : s.rows) out.push_back(x_of(s, row));
  return out;
}

// The chart frame shared by the three: log x over the swept values.
svg::LineChart frame(const SweepResult& s, std::string title, std::string y_label) {
  svg::LineChart c;
  c.title = std::move(title);
  c.x_label = x_label(s);
  c.y_label = std::move(y_label);
  c.log_x = true;
  c.x_ticks = x_ticks(s);
  return c;
}

}  // namespace

std::string sweep_throughput_chart(const SweepResult& s) {
  svg::LineChart c = frame(s, "Throughput of the best layout", "tokens/s (millions)");
  c.log_y = true;
  svg::LineSeries best{"best layout", svg::kBlue, {}, false};
  svg::LineSeries ideal{"ideal linear scaling", svg::kGrey, {}, true};
  const SweepRow* base = nullptr;
  for (const SweepRow& row : s.rows) {
    if (!row.best) continue;
    if (!base) base = &row;
    best.points.push_back({x_of(s, row), row.best->tokens_per_s / 1e6});
    if (s.axis == SweepAxis::gpus) {
      const double scale = static_cast<double>(row.gpus) / static_cast<double>(base->gpus);
      ideal.points.push_back({x_of(s, row), base->best->tokens_per_s / 1e6 * scale});
    }
  }
  if (s.axis == SweepAxis::gpus) c.series.push_back(ideal);
  c.series.push_back(best);
  if (base && s.axis == SweepAxis::gpus)
    c.caption = fmt::format("ideal: {} GPUs' tokens/s per GPU times the GPU count",
                            with_commas(base->gpus));
  return svg::line_chart(c);
}

std::string sweep_mfu_chart(const SweepResult& s) {
  svg::LineChart c = frame(s, "MFU of the best layout", "MFU (%)");
  svg::LineSeries best{"best layout", svg::kVermillion, {}, false};
  for (const SweepRow& row : s.rows)
    if (row.best) best.points.push_back({x_of(s, row), 100 * row.best->mfu});
  c.series.push_back(best);
  return svg::line_chart(c);
}

std::string sweep_time_to_train_chart(const SweepResult& s, double tokens) {
  svg::LineChart c = frame(s, fmt::format("Time to train {} tokens", short_count(tokens)), "days");
  c.log_y = true;
  svg::LineSeries best{"best layout", svg::kGreen, {}, false};
  for (const SweepRow& row : s.rows)
    if (row.best && row.time_to_train_s > 0)
      best.points.push_back({x_of(s, row), row.time_to_train_s / kSecondsPerDay});
  c.series.push_back(best);
  return svg::line_chart(c);
}

}  // namespace meshplan
