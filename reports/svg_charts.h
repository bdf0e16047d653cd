// Report charts as SVG documents (svg_canvas.h): stacked bars, horizontal bars and a scatter
// plot. Each takes plain data (values already in display units) and returns the document.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace meshplan::svg {

struct Series {
  std::string name;
  std::string colour;
  std::vector<double> values;  // one per category
};

// A horizontal reference line across the plot ("capacity 80 GiB").
struct ReferenceLine {
  double value = 0;
  std::string label;
};

// Vertical stacked bars: one bar per category, one segment per series, bottom to top in order.
// REQUIRES: every series has categories.size() values, all >= 0.
struct StackedBars {
  std::string title, y_label, x_label;
  std::vector<std::string> categories;
  std::vector<Series> series;
  std::optional<ReferenceLine> reference;
};
std::string stacked_bar_chart(const StackedBars& chart);

struct Bar {
  std::string label;
  double value = 0;  // >= 0
  std::string colour;
};
// Horizontal bars, one per row, labelled on the left with their value on the right.
struct HorizontalBars {
  std::string title, x_label;
  std::vector<Bar> bars;
  std::string value_suffix;  // appended to the printed value, e.g. " ms"
};
std::string horizontal_bar_chart(const HorizontalBars& chart);

struct Point {
  double x = 0, y = 0;
};
// Points on linear axes; `marked` is drawn larger in another colour with its label; the optional
// vertical reference (e.g. memory capacity) is dashed.
struct Scatter {
  std::string title, x_label, y_label, caption;
  std::vector<Point> points;
  std::string points_label;
  std::optional<Point> marked;
  std::string marked_label;
  std::optional<ReferenceLine> x_reference;
};
std::string scatter_chart(const Scatter& chart);

// Lines through points, one per series (an optional dashed series for a reference such as ideal
// scaling). Log axes suit geometric sweeps: with log_x the x ticks are `x_ticks` (the swept
// values, printed with commas); with log_y the y ticks are 1, 2, 5 × 10^k. Points with a value
// <= 0 on a log axis are left out.
struct LineSeries {
  std::string name;
  std::string colour;
  std::vector<Point> points;
  bool dashed = false;
  bool markers_only = false;  // points without the line through them (a scatter series)
};
struct LineChart {
  std::string title, x_label, y_label, caption;
  std::vector<LineSeries> series;
  bool log_x = false, log_y = false;
  std::vector<double> x_ticks;  // used with log_x; REQUIRES then: at least one, all > 0
  bool y_from_zero = true;      // linear y axis starts at 0
};
std::string line_chart(const LineChart& chart);

}  // namespace meshplan::svg
