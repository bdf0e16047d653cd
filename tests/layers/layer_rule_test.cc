// The layer rule holds for the source tree, and the checker names an upward include by file,
// line, header and rule (shown on a fake tree built in a temporary folder).
#include "tests/layers/layer_rule.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>

using namespace meshplan::test;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("layers: no file in the source tree includes a header from a layer above it") {
  const std::vector<std::string> found = layer_violations(MESHPLAN_SOURCE_DIR, layer_rules());
  INFO(joined(found));
  CHECK(found.empty());
}

TEST_CASE("layers: an upward include is reported with file, line, header and rule") {
  const fs::path root =
      fs::temp_directory_path() / ("meshplan-layers-" + std::to_string(::getpid()));
  fs::remove_all(root);
  write(root / "core/units.h", "#pragma once\n");
  write(root / "simulator/engine.cc",
        "#include \"simulator/engine.h\"\n"
        "\n"
        "#include <vector>\n"
        "#include \"core/units.h\"\n"
        "  #  include \"planner/cost_model.h\"  // upward\n");
  write(root / "core/sub/spec.h", "#include \"reports/text_format.h\"\n");
  write(root / "planner/ok.cc", "#include \"simulator/engine.h\"\n#include \"yaml-cpp/yaml.h\"\n");
  write(root / "cli/main.cc", "#include \"reports/text_format.h\"\n");
  write(root / "core/notes.md", "#include \"cli/main.h\"\n");

  CHECK(layer_violations(root, layer_rules()) ==
        std::vector<std::string>{
            "core/sub/spec.h:1: includes \"reports/text_format.h\"; core may include nothing but "
            "itself",
            "simulator/engine.cc:5: includes \"planner/cost_model.h\"; simulator may include only "
            "core",
        });
  fs::remove_all(root);
}

TEST_CASE("layers: the rule is the documented order") {
  const std::vector<LayerRule>& rules = layer_rules();
  REQUIRE(rules.size() == 11);
  CHECK(rules[0].layer == "core");
  CHECK(rules[0].may_use.empty());
  CHECK(rules[3].layer == "planner");
  CHECK(rules[3].may_use == std::vector<std::string>{"core", "simulator"});
  CHECK(rules[4].layer == "launchers");
  CHECK(rules[4].may_use == std::vector<std::string>{"core", "simulator", "planner"});
  CHECK(rules[6].layer == "serving");
  CHECK(rules[6].may_use == std::vector<std::string>{"core", "simulator", "planner"});
  CHECK(rules[7].layer == "reports");
  CHECK(rules[7].may_use ==
        std::vector<std::string>{"core", "simulator", "planner", "launchers", "checks", "serving"});
}

TEST_CASE("layers: the simulator knows stages, operations and streams, never a Layout") {
  // Issue 10: it reads schedules through core/schedule.h and placements through
  // core/pipeline_placement.h; core/layout.h and its rules belong to the planner's side.
  std::vector<std::string> found;
  for (const fs::directory_entry& e :
       fs::directory_iterator(fs::path(MESHPLAN_SOURCE_DIR) / "simulator")) {
    std::ifstream in(e.path());
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (line.find("#include \"core/layout") != std::string::npos)
        found.push_back(e.path().filename().string() + ":" + std::to_string(line_number) + ": " +
                        line);
    }
  }
  INFO(joined(found));
  CHECK(found.empty());
}
