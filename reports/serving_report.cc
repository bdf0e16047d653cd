#include "reports/serving_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/svg_canvas.h"

namespace meshplan {
namespace {

using serving::LoadPoint;
using serving::ServeReport;
using serving::ServingEstimate;

constexpr double kMsPerS = 1e3;
constexpr double kTickRatio = 1.5;

svg::Point pareto_point(const ServingEstimate& e) {
  return {e.tokens_per_s_per_user, e.output_tokens_per_s_per_gpu};
}

// The load curve's points under load, closed-loop concurrencies or open-loop rates (the offline
// one is the saturation).
std::vector<const LoadPoint*> loaded(const ServeReport& r) {
  std::vector<const LoadPoint*> out;
  for (const LoadPoint& l : r.load)
    if (!l.offline()) out.push_back(&l);
  return out;
}

const LoadPoint* offline_point(const ServeReport& r) {
  for (const LoadPoint& l : r.load)
    if (l.offline()) return &l;
  return nullptr;
}

// A log-x frame over the load curve's concurrencies (or request rates).
svg::LineChart load_frame(const ServeReport& r, std::string title, std::string y_label) {
  svg::LineChart c;
  c.title = std::move(title);
  c.x_label = serving::is_rate_curve(r.load) ? "request rate (Poisson requests/s, all replicas)"
                                             : "concurrency (requests in flight, all replicas)";
  c.y_label = std::move(y_label);
  c.log_x = true;
  // A tick per point, but none within 1.5× of the one before: such a point gets none, unless it
  // is the last (the most a closed loop admits often sits just past a power of two; the highest
  // rate), whose tick replaces the one before.
  const std::vector<const LoadPoint*> points = loaded(r);
  for (const LoadPoint* l : points) {
    if (!c.x_ticks.empty() && l->load() < kTickRatio * c.x_ticks.back()) {
      if (l != points.back()) continue;
      c.x_ticks.pop_back();
    }
    c.x_ticks.push_back(l->load());
  }
  return c;
}

// A dashed horizontal line at `y` across the chart's concurrencies.
svg::LineSeries level(const svg::LineChart& c, std::string name, double y) {
  svg::LineSeries s{std::move(name), svg::kGrey, {}, true};
  if (!c.x_ticks.empty()) s.points = {{c.x_ticks.front(), y}, {c.x_ticks.back(), y}};
  return s;
}

std::string chart_title(const char* kind) {
  return std::string(kind) + " of the best layout against load";
}

}  // namespace

svg::LineChart serving_pareto_chart(const ServeReport& r) {
  svg::LineChart c;
  c.title = "Tokens/s per GPU against tokens/s per user";
  c.x_label = "tokens/s per user (1 / TPOT)";
  c.y_label = "output tokens/s per GPU";
  const bool slo = r.problem->options.slo.any();
  svg::LineSeries meets{
      slo ? "meets the SLO" : "layouts evaluated", slo ? svg::kGreen : svg::kGrey, {}, false, true};
  svg::LineSeries misses{"misses the SLO", svg::kGrey, {}, false, true};
  // Overloaded layouts are left out where any keeps up, as on the front (pareto_front).
  const bool drop = serving::any_keeps_up(r.result.ranked);
  size_t left_out = 0;
  for (const ServingEstimate& e : r.result.ranked) {
    if (drop && e.overloaded)
      ++left_out;
    else
      (!slo || e.meets_slo ? meets : misses).points.push_back(pareto_point(e));
  }
  svg::LineSeries front{"Pareto front", svg::kBlue, {}, false};
  for (size_t i : r.result.pareto) front.points.push_back(pareto_point(r.result.ranked[i]));
  c.series.push_back(meets);
  if (slo) c.series.push_back(misses);
  c.series.push_back(front);
  if (!r.result.ranked.empty())
    c.series.push_back(
        {"plan (best)", svg::kVermillion, {pareto_point(r.result.ranked.front())}, false, true});
  c.caption =
      fmt::format("{} layouts{}; on the front no other layout is faster both per GPU and per user",
                  r.result.ranked.size() - left_out,
                  left_out > 0 ? fmt::format(" ({} overloaded left out)", left_out) : "");
  return c;
}

svg::LineChart serving_latency_chart(const ServeReport& r, LatencyKind kind) {
  const bool ttft = kind == LatencyKind::ttft;
  const double unit = ttft ? 1 : kMsPerS;
  svg::LineChart c =
      load_frame(r, chart_title(ttft ? "TTFT" : "TPOT"), ttft ? "TTFT (s)" : "TPOT (ms)");
  svg::LineSeries p50{"p50", svg::kBlue, {}, false}, p99{"p99", svg::kVermillion, {}, false};
  for (const LoadPoint* l : loaded(r)) {
    const serving::LatencyStats& s = ttft ? l->ttft_s : l->tpot_s;
    p50.points.push_back({l->load(), s.p50 * unit});
    p99.points.push_back({l->load(), s.p99 * unit});
  }
  const serving::Slo& slo = r.problem->options.slo;
  const double bound = ttft ? slo.ttft_s : slo.tpot_s;
  if (bound > 0)
    c.series.push_back(
        level(c, fmt::format("SLO ≤ {:g} {}", bound * unit, ttft ? "s" : "ms"), bound * unit));
  c.series.push_back(p50);
  c.series.push_back(p99);
  return c;
}

svg::LineChart serving_throughput_chart(const ServeReport& r) {
  svg::LineChart c = load_frame(r, chart_title("Throughput"), "output tokens/s (all GPUs)");
  svg::LineSeries closed{
      serving::is_rate_curve(r.load) ? "Poisson arrivals" : "closed loop", svg::kBlue, {}, false};
  for (const LoadPoint* l : loaded(r)) closed.points.push_back({l->load(), l->output_tokens_per_s});
  if (const LoadPoint* offline = offline_point(r))
    c.series.push_back(level(c, "offline (saturation)", offline->output_tokens_per_s));
  c.series.push_back(closed);
  return c;
}

namespace {

// A chart of the report: its file, the alt text serve.md links it with, and its document.
struct Chart {
  const char* name;
  const char* alt;
  std::string svg;
};

std::vector<Chart> charts_of(const ServeReport& r) {
  std::vector<Chart> charts;
  if (r.searched && r.result.ranked.size() > 1)
    charts.push_back({"pareto.svg", "Pareto front", svg::line_chart(serving_pareto_chart(r))});
  if (!loaded(r).empty()) {
    charts.push_back({"ttft.svg", "TTFT against load",
                      svg::line_chart(serving_latency_chart(r, LatencyKind::ttft))});
    charts.push_back({"tpot.svg", "TPOT against load",
                      svg::line_chart(serving_latency_chart(r, LatencyKind::tpot))});
    charts.push_back({"throughput.svg", "Throughput against load",
                      svg::line_chart(serving_throughput_chart(r))});
  }
  return charts;
}

}  // namespace

std::vector<ReportFile> serving_chart_files(const ServeReport& r) {
  std::vector<ReportFile> files;
  for (Chart& c : charts_of(r)) files.push_back({c.name, std::move(c.svg)});
  return files;
}

std::vector<ReportFile> render_serving_report(const ServeReport& r) {
  const serving::ServingProblem& p = *r.problem;
  std::string md = fmt::format("# meshplan serve: {} on {}\n\n", p.model.name, p.cluster.gpu.name) +
                   "Generated by `meshplan serve`: each layout's memory and step times from the "
                   "cost model, its TTFT, TPOT and throughput from a replay of the requests.\n\n" +
                   serving::serve_markdown(r);
  std::vector<Chart> charts = charts_of(r);
  if (!charts.empty()) md += "\n## Charts\n";
  for (const Chart& c : charts) md += fmt::format("\n![{}]({})\n", c.alt, c.name);
  std::vector<ReportFile> files = {{"serve.md", md}};
  for (Chart& c : charts) files.push_back({c.name, std::move(c.svg)});
  return files;
}

}  // namespace meshplan
