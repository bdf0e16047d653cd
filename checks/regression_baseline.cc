#include "checks/regression_baseline.h"

#include <fmt/format.h>

#include <set>

#include "core/yaml_node.h"

namespace meshplan {
namespace {

constexpr const char* kHeader =
    "# meshplan regress baseline: the predicted layout, step time, MFU and peak memory per GPU\n"
    "# of every scenario. Written by `meshplan regress --update`; commit it in the change that\n"
    "# moved the predictions, with the reason in the commit message.\n";

RegressionRecord read_entry(const YamlNode& e) {
  e.expect_only_keys({"layout", "fits", "step_time_s", "mfu_percent", "peak_gib"});
  RegressionRecord r;
  r.layout = e.child("layout").as_string();
  if (r.layout.empty()) e.child("layout").fail("must be a layout (tp=...,pp=...) or none");
  r.fits = e.child("fits").as_bool();
  r.step_time_s = e.child("step_time_s").as_double(0, 1e12);
  r.mfu_percent = e.child("mfu_percent").as_double(0, 100);
  r.peak_gib = e.child("peak_gib").as_double(0, 1e12);
  return quantize(r);
}

RegressionRecords read_baseline(const YamlNode& doc) {
  doc.expect_only_keys({"version", "scenarios"});
  YamlNode version = doc.child("version");
  if (version.as_int(0, 1 << 30) != kBaselineVersion) {
    version.fail(
        fmt::format("must be {} (the baseline format this meshplan writes)", kBaselineVersion));
  }
  YamlNode scenarios = doc.child("scenarios");
  if (!scenarios.is_map() && !(scenarios.is_sequence() && scenarios.size() == 0)) {
    scenarios.fail("must be a mapping from scenario name to its predictions");
  }
  RegressionRecords out;
  if (!scenarios.is_map()) return out;
  std::vector<Diagnostic> errors;
  std::set<std::string> seen;
  for (const std::string& name : scenarios.keys()) {
    if (!seen.insert(name).second) {
      errors.push_back(scenarios.diagnostic(fmt::format("repeats scenario '{}'", name)));
      continue;
    }
    Result<RegressionRecord> r =
        capture_input_errors([&] { return read_entry(scenarios.child(name)); });
    if (!r) {
      errors.insert(errors.end(), r.errors().begin(), r.errors().end());
      continue;
    }
    out.push_back({name, r.value()});
  }
  if (!errors.empty()) throw InputError{errors};
  return out;
}

}  // namespace

Result<RegressionRecords> parse_baseline(const std::string& text, const std::string& file) {
  return capture_input_errors([&] { return read_baseline(YamlNode::parse(text, file)); });
}

Result<RegressionRecords> load_baseline(const std::string& path) {
  return capture_input_errors([&] { return read_baseline(YamlNode::load_file(path)); });
}

std::string baseline_yaml(const RegressionRecords& records) {
  std::string out = kHeader;
  out += fmt::format("version: {}\n", kBaselineVersion);
  if (records.empty()) return out + "scenarios: {}\n";
  out += "scenarios:\n";
  for (const NamedRecord& n : records) {
    RegressionRecord r = quantize(n.record);
    out += fmt::format("  {}:\n", n.name);
    out += fmt::format("    layout: \"{}\"\n", r.layout);
    out += fmt::format("    fits: {}\n", r.fits ? "true" : "false");
    out += fmt::format("    step_time_s: {}\n", step_time_text(r.step_time_s));
    out += fmt::format("    mfu_percent: {}\n", percent_text(r.mfu_percent));
    out += fmt::format("    peak_gib: {}\n", gib_text(r.peak_gib));
  }
  return out;
}

}  // namespace meshplan
