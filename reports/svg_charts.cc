#include "reports/svg_charts.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/svg_canvas.h"

namespace meshplan::svg {
namespace {

struct Frame {
  double left, right, top, bottom;
};

double y_of(const Frame& f, const std::vector<double>& ticks, double v) {
  return f.bottom - (v - ticks.front()) / (ticks.back() - ticks.front()) * (f.bottom - f.top);
}

double x_of(const Frame& f, const std::vector<double>& ticks, double v) {
  return f.left + (v - ticks.front()) / (ticks.back() - ticks.front()) * (f.right - f.left);
}

std::vector<LegendEntry> legend_of(const std::vector<Series>& series) {
  std::vector<LegendEntry> out;
  for (const Series& s : series) out.push_back({s.name, s.colour});
  return out;
}

}  // namespace

std::string stacked_bar_chart(const StackedBars& c) {
  const int width = std::max(560, 120 + 70 * static_cast<int>(c.categories.size()));
  const int height = 420;
  Frame f{80, width - 30.0, 70, height - 70.0};
  double top = c.reference ? c.reference->value : 0;
  for (size_t i = 0; i < c.categories.size(); ++i) {
    double sum = 0;
    for (const Series& s : c.series) sum += s.values[i];
    top = std::max(top, sum);
  }
  const std::vector<double> ticks = nice_ticks(0, std::max(top, 1e-9) * 1.05, 6);
  Canvas svg(width, height, c.title);
  svg.legend(f.left, 44, legend_of(c.series), f.right - f.left);
  svg.y_axis(f.left, f.right, f.top, f.bottom, ticks, c.y_label);
  const double slot = (f.right - f.left) / static_cast<double>(c.categories.size());
  for (size_t i = 0; i < c.categories.size(); ++i) {
    const double x = f.left + slot * static_cast<double>(i) + slot * 0.2;
    double base = 0;
    for (const Series& s : c.series) {
      const double y0 = y_of(f, ticks, base), y1 = y_of(f, ticks, base + s.values[i]);
      if (y0 - y1 > 0)
        svg.rect(x, y1, slot * 0.6, y0 - y1, s.colour,
                 fmt::format("{}: {:.2f}", s.name, s.values[i]));
      base += s.values[i];
    }
    svg.text(x + slot * 0.3, f.bottom + 16, c.categories[i], "middle", 11);
  }
  if (c.reference) {
    const double y = y_of(f, ticks, c.reference->value);
    svg.line(f.left, y, f.right, y, kVermillion, 2, true);
    svg.text(f.right - 4, y - 5, c.reference->label, "end", 11);
  }
  svg.line(f.left, f.bottom, f.right, f.bottom, kBlack);
  svg.text((f.left + f.right) / 2, f.bottom + 40, c.x_label, "middle", 12);
  return svg.finish();
}

std::string horizontal_bar_chart(const HorizontalBars& c) {
  const int width = 720;
  const int height = 110 + 26 * static_cast<int>(c.bars.size());
  Frame f{230, width - 90.0, 40, height - 60.0};
  double top = 0;
  for (const Bar& b : c.bars) top = std::max(top, b.value);
  const std::vector<double> ticks = nice_ticks(0, std::max(top, 1e-9), 6);
  Canvas svg(width, height, c.title);
  for (double t : ticks) svg.line(x_of(f, ticks, t), f.top, x_of(f, ticks, t), f.bottom, "#DDDDDD");
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    const double y = f.top + 6 + 26.0 * static_cast<double>(i);
    svg.text(f.left - 8, y + 13, b.label, "end", 12);
    const double w = x_of(f, ticks, b.value) - f.left;
    if (w > 0) svg.rect(f.left, y, w, 18, b.colour);
    svg.text(f.left + w + 5, y + 13, fmt::format("{:.2f}{}", b.value, c.value_suffix), "start", 11);
  }
  svg.line(f.left, f.top, f.left, f.bottom, kBlack);
  svg.x_axis(f.left, f.right, f.bottom, ticks, c.x_label);
  return svg.finish();
}

std::string scatter_chart(const Scatter& c) {
  const int width = 720, height = 460;
  Frame f{80, width - 30.0, 70, height - 90.0};
  double x_lo = 1e300, x_hi = -1e300, y_lo = 1e300, y_hi = -1e300;
  std::vector<Point> all = c.points;
  if (c.marked) all.push_back(*c.marked);
  if (c.x_reference) all.push_back({c.x_reference->value, all.empty() ? 0 : all.front().y});
  for (const Point& p : all) {
    x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
  }
  if (all.empty()) x_lo = y_lo = 0, x_hi = y_hi = 1;
  const std::vector<double> xt = nice_ticks(0, std::max(x_hi, 1e-9) * 1.02, 7);
  const std::vector<double> yt = nice_ticks(std::max(0.0, y_lo - 0.05 * (y_hi - y_lo + 1)),
                                            y_hi + 0.05 * (y_hi - y_lo + 1), 6);
  Canvas svg(width, height, c.title);
  std::vector<LegendEntry> legend = {{c.points_label, kBlue}};
  if (c.marked) legend.push_back({c.marked_label, kVermillion});
  svg.legend(f.left, 44, legend, f.right - f.left);
  svg.y_axis(f.left, f.right, f.top, f.bottom, yt, c.y_label);
  svg.x_axis(f.left, f.right, f.bottom, xt, c.x_label);
  if (c.x_reference) {
    const double x = x_of(f, xt, c.x_reference->value);
    svg.line(x, f.top, x, f.bottom, kVermillion, 2, true);
    svg.text(x - 4, f.top + 12, c.x_reference->label, "end", 11);
  }
  for (const Point& p : c.points) svg.circle(x_of(f, xt, p.x), y_of(f, yt, p.y), 3, kBlue);
  if (c.marked) {
    svg.circle(x_of(f, xt, c.marked->x), y_of(f, yt, c.marked->y), 7, kVermillion, kBlack);
  }
  if (!c.caption.empty()) svg.text(f.left, height - 16.0, c.caption, "start", 11);
  return svg.finish();
}

}  // namespace meshplan::svg
