// A simulated step sampled into equal time columns, for the fixed-width timeline charts (the
// text Gantt chart here, the SVG pipeline timeline in reports/): each column holds how many
// seconds each kind of work fills in it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace meshplan::sim {

// columns[col][kind]: seconds of `kind` inside column `col`.
template <size_t Kinds>
using ColumnCoverage = std::vector<std::array<double, Kinds>>;

// Adds the seconds that [start, end) spends in each column of width `dt` to columns[col][kind].
// Time outside the columns is dropped.
// REQUIRES: dt > 0; !columns.empty(); 0 <= kind < Kinds.
template <size_t Kinds>
void cover(ColumnCoverage<Kinds>& columns, double dt, double start, double end, int kind) {
  const int width = static_cast<int>(columns.size());
  int col = std::clamp(static_cast<int>(std::floor(start / dt)), 0, width - 1);
  for (; col < width && col * dt < end; ++col) {
    const double overlap = std::min(end, (col + 1) * dt) - std::max(start, col * dt);
    if (overlap > 0) columns[col][static_cast<size_t>(kind)] += overlap;
  }
}

}  // namespace meshplan::sim
