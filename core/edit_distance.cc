#include "core/edit_distance.h"

#include <algorithm>
#include <numeric>

namespace meshplan {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(2, static_cast<int>(name.size()) / 3);
  // An abbreviation ("sel" for "selective") is a match too.
  if (name.size() >= 2) {
    for (const auto& c : candidates)
      if (c.size() > name.size() && c.compare(0, name.size(), name) == 0) return c;
  }
  std::string best;
  int best_distance = limit + 1;
  for (const auto& c : candidates) {
    int d = edit_distance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  std::string m = closest_match(name, candidates);
  return m.empty() ? "" : " (did you mean '" + m + "'?)";
}

}  // namespace meshplan
