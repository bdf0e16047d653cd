// The layer rule (README.md "Architecture", DESIGN.md §1): each top-level folder is a layer and
// a file may include headers only from its own layer and the layers below it. This checker
// reads `#include "folder/..."` lines as text; it does not compile or preprocess anything.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace meshplan::test {

struct LayerRule {
  std::string layer;                 // a top-level folder, e.g. "planner"
  std::vector<std::string> may_use;  // the other layers its files may include
};

// The project's rule, lowest layer first.
const std::vector<LayerRule>& layer_rules();

// One line per `#include "<layer>/..."` in a *.cc, *.h or *.cu file under `root`/<layer>/ that
// names a layer its own layer may not include, in path order then line order:
//   "simulator/bad.cc:3: includes \"planner/cost_model.h\"; simulator may include only core"
// (a layer that may include nothing says "may include nothing but itself"). Includes of
// folders that are not layers (system and third-party headers) are not checked.
// REQUIRES: every layer named in `rules` is unique; `root` exists.
std::vector<std::string> layer_violations(const std::filesystem::path& root,
                                          const std::vector<LayerRule>& rules);

}  // namespace meshplan::test
