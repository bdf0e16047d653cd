#include "tests/layers/layer_rule.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

namespace meshplan::test {
namespace {

namespace fs = std::filesystem;

bool is_source(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cc" || ext == ".h" || ext == ".cu";
}

std::string allowed_text(const LayerRule& rule) {
  if (rule.may_use.empty()) return "may include nothing but itself";
  std::string out = "may include only ";
  for (size_t i = 0; i < rule.may_use.size(); ++i) {
    if (i > 0) out += ", ";
    out += rule.may_use[i];
  }
  return out;
}

// The violations in one file; `relative` is its path from the root, with '/' separators.
void check_file(const fs::path& file, const std::string& relative, const LayerRule& rule,
                const std::set<std::string>& layers, std::vector<std::string>& out) {
  static const std::regex include(R"(^\s*#\s*include\s*"([^"/]+)/[^"]*")");
  std::ifstream in(file);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::smatch m;
    if (!std::regex_search(line, m, include)) continue;
    const std::string target = m[1];
    if (target == rule.layer || !layers.count(target)) continue;
    if (std::find(rule.may_use.begin(), rule.may_use.end(), target) != rule.may_use.end()) continue;
    const std::string header = m[0].str().substr(m[0].str().find('"'));
    out.push_back(relative + ":" + std::to_string(number) + ": includes " + header + "; " +
                  rule.layer + " " + allowed_text(rule));
  }
}

}  // namespace

const std::vector<LayerRule>& layer_rules() {
  static const std::vector<LayerRule> rules = {
      {"core", {}},
      {"simulator", {"core"}},
      {"calibrate", {"core"}},
      {"planner", {"core", "simulator"}},
      {"launchers", {"core", "simulator", "planner"}},
      {"checks", {"core", "simulator", "planner"}},
      {"serving", {"core", "simulator", "planner"}},
      {"reports", {"core", "simulator", "planner", "launchers", "checks", "serving"}},
      {"cli",
       {"core", "simulator", "calibrate", "planner", "launchers", "checks", "reports", "serving"}},
      {"tests",
       {"core", "simulator", "calibrate", "planner", "launchers", "checks", "reports", "serving",
        "cli"}},
      {"fuzz", {"core", "calibrate", "checks", "serving"}},
  };
  return rules;
}

std::vector<std::string> layer_violations(const fs::path& root,
                                          const std::vector<LayerRule>& rules) {
  std::set<std::string> layers;
  for (const LayerRule& r : rules) layers.insert(r.layer);
  std::vector<std::string> out;
  for (const LayerRule& rule : rules) {
    const fs::path dir = root / rule.layer;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && is_source(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files)
      check_file(f, f.lexically_relative(root).generic_string(), rule, layers, out);
  }
  return out;
}

}  // namespace meshplan::test
