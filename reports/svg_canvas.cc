#include "reports/svg_canvas.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>

namespace meshplan::svg {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  assert(hi > lo && count >= 2);
  const double raw = (hi - lo) / (count - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double f : {1.0, 2.0, 5.0}) {
    if (f * mag >= raw) {
      step = f * mag;
      break;
    }
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; t < hi + step - 1e-9 * step; t += step) ticks.push_back(t);
  if (ticks.size() < 2) ticks.push_back(first + step);
  return ticks;
}

std::string tick_label(double v, double step) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.rfind("-0", 0) == 0 && std::stod(s) == 0) s.erase(0, 1);
  return s;
}

Canvas::Canvas(int width, int height, const std::string& title) : width_(width), height_(height) {
  body_ += fmt::format("<title>{}</title>\n", escape(title));
  body_ += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#FFFFFF\"/>\n",
                       width, height);
  text(width / 2.0, 22, title, "middle", 15, true);
}

void Canvas::rect(double x, double y, double w, double h, const std::string& fill,
                  const std::string& tooltip) {
  body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"", num(x),
                       num(y), num(w), num(h), fill);
  if (tooltip.empty()) {
    body_ += "/>\n";
  } else {
    body_ += fmt::format("><title>{}</title></rect>\n", escape(tooltip));
  }
}

void Canvas::line(double x1, double y1, double x2, double y2, const std::string& stroke,
                  double stroke_width, bool dashed) {
  body_ += fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
      num(x1), num(y1), num(x2), num(y2), stroke, num(stroke_width),
      dashed ? " stroke-dasharray=\"6 4\"" : "");
}

void Canvas::circle(double cx, double cy, double r, const std::string& fill,
                    const std::string& stroke) {
  body_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"", num(cx), num(cy), num(r),
                       fill);
  if (!stroke.empty()) body_ += fmt::format(" stroke=\"{}\" stroke-width=\"1.5\"", stroke);
  body_ += "/>\n";
}

void Canvas::text(double x, double y, const std::string& text, const std::string& anchor, int size,
                  bool bold, int rotate) {
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\"", num(x),
                       num(y), size, anchor);
  if (bold) body_ += " font-weight=\"bold\"";
  if (rotate != 0) body_ += fmt::format(" transform=\"rotate({} {} {})\"", rotate, num(x), num(y));
  body_ += fmt::format(">{}</text>\n", escape(text));
}

void Canvas::legend(double x, double y, const std::vector<LegendEntry>& entries, double max_width) {
  double cx = x, cy = y;
  for (const LegendEntry& e : entries) {
    const double w = 22 + 7.0 * static_cast<double>(e.label.size());
    if (cx > x && cx + w > x + max_width) {
      cx = x;
      cy += 18;
    }
    rect(cx, cy - 10, 12, 12, e.colour);
    text(cx + 16, cy, e.label, "start", 12);
    cx += w + 10;
  }
}

void Canvas::y_axis(double left, double right, double top, double bottom,
                    const std::vector<double>& ticks, const std::string& label) {
  const double lo = ticks.front(), hi = ticks.back(), step = ticks[1] - ticks[0];
  for (double t : ticks) {
    const double y = bottom - (t - lo) / (hi - lo) * (bottom - top);
    line(left, y, right, y, "#DDDDDD");
    text(left - 6, y + 4, tick_label(t, step), "end", 11);
  }
  line(left, top, left, bottom, kBlack);
  text(left - 48, (top + bottom) / 2, label, "middle", 12, false, -90);
}

void Canvas::x_axis(double left, double right, double bottom, const std::vector<double>& ticks,
                    const std::string& label) {
  const double lo = ticks.front(), hi = ticks.back(), step = ticks[1] - ticks[0];
  for (double t : ticks) {
    const double x = left + (t - lo) / (hi - lo) * (right - left);
    line(x, bottom, x, bottom + 5, kBlack);
    text(x, bottom + 18, tick_label(t, step), "middle", 11);
  }
  line(left, bottom, right, bottom, kBlack);
  text((left + right) / 2, bottom + 36, label, "middle", 12);
}

std::string Canvas::finish() const {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
      width_, height_);
  out += body_;
  out += "</svg>\n";
  return out;
}

}  // namespace meshplan::svg
