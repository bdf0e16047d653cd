// The serving report (`meshplan serve --format md --out DIR`): serve.md with the plan's table and
// details and the charts it links: the Pareto front of tokens/s per GPU against tokens/s per
// user over every layout evaluated (a search), and the best layout's TTFT, TPOT and throughput
// against load (its load curve). Pure: the caller writes the files. Deterministic.
#pragma once

#include <string>
#include <vector>

#include "reports/report_file.h"
#include "reports/svg_charts.h"
#include "serving/serving_render.h"

namespace meshplan {

// The charts' data, before rendering (each a function of the report alone).
// Every layout evaluated, split into those meeting the SLO and those missing it (one series
// without an SLO), the Pareto front in order of tokens/s per user, and the plan (the best).
svg::LineChart serving_pareto_chart(const serving::ServeReport& r);
// TTFT (s) or TPOT (ms) p50 and p99 against closed-loop concurrency (the load curve's points but
// the offline one), with the SLO as a dashed line when one is set.
enum class LatencyKind { ttft, tpot };
svg::LineChart serving_latency_chart(const serving::ServeReport& r, LatencyKind kind);
// Output tokens/s against concurrency, the offline saturation throughput dashed.
svg::LineChart serving_throughput_chart(const serving::ServeReport& r);

// pareto.svg (a search with more than one layout) and, with a load curve, ttft.svg, tpot.svg and
// throughput.svg.
std::vector<ReportFile> serving_chart_files(const serving::ServeReport& r);

// serve.md first, then its charts.
std::vector<ReportFile> render_serving_report(const serving::ServeReport& r);

}  // namespace meshplan
