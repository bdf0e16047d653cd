// libFuzzer target: core/yaml_blocks.h's lifted blocks against yaml-cpp itself. Wherever
// YamlNode::parse would keep a lifting (the lifted text reads without error and a scalar stands
// at every block's `|`), yaml-cpp must read the text as written too, to the same tree, each
// lifted block's scalar holding exactly the block's text: else a reader would see other values
// than the file holds. Blocks of one line on are lifted here (YamlNode lifts 16 on), so that
// short mutated inputs reach the check. Seeds: the published profiles (their attention tables)
// and fuzz/corpus/yaml_blocks.
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <map>
#include <utility>

#include "core/yaml_blocks.h"
#include "fuzz/fuzz_input.h"

namespace {

using Marks = std::map<std::pair<int, int>, const std::string*>;

// Whether `written` (the text as written) and `lifted` (the lifted text) are the same tree, the
// lifted blocks' scalars read through `blocks`; `budget` bounds the nodes visited (aliases).
bool same_tree(const YAML::Node& written, const YAML::Node& lifted, const Marks& blocks,
               int& budget) {
  if (--budget < 0) return true;  // too large to compare: no verdict
  if (written.Type() != lifted.Type()) return false;
  if (lifted.IsScalar()) {
    const YAML::Mark m = lifted.Mark();
    const auto it = blocks.find({m.line, m.column});
    const std::string& text =
        it != blocks.end() && lifted.Scalar().empty() ? *it->second : lifted.Scalar();
    return written.Scalar() == text && written.Mark().line == m.line;
  }
  if (written.size() != lifted.size()) return false;
  auto w = written.begin();
  for (auto l = lifted.begin(); l != lifted.end(); ++l, ++w) {
    if (lifted.IsMap()) {
      if (!same_tree(w->first, l->first, blocks, budget) ||
          !same_tree(w->second, l->second, blocks, budget))
        return false;
    } else if (!same_tree(*w, *l, blocks, budget)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = meshplan::fuzz::as_text(data, size);
  const meshplan::LiftedText lifted = meshplan::lift_literal_blocks(text, 1);
  if (lifted.blocks.empty()) return 0;
  YAML::Node lifted_root;
  try {
    lifted_root = YAML::Load(lifted.yaml);
  } catch (const YAML::Exception&) {
    return 0;  // YamlNode::parse reads the text as written
  }
  if (!meshplan::lifted_blocks_found(lifted_root, lifted.blocks)) return 0;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    std::abort();  // the lifting accepted a text yaml-cpp refuses
  }
  Marks blocks;
  for (const meshplan::LiftedBlock& b : lifted.blocks) blocks[{b.line, b.column}] = &b.text;
  int budget = 100'000;
  if (!same_tree(root, lifted_root, blocks, budget)) std::abort();
  return 0;
}
