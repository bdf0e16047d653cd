// reports/estimate_render.cc: the plan summary table tells rows apart and prints no row twice.
#include "reports/estimate_render.h"

#include <doctest/doctest.h>

namespace meshplan {
namespace {

Estimate estimate(const std::string& layout_text, double step_s) {
  Result<Layout> l = parse_layout(layout_text);
  REQUIRE(l.ok());
  Estimate e;
  e.layout = l.value();
  e.step_time_s = step_s;
  e.peak_bytes = 40.0 * (1 << 30);
  e.capacity_bytes = 80.0 * (1 << 30);
  e.tokens_per_s = 1000;
  e.mfu = 0.5;
  return e;
}

TEST_CASE("rows that print the same share one row listing their ranks and what differs") {
  SearchResult r;
  r.ranked = {estimate("tp=8,pp=4,dp=2,order=tp-cp-dp-pp", 1.0),
              estimate("tp=8,pp=4,dp=2,order=tp-cp-pp-dp", 1.0),  // same figures: merged
              estimate("tp=8,pp=4,dp=2,tp_overlap=true", 0.9),    // same label, faster
              estimate("tp=8,pp=2,dp=4", 1.1)};
  const std::string md = plan_markdown(r);
  CHECK(md.find("| 1,2 | `tp8 pp4 dp2 z1 mbs1 1f1b order=tp-cp-dp-pp/tp-cp-pp-dp` |") !=
        std::string::npos);
  CHECK(md.find("| 3 | `tp8 pp4 dp2 z1 mbs1 1f1b tp_overlap=true` |") != std::string::npos);
  CHECK(md.find("| 4 | `tp8 pp2 dp4 z1 mbs1 1f1b` |") != std::string::npos);
  CHECK(md.find("| 2 |") == std::string::npos);
}

}  // namespace
}  // namespace meshplan
