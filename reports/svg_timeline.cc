#include "reports/svg_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "reports/svg_canvas.h"
#include "reports/text_format.h"
#include "simulator/time_columns.h"

namespace meshplan::svg {
namespace {

// Drawn categories; index into kCategories.
struct Category {
  const char* label;
  const char* colour;
};
constexpr std::array<Category, 6> kCategories = {{{"forward", kBlue},
                                                  {"backward", kVermillion},
                                                  {"weight gradient", kOrange},
                                                  {"recompute", kPurple},
                                                  {"optimizer", kGreen},
                                                  {"communication", kSkyBlue}}};
constexpr int kCommunication = 5;

int category_of(sim::OpKind k) {
  switch (k) {
    case sim::OpKind::forward:
      return 0;
    case sim::OpKind::backward:
    case sim::OpKind::backward_input:
      return 1;
    case sim::OpKind::backward_weight:
      return 2;
    case sim::OpKind::recompute:
      return 3;
    case sim::OpKind::optimizer:
      return 4;
    case sim::OpKind::p2p:
    case sim::OpKind::dp_comm:
    case sim::OpKind::zero_gather:
      return kCommunication;
    default:
      return -1;
  }
}

using Coverage = sim::ColumnCoverage<kCategories.size()>;  // per column, per category

// Each column's share per category, in eighths of the column (rounded), so that neighbouring
// columns with the same mix merge.
using Mix = std::array<int, kCategories.size()>;
std::vector<Mix> mixes(const Coverage& lane, double dt) {
  std::vector<Mix> out;
  for (const auto& c : lane) {
    Mix m{};
    for (size_t k = 0; k < c.size(); ++k)
      m[k] = static_cast<int>(std::lround(8 * std::min(c[k] / dt, 1.0)));
    out.push_back(m);
  }
  return out;
}

// Runs of columns with equal mixes as stacked rectangles, categories top to bottom.
void draw_lane(Canvas& svg, const std::vector<Mix>& cols, double left, double col_px, double y,
               double h) {
  size_t i = 0;
  while (i < cols.size()) {
    size_t j = i;
    while (j < cols.size() && cols[j] == cols[i]) ++j;
    double offset = 0;
    for (size_t k = 0; k < kCategories.size(); ++k) {
      const double part =
          h * std::min(cols[i][k], 8 - static_cast<int>(offset * 8 / h + 0.5)) / 8.0;
      if (part <= 0) continue;
      svg.rect(left + col_px * static_cast<double>(i), y + offset,
               col_px * static_cast<double>(j - i), part, kCategories[k].colour);
      offset += part;
    }
    i = j;
  }
}

}  // namespace

std::string pipeline_timeline_chart(const sim::OperationGraph& graph, const sim::Timeline& timeline,
                                    int stages, const std::string& title, int columns) {
  columns = std::max(columns, 1);
  const double step = timeline.makespan_s > 0 ? timeline.makespan_s : 1.0;
  const double dt = step / columns;
  std::vector<Coverage> compute(static_cast<size_t>(stages), Coverage(columns));
  std::vector<Coverage> comm(static_cast<size_t>(stages), Coverage(columns));
  for (sim::OpId id = 0; id < graph.op_count(); ++id) {
    const sim::Operation& op = graph.op(id);
    const int cat = category_of(op.tags.kind);
    const int stage = graph.stream(op.stream).stage;
    if (cat < 0 || stage < 0 || stage >= stages || timeline.end_s[id] <= timeline.start_s[id])
      continue;
    Coverage& lane = cat == kCommunication ? comm[stage] : compute[stage];
    sim::cover(lane, dt, timeline.start_s[id], timeline.end_s[id], cat);
  }
  const double row_h = stages > 32 ? 12 : 26, left = 90, plot_w = 800;
  const int height = static_cast<int>(130 + row_h * stages);
  Canvas svg(static_cast<int>(left + plot_w + 30), height, title);
  std::vector<LegendEntry> legend;
  for (const Category& c : kCategories) legend.push_back({c.label, c.colour});
  legend.push_back({"idle", kIdle});
  svg.legend(left, 44, legend, plot_w);
  const double top = 62, col_px = plot_w / columns;
  for (int s = 0; s < stages; ++s) {
    const double y = top + row_h * s;
    svg.rect(left, y + 1, plot_w, row_h - 2, kIdle);
    draw_lane(svg, mixes(compute[s], dt), left, col_px, y + 1, (row_h - 2) * 0.72);
    draw_lane(svg, mixes(comm[s], dt), left, col_px, y + 1 + (row_h - 2) * 0.76,
              (row_h - 2) * 0.24);
    if (stages <= 32 || s % 4 == 0)
      svg.text(left - 8, y + row_h * 0.65, fmt::format("stage {}", s), "end", 11);
  }
  const double bottom = top + row_h * stages;
  const std::vector<double> ticks = nice_ticks(0, step * 1e3, 8);
  // Ticks past the step end are dropped: the axis ends at the step time.
  std::vector<double> shown;
  for (double t : ticks)
    if (t <= step * 1e3 * (1 + 1e-9)) shown.push_back(t);
  for (double t : shown) {
    const double x = left + t / (step * 1e3) * plot_w;
    svg.line(x, bottom, x, bottom + 5, kBlack);
    svg.text(x, bottom + 18, tick_label(t, ticks[1] - ticks[0]), "middle", 11);
  }
  svg.line(left, bottom, left + plot_w, bottom, kBlack);
  svg.text(left + plot_w / 2, bottom + 36, fmt::format("time in step (ms); step {}", seconds(step)),
           "middle", 12);
  return svg.finish();
}

}  // namespace meshplan::svg
