#include "reports/regression_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace meshplan {
namespace {

// What can be wrong with a scenario: its name in JSON "reasons" and in the Markdown status cell,
// in the order both list them.
struct Reason {
  bool (*applies)(const ScenarioComparison& c);
  const char* key;
  const char* words;
};
const Reason kReasons[] = {
    {[](const ScenarioComparison& c) { return !c.baseline; }, "not_in_baseline", "not in baseline"},
    {[](const ScenarioComparison& c) { return !c.now; }, "not_in_scenarios", "not in scenarios"},
    {[](const ScenarioComparison& c) { return c.mfu_moved; }, "mfu_moved", "MFU moved"},
    {[](const ScenarioComparison& c) { return c.layout_changed; }, "layout_changed",
     "layout changed"},
    {[](const ScenarioComparison& c) { return c.no_longer_fits; }, "no_longer_fits",
     "no longer fits"},
};

// The reasons that apply to `c`, each as `Reason::*name`.
std::vector<std::string> reasons(const ScenarioComparison& c, const char* Reason::*name) {
  std::vector<std::string> out;
  for (const Reason& r : kReasons)
    if (r.applies(c)) out.push_back(r.*name);
  return out;
}

std::string status_word(const ScenarioComparison& c, RegressMode mode) {
  if (mode == RegressMode::check) return c.failed() ? "fail" : "ok";
  if (!c.baseline) return "added";
  if (!c.now) return "removed";
  return c.changed() ? "changed" : "unchanged";
}

std::string status_cell(const ScenarioComparison& c, RegressMode mode) {
  if (mode == RegressMode::update) return status_word(c, mode);
  if (!c.failed()) return "ok";
  return fmt::format("**FAIL**: {}", fmt::join(reasons(c, &Reason::words), ", "));
}

std::string mfu_cell(const std::optional<RegressionRecord>& r) {
  if (!r) return "-";
  return percent_text(r->mfu_percent) + "%";
}

std::string change_cell(const ScenarioComparison& c) {
  if (!c.baseline || !c.now) return "-";
  return fmt::format("{}{} pp", c.mfu_change_pp >= 0 ? "+" : "", percent_text(c.mfu_change_pp));
}

std::string step_cell(const ScenarioComparison& c) {
  if (!c.baseline) return step_time_text(c.now->step_time_s);
  if (!c.now) return step_time_text(c.baseline->step_time_s);
  double b = c.baseline->step_time_s, n = c.now->step_time_s;
  if (b == n) return step_time_text(n);
  std::string pct = b > 0 ? fmt::format(" ({:+.1f}%)", 100.0 * (n - b) / b) : "";
  return fmt::format("{} → {}{}", step_time_text(b), step_time_text(n), pct);
}

std::string peak_cell(const ScenarioComparison& c) {
  auto one = [](const RegressionRecord& r) {
    return gib_text(r.peak_gib) + (r.fits ? "" : " (does not fit)");
  };
  if (!c.baseline) return one(*c.now);
  if (!c.now) return one(*c.baseline);
  std::string b = one(*c.baseline), n = one(*c.now);
  return b == n ? n : fmt::format("{} → {}", b, n);
}

std::string layout_changes(const RegressionReport& r) {
  std::string out;
  for (const auto& c : r.rows) {
    if (!c.baseline || !c.now || c.baseline->layout == c.now->layout) continue;
    out += fmt::format("- `{}`: `{}` → `{}`\n", c.name, c.baseline->layout, c.now->layout);
  }
  return out.empty() ? out : "Layout changes:\n\n" + out + "\n";
}

std::string summary_line(const RegressionReport& r, RegressMode mode) {
  int64_t rows = static_cast<int64_t>(r.rows.size());
  if (mode == RegressMode::update) {
    return fmt::format("Baseline updated: {} scenarios, {} changed.\n", rows, r.changes());
  }
  return fmt::format(
      "{}: {} scenarios, {} failed (tolerance {} pp of MFU; a changed layout, a scenario that "
      "no longer fits, or one missing from either file also fails).\n",
      r.passed() ? "PASS" : "FAIL", rows, r.failures(), percent_text(r.tolerance_pp));
}

nlohmann::ordered_json record_json(const std::optional<RegressionRecord>& r) {
  if (!r) return nullptr;
  nlohmann::ordered_json j;
  j["layout"] = r->layout;
  j["fits"] = r->fits;
  j["step_time_s"] = r->step_time_s;
  j["mfu_percent"] = r->mfu_percent;
  j["peak_gib"] = r->peak_gib;
  return j;
}

}  // namespace

std::string regress_markdown(const RegressionReport& r, RegressMode mode) {
  std::string out =
      mode == RegressMode::check ? "## meshplan regress\n\n" : "## meshplan regress --update\n\n";
  out +=
      "| scenario | baseline MFU | now MFU | change | step time (s) | peak memory (GiB) "
      "| status |\n";
  out += "|---|--:|--:|--:|--:|--:|---|\n";
  for (const auto& c : r.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", c.name, mfu_cell(c.baseline),
                       mfu_cell(c.now), change_cell(c), step_cell(c), peak_cell(c),
                       status_cell(c, mode));
  }
  out += '\n';
  out += layout_changes(r);
  out += summary_line(r, mode);
  return out;
}

nlohmann::ordered_json regress_json(const RegressionReport& r, RegressMode mode) {
  nlohmann::ordered_json j;
  j["mode"] = mode == RegressMode::check ? "check" : "update";
  j["tolerance_pp"] = r.tolerance_pp;
  j["passed"] = r.passed();
  j["failures"] = r.failures();
  j["changes"] = r.changes();
  j["scenarios"] = nlohmann::ordered_json::array();
  for (const auto& c : r.rows) {
    nlohmann::ordered_json s;
    s["name"] = c.name;
    s["status"] = status_word(c, mode);
    s["reasons"] = reasons(c, &Reason::key);
    s["mfu_change_pp"] = c.mfu_change_pp;
    s["baseline"] = record_json(c.baseline);
    s["now"] = record_json(c.now);
    j["scenarios"].push_back(s);
  }
  return j;
}

}  // namespace meshplan
