#include "reports/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"

namespace meshplan {

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  if (n < 0) out.insert(out.begin(), '-');
  return out;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / units::kGiB); }

std::string gib_and_gb(double bytes) {
  return fmt::format("{:.2f} GiB ({:.2f} GB)", bytes / units::kGiB, bytes / units::kGB);
}

std::string short_count(double n) {
  if (std::fabs(n) >= 1e12) return fmt::format("{:.2f} T", n / 1e12);
  if (std::fabs(n) >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (std::fabs(n) >= 1e6) return fmt::format("{:.2f} M", n / 1e6);
  if (std::fabs(n) >= 1e3) return fmt::format("{:.2f} K", n / 1e3);
  return fmt::format("{:.0f}", n);
}

std::string seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.1f} µs", s * 1e6);
}

namespace {

// Display width counting UTF-8 code points, not bytes.
size_t display_width(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t width, bool left) {
  size_t w = display_width(s);
  std::string fill(width > w ? width - w : 0, ' ');
  return left ? s + fill : fill + s;
}

}  // namespace

std::string text_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, size_t left_columns) {
  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c) widths[c] = display_width(header[c]);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], display_width(r[c]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += "  ";
      out += pad(cells[c], widths[c], c < left_columns);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  size_t total = 0;
  for (size_t w : widths) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  std::string out = fmt::format("| {} |\n|", fmt::join(header, " | "));
  for (size_t c = 0; c < header.size(); ++c) out += c == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : rows) out += fmt::format("| {} |\n", fmt::join(r, " | "));
  return out;
}

std::string csv_table(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows) {
  auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q(1, '"');
    for (char c : s) {
      if (c == '"') q += '"';
      q += c;
    }
    q += '"';
    return q;
  };
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += ',';
      out += quote(cells[c]);
    }
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace meshplan
