#include "core/count_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>

namespace meshplan {
namespace {

// A positive integer spelling the whole of `s`, or 0.
int64_t positive(const std::string& s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v > 0 ? v : 0;
}

}  // namespace

Result<std::vector<int64_t>> parse_count_list(const std::string& text, const std::string& origin,
                                              const std::string& field, int64_t max_value) {
  std::vector<int64_t> out;
  std::vector<Diagnostic> errors;
  auto error = [&](size_t column, const std::string& value, const std::string& rule) {
    Diagnostic d;
    d.where.file = origin;
    d.where.line = 1;
    d.where.column = static_cast<int>(column) + 1;
    d.where.source_line = text;
    d.field = field, d.value = value, d.rule = rule;
    errors.push_back(std::move(d));
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t dots = item.find("..");
    if (dots == std::string::npos) {
      const int64_t v = positive(item);
      if (v == 0)
        error(start, item, "must be a positive integer, or a range A..B (doubling) or A..B*F");
      else if (v > max_value)
        error(start, item, fmt::format("must be at most {}", max_value));
      else
        out.push_back(v);
    } else {
      const std::string rest = item.substr(dots + 2);
      const size_t star = rest.find('*');
      const int64_t first = positive(item.substr(0, dots));
      const int64_t last = positive(rest.substr(0, star));
      const int64_t factor = star == std::string::npos ? 2 : positive(rest.substr(star + 1));
      if (first == 0 || last == 0 || factor == 0)
        error(start, item, "a range is A..B or A..B*F with positive integers (e.g. 64..16384)");
      else if (first > last)
        error(start, item, "a range A..B needs A <= B");
      else if (factor < 2)
        error(start, item, "a range's factor F in A..B*F must be at least 2");
      else if (last > max_value)
        error(start, item, fmt::format("must be at most {}", max_value));
      else
        for (int64_t v = first;; v *= factor) {
          out.push_back(v);
          if (v > last / factor) break;
        }
    }
    start = end + 1;
  }
  if (!errors.empty()) return errors;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace meshplan
