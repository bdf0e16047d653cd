// The serving report's charts from hand-made plans: which points each series carries, the load
// axis's ticks, the SLO lines, and which files the report holds.
#include "reports/serving_report.h"

#include <doctest/doctest.h>

using namespace meshplan;
using namespace meshplan::serving;

namespace {

ServingEstimate estimate(double per_gpu, double per_user, bool meets) {
  ServingEstimate e;
  e.output_tokens_per_s_per_gpu = per_gpu;
  e.tokens_per_s_per_user = per_user;
  e.meets_slo = meets;
  return e;
}

LoadPoint point(double concurrency, double tokens_per_s, double ttft_p50, double ttft_p99,
                double tpot_p50, double tpot_p99) {
  LoadPoint l;
  l.concurrency = concurrency;
  l.output_tokens_per_s = tokens_per_s;
  l.ttft_s.p50 = ttft_p50, l.ttft_s.p99 = ttft_p99;
  l.tpot_s.p50 = tpot_p50, l.tpot_s.p99 = tpot_p99;
  return l;
}

// Three layouts ranked (the best first), the first two on the front; a TTFT SLO of 1 s and a
// TPOT SLO of 50 ms; a load curve at 1, 2, 4 and 5 requests and offline.
struct Fixture {
  ServingProblem problem;
  ServeReport report;
  Fixture() {
    problem.options.slo = {1.0, 0.05};
    report.problem = &problem;
    report.searched = true;
    report.result.ranked = {estimate(500, 30, true), estimate(300, 60, true),
                            estimate(200, 40, false)};
    report.result.pareto = {0, 1};
    report.load = {point(1, 100, 0.1, 0.2, 0.010, 0.011), point(2, 190, 0.2, 0.3, 0.011, 0.012),
                   point(4, 350, 0.3, 0.5, 0.012, 0.014), point(5, 400, 0.4, 0.9, 0.013, 0.020),
                   point(0, 420, 9.0, 20.0, 0.015, 0.016)};
  }
};

std::vector<std::pair<double, double>> xy(const svg::LineSeries& s) {
  std::vector<std::pair<double, double>> out;
  for (const svg::Point& p : s.points) out.emplace_back(p.x, p.y);
  return out;
}

using XY = std::vector<std::pair<double, double>>;

}  // namespace

TEST_CASE("serving report: the Pareto chart splits the layouts by the SLO and marks the plan") {
  Fixture f;
  const svg::LineChart c = serving_pareto_chart(f.report);
  REQUIRE(c.series.size() == 4);
  CHECK(c.series[0].name == "meets the SLO");
  CHECK(c.series[0].markers_only);
  CHECK(xy(c.series[0]) == XY{{30, 500}, {60, 300}});
  CHECK(c.series[1].name == "misses the SLO");
  CHECK(xy(c.series[1]) == XY{{40, 200}});
  CHECK(c.series[2].name == "Pareto front");
  CHECK_FALSE(c.series[2].markers_only);
  CHECK(xy(c.series[2]) == XY{{30, 500}, {60, 300}});
  CHECK(c.series[3].name == "plan (best)");
  CHECK(xy(c.series[3]) == XY{{30, 500}});
  // Without an SLO every layout is one series.
  f.problem.options.slo = {};
  const svg::LineChart plain = serving_pareto_chart(f.report);
  REQUIRE(plain.series.size() == 3);
  CHECK(plain.series[0].name == "layouts evaluated");
  CHECK(plain.series[0].points.size() == 3);
}

TEST_CASE("serving report: latency charts plot p50 and p99 against concurrency with the SLO") {
  Fixture f;
  const svg::LineChart ttft = serving_latency_chart(f.report, LatencyKind::ttft);
  CHECK(ttft.log_x);
  // 5 is within 1.5× of 4: its tick replaces 4's (the points stay).
  CHECK(ttft.x_ticks == std::vector<double>{1, 2, 5});
  REQUIRE(ttft.series.size() == 3);
  CHECK(ttft.series[0].name == "SLO ≤ 1 s");
  CHECK(ttft.series[0].dashed);
  CHECK(xy(ttft.series[0]) == XY{{1, 1.0}, {5, 1.0}});
  CHECK(xy(ttft.series[1]) == XY{{1, 0.1}, {2, 0.2}, {4, 0.3}, {5, 0.4}});  // p50, offline left out
  CHECK(xy(ttft.series[2]) == XY{{1, 0.2}, {2, 0.3}, {4, 0.5}, {5, 0.9}});  // p99
  const svg::LineChart tpot = serving_latency_chart(f.report, LatencyKind::tpot);
  REQUIRE(tpot.series.size() == 3);
  CHECK(tpot.series[0].name == "SLO ≤ 50 ms");
  CHECK(tpot.y_label == "TPOT (ms)");
  CHECK(tpot.series[2].points[3].y == doctest::Approx(20.0));  // 0.020 s in ms
  f.problem.options.slo = {};
  CHECK(serving_latency_chart(f.report, LatencyKind::ttft).series.size() == 2);
}

TEST_CASE("serving report: the throughput chart sets the closed loop against offline") {
  Fixture f;
  const svg::LineChart c = serving_throughput_chart(f.report);
  REQUIRE(c.series.size() == 2);
  CHECK(c.series[0].name == "offline (saturation)");
  CHECK(xy(c.series[0]) == XY{{1, 420}, {5, 420}});
  CHECK(xy(c.series[1]) == XY{{1, 100}, {2, 190}, {4, 350}, {5, 400}});
}

TEST_CASE("serving report: serve.md links the charts it has") {
  Fixture f;
  std::vector<ReportFile> files = render_serving_report(f.report);
  REQUIRE(files.size() == 5);
  CHECK(files[0].name == "serve.md");
  CHECK(files[1].name == "pareto.svg");
  CHECK(files[4].name == "throughput.svg");
  CHECK(files[0].content.find("![Pareto front](pareto.svg)") != std::string::npos);
  CHECK(files[0].content.find("![TPOT against load](tpot.svg)") != std::string::npos);
  // A fixed layout without a load curve: serve.md alone, no chart section.
  f.report.searched = false;
  f.report.result.ranked.resize(1);
  f.report.result.pareto = {0};
  f.report.load.clear();
  files = render_serving_report(f.report);
  REQUIRE(files.size() == 1);
  CHECK(files[0].content.find("## Charts") == std::string::npos);
}
