// A small SVG writer for report charts: shapes, selectable text, axes with "nice" ticks, and a
// legend, in the Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008, "Color Universal
// Design"). Pure: builds a string; coordinates print with one decimal so output is
// byte-deterministic.
#pragma once

#include <string>
#include <vector>

namespace meshplan::svg {

// Okabe–Ito palette.
inline constexpr const char* kBlack = "#000000";
inline constexpr const char* kOrange = "#E69F00";
inline constexpr const char* kSkyBlue = "#56B4E9";
inline constexpr const char* kGreen = "#009E73";
inline constexpr const char* kYellow = "#F0E442";
inline constexpr const char* kBlue = "#0072B2";
inline constexpr const char* kVermillion = "#D55E00";
inline constexpr const char* kPurple = "#CC79A7";
inline constexpr const char* kGrey = "#999999";
inline constexpr const char* kIdle = "#EEEEEE";  // background of idle time

// XML-escapes &, <, >, " and '.
std::string escape(const std::string& text);
// "12.5", "3", "-0.1": one decimal, trailing ".0" dropped.
std::string num(double v);
// Tick values covering [lo, hi]: multiples of 1, 2 or 5 × 10^k, about `count` of them, starting
// at or below lo and ending at or above hi. REQUIRES: hi > lo, count >= 2.
std::vector<double> nice_ticks(double lo, double hi, int count);
// A tick label without needless decimals for the tick spacing ("0.5", "10", "2,000" is "2000").
std::string tick_label(double v, double step);

struct LegendEntry {
  std::string label;
  std::string colour;
};

class Canvas {
 public:
  Canvas(int width, int height, const std::string& title);
  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& tooltip = {});
  void line(double x1, double y1, double x2, double y2, const std::string& stroke,
            double stroke_width = 1, bool dashed = false);
  void circle(double cx, double cy, double r, const std::string& fill,
              const std::string& stroke = {});
  // anchor: "start" | "middle" | "end". rotate: degrees about (x, y).
  void text(double x, double y, const std::string& text, const std::string& anchor = "start",
            int size = 12, bool bold = false, int rotate = 0);
  // Legend swatches in a row starting at (x, y), wrapping at `max_width`.
  void legend(double x, double y, const std::vector<LegendEntry>& entries, double max_width);
  // Left y axis from `lo` to `hi` over pixel rows [top, bottom], grid lines to `right`.
  void y_axis(double left, double right, double top, double bottom,
              const std::vector<double>& ticks, const std::string& label);
  // Bottom x axis from ticks.front() to ticks.back() over pixel columns [left, right].
  void x_axis(double left, double right, double bottom, const std::vector<double>& ticks,
              const std::string& label);
  // The finished document.
  std::string finish() const;

 private:
  int width_, height_;
  std::string body_;
};

}  // namespace meshplan::svg
