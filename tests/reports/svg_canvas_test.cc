// The SVG renderer: escaping, numbers, ticks, and charts that parse and render.
#include "reports/svg_canvas.h"

#include <doctest/doctest.h>

#include "reports/svg_charts.h"
#include "tests/test_files.h"

using namespace meshplan;
namespace fs = std::filesystem;

TEST_CASE("svg: escape and numbers") {
  CHECK(svg::escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  CHECK(svg::num(12.0) == "12");
  CHECK(svg::num(12.25) == "12.2");  // round half to even in fmt's shortest fixed
  CHECK(svg::num(-0.01) == "0");
  CHECK(svg::num(3.5) == "3.5");
}

TEST_CASE("svg: nice ticks are 1, 2 or 5 times a power of ten and cover the range") {
  CHECK(svg::nice_ticks(0, 84, 6) == std::vector<double>{0, 20, 40, 60, 80, 100});
  CHECK(svg::nice_ticks(0, 1, 6) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(svg::tick_label(0.5, 0.5) == "0.5");
  CHECK(svg::tick_label(2000, 500) == "2000");
}

TEST_CASE("svg: a log-log line chart ticks the swept values and 1-2-5 decades") {
  svg::LineChart c;
  c.title = "t";
  c.log_x = c.log_y = true;
  c.x_ticks = {64, 1024, 8192};
  c.series = {{"best", svg::kBlue, {{64, 0.064}, {1024, 1.03}, {8192, 6.88}}, false}};
  const std::string text = svg::line_chart(c);
  for (const char* label : {">64<", ">1,024<", ">8,192<", ">0.05<", ">0.1<", ">1<", ">10<"}) {
    CAPTURE(label);
    CHECK(text.find(label) != std::string::npos);
  }
  CHECK(text.find(">0.02<") == std::string::npos);
}

TEST_CASE("svg: charts are well-formed and render at their declared size") {
  const fs::path dir = test::fresh_dir("svg-charts");
  svg::StackedBars bars{"Memory <per> stage",
                        "GiB",
                        "stage",
                        {"0", "1"},
                        {{"params", svg::kBlue, {10, 12}}, {"activations", svg::kOrange, {30, 20}}},
                        svg::ReferenceLine{80, "capacity 80 GiB"}};
  svg::HorizontalBars h{
      "Breakdown", "ms", {{"compute", 100, svg::kBlue}, {"bubble", 10, svg::kGrey}}, " ms"};
  svg::Scatter s{"MFU",
                 "GiB",
                 "%",
                 "caption & more",
                 {{10, 40}, {20, 45}},
                 "layouts",
                 svg::Point{20, 45},
                 "chosen",
                 svg::ReferenceLine{80, "capacity"}};
  svg::LineChart line;
  line.title = "Throughput";
  line.x_label = "GPUs";
  line.y_label = "tokens/s";
  line.log_x = line.log_y = true;
  line.x_ticks = {64, 128, 256};
  line.series = {{"ideal", svg::kGrey, {{64, 1}, {128, 2}, {256, 4}}, true},
                 {"best", svg::kBlue, {{64, 1}, {128, 1.9}, {256, 3.5}}, false}};
  const std::vector<std::pair<std::string, std::string>> docs = {
      {"bars.svg", svg::stacked_bar_chart(bars)},
      {"h.svg", svg::horizontal_bar_chart(h)},
      {"s.svg", svg::scatter_chart(s)},
      {"line.svg", svg::line_chart(line)}};
  for (const auto& [name, text] : docs) {
    CAPTURE(name);
    CHECK(text.find("<text") != std::string::npos);
    if (name == "bars.svg") CHECK(text.find("Memory &lt;per&gt; stage") != std::string::npos);
    test::write_file(dir / name, text);
    CHECK(test::well_formed_xml(dir / name));
    const auto size = test::svg_size(text);
    CHECK(test::render_png(dir / name, dir / (name + ".png")) == size);
  }
  fs::remove_all(dir);
}
