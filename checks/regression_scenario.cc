#include "checks/regression_scenario.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "core/layout.h"
#include "core/yaml_node.h"
#include "planner/framework_preset.h"
#include "planner/layout_search.h"

namespace meshplan {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxCount = int64_t{1} << 40;

void append(std::vector<Diagnostic>& to, const std::vector<Diagnostic>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

// `key`'s value joined to `root`; the file must exist.
std::string input_path(const YamlNode& entry, const std::string& key, const fs::path& root) {
  YamlNode node = entry.child(key);
  std::string written = node.as_string();
  fs::path resolved = (root / written).lexically_normal();
  std::error_code ec;
  if (written.empty() || !fs::is_regular_file(resolved, ec)) {
    node.fail(fmt::format("names no readable file (resolved to '{}')", resolved.string()));
  }
  return resolved.string();
}

// The layout (fixed or "best") and the search's pinned fields, syntax-checked.
void read_layout(const YamlNode& entry, RegressionScenario& s) {
  YamlNode layout = entry.child("layout");
  s.layout_where = layout.location();
  std::string text = layout.as_string();
  if (text != "best") {
    Result<Layout> parsed = parse_layout(text, entry.file());
    if (!parsed)
      throw InputError{relocate_layout_errors(parsed.errors(), s.layout_where, layout.path())};
    s.layout = text;
  }
  std::optional<YamlNode> fix = entry.optional_child("fix");
  if (!fix) return;
  s.fix_where = fix->location();
  if (s.layout) fix->fail("applies only to `layout: best` (a fixed layout pins every field)");
  s.fix = fix->as_string();
  Result<LayoutFix> parsed = parse_layout_fix(s.fix);
  if (!parsed) throw InputError{relocate_layout_errors(parsed.errors(), s.fix_where, fix->path())};
}

RegressionScenario read_scenario(const YamlNode& entry, const fs::path& root) {
  entry.expect_only_keys({"name", "model", "cluster", "profile", "seq_len", "global_batch", "gpus",
                          "layout", "fix", "framework"});
  RegressionScenario s;
  s.where = entry.location();
  s.path = entry.path();
  YamlNode name = entry.child("name");
  s.name = name.as_string();
  if (!valid_name(s.name)) name.fail("must be letters, digits, '.', '_' or '-' (a YAML key)");
  s.model_path = input_path(entry, "model", root);
  s.cluster_path = input_path(entry, "cluster", root);
  if (entry.has("profile")) s.profile_path = input_path(entry, "profile", root);
  s.seq_len = entry.get_int("seq_len", 0, 1, kMaxCount);
  s.global_batch = entry.get_int("global_batch", 0, 1, kMaxCount);
  s.gpus = entry.get_int("gpus", 0, 1, kMaxCount);
  read_layout(entry, s);
  if (auto f = entry.optional_child("framework")) {
    Result<FrameworkPreset> preset = find_framework(f->as_string(), f->location(), f->path());
    if (!preset) throw InputError{preset.errors()};
    s.framework = preset->name;
  }
  return s;
}

std::vector<RegressionScenario> read_file(const std::string& path) {
  YamlNode doc = YamlNode::load_file(path);
  doc.expect_only_keys({"root", "scenarios"});
  fs::path root = fs::path(path).parent_path();
  if (auto r = doc.optional_child("root")) root /= r->as_string();
  YamlNode list = doc.child("scenarios");
  if (!list.is_sequence() || list.size() == 0) list.fail("must be a non-empty list of scenarios");
  std::vector<RegressionScenario> out;
  std::vector<Diagnostic> errors;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    YamlNode entry = list.element(i);
    Result<RegressionScenario> s = capture_input_errors([&] { return read_scenario(entry, root); });
    if (!s) {
      append(errors, s.errors());
      continue;
    }
    if (!names.insert(s->name).second) {
      errors.push_back(entry.child("name").diagnostic("repeats an earlier scenario's name"));
    }
    out.push_back(s.value());
  }
  if (!errors.empty()) throw InputError{errors};
  return out;
}

}  // namespace

Result<std::vector<RegressionScenario>> load_scenarios(const std::string& path) {
  return capture_input_errors([&] { return read_file(path); });
}

std::vector<Diagnostic> relocate_layout_errors(std::vector<Diagnostic> errors,
                                               const SourceLocation& where,
                                               const std::string& field) {
  // A quoted scalar's mark is its opening quote; the text starts one column later.
  int quote = 0;
  if (where.column >= 1 && static_cast<size_t>(where.column) <= where.source_line.size()) {
    char first = where.source_line[static_cast<size_t>(where.column - 1)];
    quote = first == '"' || first == '\'' ? 1 : 0;
  }
  for (Diagnostic& d : errors) {
    int column = d.where.line == 0 ? where.column : where.column + quote + d.where.column - 1;
    d.where = where;
    d.where.column = column;
    d.field = d.field.empty() ? field : field + "." + d.field;
  }
  return errors;
}

}  // namespace meshplan
