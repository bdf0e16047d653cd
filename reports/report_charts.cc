#include "reports/report_charts.h"

#include <fmt/format.h>

#include "core/units.h"
#include "reports/estimate_render.h"
#include "reports/svg_canvas.h"
#include "reports/svg_charts.h"
#include "reports/svg_timeline.h"

namespace meshplan {
namespace {

using units::kGiB;

}  // namespace

std::string memory_chart(const Estimate& e) {
  svg::StackedBars c;
  c.title = "Memory per GPU by pipeline stage";
  c.y_label = "GiB per GPU";
  c.x_label = "pipeline stage of " + short_label(e.layout);
  c.series = {{"params", svg::kBlue, {}},
              {"grads", svg::kSkyBlue, {}},
              {"optimizer", svg::kGreen, {}},
              {"activations", svg::kOrange, {}},
              {"other", svg::kGrey, {}}};
  for (const StageMemory& s : e.memory.stages) {
    c.categories.push_back(std::to_string(s.stage));
    c.series[0].values.push_back(s.params_bytes / kGiB);
    c.series[1].values.push_back(s.grads_bytes / kGiB);
    c.series[2].values.push_back(s.optimizer_bytes / kGiB);
    c.series[3].values.push_back(s.activations_bytes / kGiB);
    c.series[4].values.push_back(s.other_bytes() / kGiB);
  }
  c.reference = svg::ReferenceLine{e.capacity_bytes / kGiB,
                                   fmt::format("capacity {:.1f} GiB", e.capacity_bytes / kGiB)};
  return svg::stacked_bar_chart(c);
}

std::string breakdown_chart(const Estimate& e) {
  const TimeBreakdown& b = e.breakdown;
  svg::HorizontalBars c;
  c.title =
      fmt::format("Step time breakdown (critical stage), step {:.1f} ms", e.step_time_s * 1e3);
  c.x_label = "milliseconds per step";
  c.value_suffix = " ms";
  for (const BreakdownComponent& k : breakdown_components(b)) {
    const char* colour = k.kind == ComponentKind::compute     ? svg::kBlue
                         : k.kind == ComponentKind::recompute ? svg::kPurple
                         : k.kind == ComponentKind::bubble    ? svg::kGrey
                         : k.kind == ComponentKind::optimizer ? svg::kGreen
                                                              : svg::kSkyBlue;
    c.bars.push_back({k.label, k.seconds * 1e3, colour});
  }
  return svg::horizontal_bar_chart(c);
}

std::string mfu_memory_chart(const ReportData& d) {
  svg::Scatter c;
  c.title = "MFU against peak memory of feasible layouts";
  c.x_label = "peak memory per GPU (GiB)";
  c.y_label = "MFU (%)";
  c.points_label = fmt::format("{} best feasible layouts (analytic)", d.sample.size());
  for (const Estimate& e : d.sample) c.points.push_back({e.peak_bytes / kGiB, 100 * e.mfu});
  if (!d.search.ranked.empty()) {
    const Estimate& best = d.search.ranked.front();
    c.marked = svg::Point{best.peak_bytes / kGiB, 100 * best.mfu};
    c.marked_label = "chosen: " + short_label(best.layout);
    c.x_reference = svg::ReferenceLine{best.capacity_bytes / kGiB, "capacity"};
  }
  c.caption = fmt::format(
      "The {} best of {} feasible layouts by analytic MFU (a bounded, "
      "deterministic sample), re-evaluated.",
      d.sample.size(), d.search.feasible);
  return svg::scatter_chart(c);
}

std::string timeline_chart(const ReportData& d) {
  const sim::PipelineSimulation& s = *d.best_simulation;
  const Estimate& best = d.search.ranked.front();
  return svg::pipeline_timeline_chart(s.pipeline.graph, s.timeline,
                                      static_cast<int>(best.layout.pp),
                                      fmt::format("Simulated step: {} ({} micro-batches)",
                                                  short_label(best.layout), best.micro_batches));
}

}  // namespace meshplan
