// Long literal blocks lifted out of a YAML text before yaml-cpp reads it.
//
// yaml-cpp scans every character of a block scalar through its regular expressions, some 400
// instructions a byte: a calibration profile's tables (`samples_table: |`, `attention_table: |`,
// thousands of lines) were most of the time any command took to start. A block of the plainest
// form, `<indent><key>: |` alone on its line, followed by at least `min_lines` content lines, is
// cut out here: its content lines become empty lines (so every line keeps its number), yaml-cpp
// reads an empty scalar there, and YamlNode answers that scalar's text from the block kept
// (SourceText::lifted_text). The text is YAML's for that block (clip chomping: one final line
// break; lines without the block's indentation), so nothing a reader sees changes.
//
// Lifting is a guess from the lines alone (a `key: |` inside a quoted scalar or inside another
// block's text is not a block): YamlNode::parse keeps it only where yaml-cpp read the lifted text
// without error and found a scalar at every lifted block's `|` (lifted_blocks_found); anything
// else is read again from the text as written.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

namespace meshplan {

// A block cut out of the text: where its `|` stands (0-based, as yaml-cpp's marks) and its text.
struct LiftedBlock {
  int line = 0, column = 0;
  std::string text;
};

struct LiftedText {
  std::string yaml;                 // the text with each lifted block's content lines emptied
  std::vector<LiftedBlock> blocks;  // in the order of their lines
};

// The blocks of `text` that can be lifted (none where the text holds a carriage return or a
// tab, nor a block with a character YAML does not print: those keep yaml-cpp's own reading).
LiftedText lift_literal_blocks(const std::string& text, size_t min_lines);

// Whether every block of `blocks` is a scalar of `root` (its mark at the block's `|`).
bool lifted_blocks_found(const YAML::Node& root, const std::vector<LiftedBlock>& blocks);

}  // namespace meshplan
