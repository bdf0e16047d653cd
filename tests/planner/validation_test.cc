#include "planner/validation.h"

#include <doctest/doctest.h>

using namespace meshplan;

namespace {

ValidationReport report() {
  Result<std::vector<PublishedRun>> runs =
      load_published_runs(std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml");
  REQUIRE_MESSAGE(runs.ok(), (runs.ok() ? "" : format_diagnostics(runs.errors())));
  CHECK(runs->size() == 23);
  Result<ValidationReport> r = validate_runs(runs.value(), MESHPLAN_SOURCE_DIR, 2);
  REQUIRE(r.ok());
  return r.value();
}

const ErrorSummary& summary(const ValidationReport& r, const std::string& name) {
  for (const ErrorSummary& s : r.summaries)
    if (s.name == name) return s;
  FAIL("no summary named " << name);
  return r.summaries.front();
}

}  // namespace

TEST_CASE("validation: mean absolute error over every published run stays within 15%") {
  ValidationReport r = report();
  CHECK(summary(r, "all").runs == 23);
  CHECK(summary(r, "all").mean_abs <= 0.15);
}

TEST_CASE("validation: Megatron-LM Table 1 mean absolute error stays within 8%") {
  // The model reaches 7.6%: unpipelined rows within ±2.5%, pipelined rows predicted 9-13% fast.
  ValidationReport r = report();
  CHECK(summary(r, "narayanan2021 Table 1").runs == 10);
  CHECK(summary(r, "narayanan2021 Table 1").mean_abs <= 0.08);
}

TEST_CASE("error statistics: mean, median and max of absolute relative errors") {
  ErrorSummary s = summarize_errors("x", {0.1, -0.3, 0.2, -0.05});
  CHECK(s.runs == 4);
  CHECK(s.mean_abs == doctest::Approx(0.1625));
  CHECK(s.median_abs == doctest::Approx(0.15));
  CHECK(s.max_abs == doctest::Approx(0.3));
}
