// cli/progress_bar.cc: throttled, monotonic redraws.
#include "cli/progress_bar.h"

#include <doctest/doctest.h>

#include <vector>

namespace meshplan::cli {
namespace {

struct Fake {
  double now_s = 0;
  std::vector<std::string> writes;
  ProgressBar bar{[this](const std::string& s) { writes.push_back(s); }, [this] { return now_s; },
                  0.1, 10};
};

TEST_CASE("progress_line rounds cells and percent down") {
  CHECK(progress_line(0, 200, 10) == "\r[          ]   0%");
  CHECK(progress_line(99, 200, 10) == "\r[####      ]  49%");
  CHECK(progress_line(200, 200, 10) == "\r[##########] 100%");
}

TEST_CASE("updates within 0.1 s of the last redraw are not drawn, the final one always is") {
  Fake f;
  f.bar.update(1, 100);  // first: drawn
  f.now_s = 0.05;
  f.bar.update(50, 100);  // 50 ms later: skipped
  f.now_s = 0.09;
  f.bar.update(100, 100);  // final: drawn, then cleared
  REQUIRE(f.writes.size() == 3);
  CHECK(f.writes[0] == "\r[          ]   1%");
  CHECK(f.writes[1] == "\r[##########] 100%");
  CHECK(f.writes[2] == "\r" + std::string(18, ' ') + "\r");
  f.bar.update(100, 100);  // after the end: nothing
  CHECK(f.writes.size() == 3);
}

TEST_CASE("a late, smaller count never moves the bar backwards") {
  Fake f;
  f.bar.update(99, 100);
  f.now_s = 1;
  f.bar.update(98, 100);  // another thread's earlier item, reported late
  REQUIRE(f.writes.size() == 1);
  CHECK(f.writes[0] == "\r[######### ]  99%");
}

TEST_CASE("an unchanged line is not rewritten, however much time passed") {
  Fake f;
  f.bar.update(1, 1000);  // 0%
  for (int i = 2; i <= 9; ++i) {
    f.now_s += 1;
    f.bar.update(i, 1000);  // still 0%, same cells
  }
  CHECK(f.writes.size() == 1);
}

}  // namespace
}  // namespace meshplan::cli
