// Prediction regression: quantization, the tolerance rule, the baseline file's round trip and
// errors, the scenario file's errors, and thread-count independence of the evaluation.
#include "checks/regression.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "checks/regression_baseline.h"
#include "checks/regression_scenario.h"

using namespace meshplan;
namespace fs = std::filesystem;

namespace {

RegressionRecord record(double mfu, const std::string& layout = "tp=8", bool fits = true) {
  return RegressionRecord{layout, fits, 2.5, mfu, 60.0};
}

RegressionReport compare(const RegressionRecord& now, const RegressionRecord& base,
                         double tolerance = 0.5) {
  return compare_to_baseline({{"s", now}}, {{"s", base}}, tolerance);
}

std::string baseline_errors(const std::string& text) {
  Result<RegressionRecords> r = parse_baseline(text, "b.yaml");
  return r.ok() ? "ok" : format_diagnostics(r.errors());
}

// A scenario file under a fresh temporary directory whose root is the repository.
std::string write_scenarios(const std::string& body) {
  static int counter = 0;
  fs::path dir =
      fs::temp_directory_path() /
      ("meshplan-regression-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  fs::path file = dir / "scenarios.yaml";
  std::ofstream(file) << "root: " << MESHPLAN_SOURCE_DIR << "\nscenarios:\n" << body;
  return file.string();
}

std::string scenario_errors(const std::string& body) {
  Result<std::vector<RegressionScenario>> r = load_scenarios(write_scenarios(body));
  return r.ok() ? "ok" : format_diagnostics(r.errors());
}

const std::string kEntry =
    "  - name: a\n"
    "    model: models/llama3-8b.yaml\n"
    "    cluster: topologies/dgx-h100-1n.yaml\n";

const std::string kBaselineEntry =
    "version: 1\nscenarios:\n  a:\n    layout: \"tp=8\"\n    fits: true\n"
    "    step_time_s: 1.5\n    mfu_percent: 40.25\n    peak_gib: 70\n";

}  // namespace

TEST_CASE("quantize rounds to the precision the baseline holds") {
  RegressionRecord r = quantize({"x", true, 1.234567891, 45.12349, 67.8916});
  CHECK(r.step_time_s == 1.23457);
  CHECK(r.mfu_percent == 45.123);
  CHECK(r.peak_gib == doctest::Approx(67.892).epsilon(1e-12));
  CHECK(step_time_text(0.000123456789) == "0.000123457");
  CHECK(percent_text(0) == "0.000");
}

TEST_CASE("an MFU change within the tolerance passes, beyond it fails") {
  CHECK(compare(record(40.4), record(40.0)).passed());
  CHECK(compare(record(40.5), record(40.0)).passed());  // exactly the tolerance
  RegressionReport up = compare(record(40.501), record(40.0));
  CHECK_FALSE(up.passed());
  CHECK(up.rows[0].mfu_moved);
  CHECK(up.rows[0].mfu_change_pp == doctest::Approx(0.501));
  CHECK_FALSE(compare(record(39.3), record(40.0)).passed());
  CHECK(compare(record(39.3), record(40.0), 1.0).passed());
}

TEST_CASE("a changed layout or a scenario that no longer fits fails") {
  RegressionReport layout = compare(record(40, "tp=4"), record(40, "tp=8"));
  CHECK(layout.rows[0].layout_changed);
  CHECK(layout.failures() == 1);
  RegressionReport oom = compare(record(40, "tp=8", false), record(40, "tp=8", true));
  CHECK(oom.rows[0].no_longer_fits);
  CHECK_FALSE(oom.passed());
  // Not fitting before and after is no news.
  CHECK(compare(record(40, "tp=8", false), record(40, "tp=8", false)).passed());
}

TEST_CASE("scenarios on one side only fail, in scenario order then baseline order") {
  RegressionReport r = compare_to_baseline({{"new", record(40)}, {"kept", record(40)}},
                                           {{"kept", record(40)}, {"gone", record(40)}}, 0.5);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].name == "new");
  CHECK_FALSE(r.rows[0].baseline.has_value());
  CHECK(r.rows[1].name == "kept");
  CHECK_FALSE(r.rows[1].failed());
  CHECK(r.rows[2].name == "gone");
  CHECK_FALSE(r.rows[2].now.has_value());
  CHECK(r.failures() == 2);
  CHECK(r.changes() == 2);
}

TEST_CASE("the baseline file round-trips exactly") {
  RegressionRecords records = {
      {"a.b-c_1", quantize({"tp=2,pp=4", true, 12.3456789, 51.23456, 70.1})},
      {"z", quantize({"none", false, 0, 0, 90.5})}};
  std::string text = baseline_yaml(records);
  Result<RegressionRecords> back = parse_baseline(text, "b.yaml");
  REQUIRE(back.ok());
  CHECK(baseline_yaml(back.value()) == text);
  CHECK(compare_to_baseline(records, back.value(), 0).changes() == 0);
  CHECK(baseline_yaml({}) == baseline_yaml({}));
  CHECK(parse_baseline(baseline_yaml({}), "b.yaml").ok());
}

TEST_CASE("a malformed baseline is an error with its position, never an empty baseline") {
  CHECK(baseline_errors(kBaselineEntry) == "ok");
  CHECK(baseline_errors("").find("b.yaml:") == 0);
  CHECK(baseline_errors("version: 1\nscenarios: [\n").find("b.yaml:") == 0);
  std::string version = baseline_errors("version: 2\nscenarios: {}\n");
  CHECK(version.find("b.yaml:1:10:") == 0);
  CHECK(version.find("must be 1") != std::string::npos);
  std::string unknown = baseline_errors(kBaselineEntry + "    mfu: 3\n");
  CHECK(unknown.find("b.yaml:9:5:") == 0);
  CHECK(unknown.find("unknown field") != std::string::npos);
  std::string missing = baseline_errors("version: 1\nscenarios:\n  a:\n    layout: \"tp=8\"\n");
  CHECK(missing.find("is required but missing") != std::string::npos);
  CHECK(baseline_errors("version: 1\nscenarios:\n  a:\n    layout: x\n    fits: true\n"
                        "    step_time_s: 1\n    mfu_percent: 140\n    peak_gib: 1\n")
            .find("b.yaml:7:18:") == 0);
  Result<RegressionRecords> absent = load_baseline("/nonexistent/baseline.yaml");
  REQUIRE_FALSE(absent.ok());
  CHECK(format_diagnostics(absent.errors()).find("cannot open") != std::string::npos);
}

TEST_CASE("a baseline with a list as a scenario name is an error at its position") {
  CHECK(baseline_errors("version: 1\nscenarios:\n  [a]: {}\n") ==
        "b.yaml:3:3: error: field 'scenarios': keys must be plain names, not lists or mappings\n"
        "    [a]: {}\n"
        "    ^\n");
}

TEST_CASE("scenario files: paths resolve against root, errors carry file:line:col") {
  Result<std::vector<RegressionScenario>> ok =
      load_scenarios(write_scenarios(kEntry + "    layout: best\n    fix: \"tp=1\"\n"));
  REQUIRE(ok.ok());
  CHECK(fs::path(ok->at(0).model_path) ==
        (fs::path(MESHPLAN_SOURCE_DIR) / "models/llama3-8b.yaml").lexically_normal());
  CHECK_FALSE(ok->at(0).layout.has_value());
  CHECK(ok->at(0).fix == "tp=1");

  CHECK(scenario_errors(kEntry).find(":3:5: error: field 'scenarios[0].layout'") !=
        std::string::npos);
  CHECK(scenario_errors(kEntry + "    layout: best\n    gpu: 8\n").find("did you mean") !=
        std::string::npos);
  // The column of a layout error points into the quoted string: `tp=x` starts at column 14.
  CHECK(scenario_errors(kEntry + "    layout: \"tp=x\"\n").find(":6:14:") != std::string::npos);
  CHECK(scenario_errors(kEntry + "    layout: \"tp=8\"\n    fix: \"tp=8\"\n")
            .find("applies only to `layout: best`") != std::string::npos);
  CHECK(scenario_errors(kEntry + "    layout: best\n" + kEntry + "    layout: best\n")
            .find("repeats an earlier scenario's name") != std::string::npos);
  CHECK(scenario_errors("  - name: b\n    model: models/nope.yaml\n"
                        "    cluster: topologies/dgx-h100-1n.yaml\n    layout: best\n")
            .find(":4:12:") != std::string::npos);
  CHECK(scenario_errors("  - name: \"a b\"\n").find("must be letters") != std::string::npos);
}

TEST_CASE("a layout that does not divide the cluster is reported at the scenario's layout") {
  Result<std::vector<RegressionScenario>> s =
      load_scenarios(write_scenarios(kEntry + "    layout: \"tp=3\"\n"));
  REQUIRE(s.ok());
  Result<RegressionRecords> r = evaluate_scenarios(s.value(), 1);
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()).find("scenarios.yaml:6:13:") != std::string::npos);
}

TEST_CASE("evaluation is the same for any thread count") {
  Result<std::vector<RegressionScenario>> s = load_scenarios(write_scenarios(
      kEntry + "    global_batch: 64\n    layout: best\n" +
      "  - name: fixed\n    model: models/llama3-8b.yaml\n"
      "    cluster: topologies/dgx-h100-1n.yaml\n    layout: \"tp=2,recompute=selective\"\n"));
  REQUIRE(s.ok());
  Result<RegressionRecords> one = evaluate_scenarios(s.value(), 1);
  Result<RegressionRecords> two = evaluate_scenarios(s.value(), 2);
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  CHECK(baseline_yaml(one.value()) == baseline_yaml(two.value()));
  CHECK(one->at(0).record.fits);
  CHECK(one->at(1).record.layout.rfind("tp=2,pp=1,dp=4,", 0) == 0);
  CHECK(one->at(1).record.mfu_percent > 0);
}

TEST_CASE("a scenario may name a framework preset, an unknown one is an error at its place") {
  Result<std::vector<RegressionScenario>> s =
      load_scenarios(write_scenarios(kEntry + "    layout: \"tp=8\"\n    framework: deepspeed\n"));
  REQUIRE(s.ok());
  CHECK(s->front().framework == "deepspeed");
  Result<std::vector<RegressionScenario>> d =
      load_scenarios(write_scenarios(kEntry + "    layout: \"tp=8\"\n"));
  REQUIRE(d.ok());
  CHECK(d->front().framework == "megatron-core");
  const std::string err = scenario_errors(kEntry + "    layout: \"tp=8\"\n    framework: fsdp\n");
  CHECK(
      err.find(
          ":7:16: error: field 'scenarios[0].framework' = 'fsdp': must be one of megatron-core|") !=
      std::string::npos);
  CHECK(err.find("(did you mean 'fsdp2'?)") != std::string::npos);
}
