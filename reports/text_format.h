// Number formatting shared by the text, Markdown and JSON renderers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshplan {

std::string with_commas(int64_t n);    // 70553706496 -> "70,553,706,496"
std::string gib(double bytes);         // "61.27 GiB"
std::string gib_and_gb(double bytes);  // "61.27 GiB (65.79 GB)"
std::string short_count(double n);     // 8.03e9 -> "8.03 B", 1.2e6 -> "1.20 M"
std::string seconds(double s);         // "1.234 s", "12.3 ms", "45.6 µs"

// A plain text table: columns right-aligned except the first `left_columns`.
std::string text_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, size_t left_columns = 1);
// A GitHub Markdown table.
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows);
// Comma-separated values with RFC 4180 quoting.
std::string csv_table(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows);

}  // namespace meshplan
