#include "reports/svg_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/svg_canvas.h"
#include "reports/text_format.h"

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

namespace {

// 1, 2 and 5 × 10^k from below `lo` to above `hi`. REQUIRES: 0 < lo <= hi.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi * 10;
       decade *= 10) {
    for (double f : {1.0, 2.0, 5.0}) {
      const double t = f * decade;
      if (t * 2.5 < lo || (!out.empty() && out.back() >= hi)) continue;
      out.push_back(t);
    }
  }
  return out;
}

std::string log_tick_label(double v) {
  if (v >= 1) return with_commas(static_cast<int64_t>(std::llround(v)));
  return fmt::format("{:g}", v);
}

// Maps data values to pixels on one axis, linear or logarithmic.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;    // data range (ticks' ends)
  double from = 0, to = 1;  // pixels
  double operator()(double v) const {
    const double a = log ? std::log(v) : v, l = log ? std::log(lo) : lo,
                 h = log ? std::log(hi) : hi;
    return from + (a - l) / (h - l) * (to - from);
  }
};

}  // namespace

std::string line_chart(const LineChart& c) {
  const int width = 720, height = 460;
  Frame f{90, width - 30.0, 70, height - 90.0};
  double x_lo = 1e300, x_hi = -1e300, y_lo = 1e300, y_hi = -1e300;
  for (const LineSeries& s : c.series) {
    for (const Point& p : s.points) {
      if ((c.log_x && p.x <= 0) || (c.log_y && p.y <= 0)) continue;
      x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
    }
  }
  if (x_lo > x_hi) x_lo = 1, x_hi = 2, y_lo = 1, y_hi = 2;  // nothing to draw
  std::vector<double> xt = c.x_ticks;
  if (!c.log_x || xt.empty()) xt = nice_ticks(std::min(0.0, x_lo), std::max(x_hi, x_lo + 1e-9), 7);
  std::vector<double> yt =
      c.log_y ? log_ticks(y_lo, std::max(y_hi, y_lo * 1.01))
              : nice_ticks(c.y_from_zero ? 0 : y_lo, std::max(y_hi, 1e-9) * 1.05, 6);
  if (yt.size() < 2) yt.push_back(yt.back() * 10);
  Axis ax{c.log_x, std::min(xt.front(), x_lo), std::max(xt.back(), x_hi), f.left, f.right};
  if (c.log_x && ax.lo == ax.hi) ax.lo /= 2, ax.hi *= 2;
  Axis ay{c.log_y, yt.front(), yt.back(), f.bottom, f.top};

  Canvas svg(width, height, c.title);
  std::vector<LegendEntry> legend;
  for (const LineSeries& s : c.series) legend.push_back({s.name, s.colour});
  svg.legend(f.left, 44, legend, f.right - f.left);
  const double y_step = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double t : yt) {
    svg.line(f.left, ay(t), f.right, ay(t), "#DDDDDD");
    svg.text(f.left - 6, ay(t) + 4, c.log_y ? log_tick_label(t) : tick_label(t, y_step), "end", 11);
  }
  svg.line(f.left, f.top, f.left, f.bottom, kBlack);
  svg.text(f.left - 58, (f.top + f.bottom) / 2, c.y_label, "middle", 12, false, -90);
  const double x_step = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double t : xt) {
    svg.line(ax(t), f.bottom, ax(t), f.bottom + 5, kBlack);
    svg.text(ax(t), f.bottom + 18, c.log_x ? log_tick_label(t) : tick_label(t, x_step), "middle",
             11);
  }
  svg.line(f.left, f.bottom, f.right, f.bottom, kBlack);
  svg.text((f.left + f.right) / 2, f.bottom + 36, c.x_label, "middle", 12);
  for (const LineSeries& s : c.series) {
    std::vector<Point> shown;
    for (const Point& p : s.points)
      if (!(c.log_x && p.x <= 0) && !(c.log_y && p.y <= 0)) shown.push_back(p);
    for (size_t i = 1; i < shown.size() && !s.markers_only; ++i)
      svg.line(ax(shown[i - 1].x), ay(shown[i - 1].y), ax(shown[i].x), ay(shown[i].y), s.colour, 2,
               s.dashed);
    if (!s.dashed)
      for (const Point& p : shown) svg.circle(ax(p.x), ay(p.y), 3.5, s.colour);
  }
  if (!c.caption.empty()) svg.text(f.left, height - 16.0, c.caption, "start", 11);
  return svg.finish();
}

}  // namespace meshplan::svg
