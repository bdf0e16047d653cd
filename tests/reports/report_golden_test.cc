// End to end: `meshplan report` for fixed scenarios, compared byte for byte with golden folders
// (tests/reports/golden/<name>/) and the kept-current examples (reports/examples/<name>/). Every
// SVG must be well-formed and render to a PNG of its declared size.
// MESHPLAN_UPDATE_GOLDEN=1 rewrites the expected files instead of comparing.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/reports/golden_folder.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using namespace meshplan::test;

namespace {

struct Scenario {
  const char* folder;  // relative to the source root
  const char* args;    // after `meshplan report`, before --out
};

// Small, fast scenarios (golden) and the shipped examples (reports/examples/README.md lists them).
const Scenario kGolden[] = {
    {"tests/reports/golden/llama3-8b-8xh100",
     "--model models/llama3-8b.yaml --cluster topologies/dgx-h100-1n.yaml --global-batch 64 --top "
     "3 --sample 50"},
    {"tests/reports/golden/mixtral-8x7b-32xh100",
     "--model models/mixtral-8x7b.yaml --cluster topologies/dgx-h100-64n.yaml --gpus 32 "
     "--global-batch 256 --top 3 --sample 50"},
};
const Scenario kExamples[] = {
    {"reports/examples/llama3-70b-512xh100",
     "--model models/llama3-70b.yaml --cluster topologies/dgx-h100-64n.yaml --top 5"},
    {"reports/examples/llama3-405b-16384xh100",
     "--model models/llama3-405b.yaml --cluster topologies/dgx-h100-2048n.yaml --top 5"},
    {"reports/examples/mixtral-8x7b-64xh100",
     "--model models/mixtral-8x7b.yaml --cluster topologies/dgx-h100-64n.yaml --gpus 64 --top 5"},
    {"reports/examples/gpt3-175b-1024xa100",
     "--model models/gpt3-175b.yaml --cluster topologies/selene-a100.yaml --gpus 1024 --top 5"},
};

void check_scenario(const Scenario& s) {
  CAPTURE(s.folder);
  const fs::path out = fresh_dir(fs::path(s.folder).filename().string());
  const fs::path log = fresh_dir(fs::path(s.folder).filename().string() + "-log");
  REQUIRE(run_meshplan(
              std::string("report ") + s.args + " --threads 2 --out '" + out.string() + "'", log) ==
          0);
  const fs::path expected = fs::path(MESHPLAN_SOURCE_DIR) / s.folder;
  check_against_golden(out, expected);
  check_svgs(out);
  fs::remove_all(out);
  fs::remove_all(log);
}

}  // namespace

TEST_CASE("report: golden scenarios byte for byte, SVGs render") {
  for (const Scenario& s : kGolden) check_scenario(s);
}

TEST_CASE("report: reports/examples are what the code generates") {
  for (const Scenario& s : kExamples) check_scenario(s);
}

TEST_CASE("report: the same inputs give the same bytes for any thread count") {
  const fs::path a = fresh_dir("det-a"), b = fresh_dir("det-b"), log = fresh_dir("det-log");
  const std::string args = std::string("report ") + kGolden[0].args;
  REQUIRE(run_meshplan(args + " --threads 1 --out '" + a.string() + "'", log) == 0);
  REQUIRE(run_meshplan(args + " --threads 2 --out '" + b.string() + "'", log) == 0);
  for (const std::string& name : file_names(a)) CHECK(read_file(a / name) == read_file(b / name));
  const std::string md = read_file(a / "report.md");
  CHECK(md.find("/tmp") == std::string::npos);
  CHECK(md.find(MESHPLAN_SOURCE_DIR) == std::string::npos);
  fs::remove_all(a), fs::remove_all(b), fs::remove_all(log);
}

TEST_CASE("report: bad input exits 2 with a message") {
  const fs::path log = fresh_dir("bad-log");
  CHECK(
      run_meshplan("report --model models/nope.yaml --cluster topologies/dgx-h100-1n.yaml --out '" +
                       log.string() + "/r'",
                   log) == 2);
  CHECK(read_file(log / "stderr.txt").find("nope.yaml") != std::string::npos);
  fs::remove_all(log);
}
