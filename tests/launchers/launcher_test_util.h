// Shared helpers of the launcher tests: shipped models, checked layouts, exports and refusals.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>

#include "core/diagnostic.h"
#include "launchers/launcher_export.h"

namespace meshplan::launcher_test {

// models/<name>.yaml. REQUIRES: it loads.
inline ModelSpec model(const std::string& name) {
  Result<ModelSpec> m = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/models/" + name + ".yaml");
  REQUIRE(m.ok());
  return m.value();
}

// `text` parsed and checked for `gpus` GPUs (dp resolved). REQUIRES: it passes check_layout.
inline Layout layout(const std::string& text, const ModelSpec& m, int64_t gpus) {
  Result<Layout> l = parse_layout(text);
  REQUIRE(l.ok());
  Layout out = l.value();
  REQUIRE(check_layout(out, m, gpus, m.training).empty());
  return out;
}

// The export's text; fails the test with the refusal if it is refused.
inline std::string exported(Launcher launcher, const ModelSpec& m, const Layout& l) {
  Result<std::string> r = export_launcher(launcher, m, m.training, l);
  if (!r) FAIL(format_diagnostics(r.errors()));
  return r.value();
}

// The refusal's formatted diagnostics. REQUIRES: the export is refused.
inline std::string refusal(Launcher launcher, const ModelSpec& m, const Layout& l) {
  Result<std::string> r = export_launcher(launcher, m, m.training, l);
  REQUIRE(!r.ok());
  return format_diagnostics(r.errors());
}

// "--flag value" lines of a command-line export, as flag -> value ("" for a flag alone; the
// trailing line continuation "\\" is not a value).
inline std::map<std::string, std::string> flag_args(const std::string& text) {
  std::map<std::string, std::string> args;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("--", 0) != 0) continue;
    std::istringstream words(line);
    std::string flag, value;
    words >> flag >> value;
    args[flag] = value == "\\" ? "" : value;
  }
  return args;
}

}  // namespace meshplan::launcher_test
