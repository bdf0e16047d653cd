#include "core/yaml_blocks.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

namespace meshplan {
namespace {

size_t leading_spaces(std::string_view line) {
  const size_t n = line.find_first_not_of(' ');
  return n == std::string_view::npos ? line.size() : n;
}

// The column of the `|` where `line` is `<spaces><key>: |` and nothing more, the key of letters,
// digits and "_-."; else npos.
size_t literal_header(std::string_view line) {
  const size_t indent = leading_spaces(line);
  size_t end = indent;
  while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) ||
                               std::string_view("_-.").find(line[end]) != std::string_view::npos))
    ++end;
  if (end == indent || line.substr(end) != ": |") return std::string_view::npos;
  return end + 2;
}

// The length of the UTF-8 sequence at `s` that encodes a character YAML prints, U+00A0 on (no
// surrogate, U+FFFE or U+FFFF), or 0: yaml-cpp refuses what YAML does not print, and a block
// holding anything but those and printable ASCII keeps yaml-cpp's own reading.
size_t printable_utf8(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto tail = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  if (b(0) >= 0xC2 && b(0) <= 0xDF && tail(1))
    return ((b(0) & 0x1F) << 6 | (b(1) & 0x3F)) >= 0xA0 ? 2 : 0;
  if (b(0) >= 0xE0 && b(0) <= 0xEF && tail(1) && tail(2)) {
    const unsigned c = (b(0) & 0x0Fu) << 12 | (b(1) & 0x3Fu) << 6 | (b(2) & 0x3Fu);
    return c >= 0x800 && !(c >= 0xD800 && c <= 0xDFFF) && c != 0xFFFE && c != 0xFFFF ? 3 : 0;
  }
  if (b(0) >= 0xF0 && b(0) <= 0xF4 && tail(1) && tail(2) && tail(3)) {
    const unsigned c =
        (b(0) & 0x07u) << 18 | (b(1) & 0x3Fu) << 12 | (b(2) & 0x3Fu) << 6 | (b(3) & 0x3Fu);
    return c >= 0x10000 && c <= 0x10FFFF ? 4 : 0;
  }
  return 0;
}

// Whether every character of `line` is one YAML prints (printable ASCII, printable_utf8).
bool printable(std::string_view line) {
  for (size_t i = 0; i < line.size();) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c >= 0x20 && c < 0x7F) {
      ++i;
      continue;
    }
    const size_t n = c >= 0x80 ? printable_utf8(line.substr(i)) : 0;
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// The lines of `text` (split at '\n'; the last may be empty).
std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      out.emplace_back(text.data() + start, text.size() - start);
      return out;
    }
    out.emplace_back(text.data() + start, end - start);
    start = end + 1;
  }
}

// The content lines of the block whose header is line `header` (indented `key_indent`): the
// index past its last line that is not empty, or `header` + 1 where the lines below are not a
// block this lifts (a line of spaces alone, a character YAML does not print, a line between the
// key's indentation and the block's, no line with text). `lines_with_text` counts the lines with
// text (0 where the block is not lifted).
size_t block_end(const std::vector<std::string_view>& lines, size_t header, size_t key_indent,
                 size_t& block_indent, size_t& lines_with_text) {
  block_indent = 0;
  lines_with_text = 0;
  auto refused = [&] {
    lines_with_text = 0;
    return header + 1;
  };
  size_t last = header;
  for (size_t i = header + 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) continue;
    const size_t indent = leading_spaces(line);
    if (indent == line.size() || !printable(line)) return refused();
    if (indent <= key_indent) break;
    if (block_indent == 0) block_indent = indent;
    if (indent < block_indent) return refused();
    ++lines_with_text;
    last = i;
  }
  return lines_with_text == 0 ? header + 1 : last + 1;
}

}  // namespace

LiftedText lift_literal_blocks(const std::string& text, size_t min_lines) {
  LiftedText out;
  if (text.find_first_of("\r\t") != std::string::npos) {
    out.yaml = text;
    return out;
  }
  const std::vector<std::string_view> lines = split_lines(text);
  std::vector<bool> emptied(lines.size(), false);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t bar = literal_header(lines[i]);
    if (bar == std::string_view::npos) continue;
    size_t block_indent = 0, with_text = 0;
    const size_t end = block_end(lines, i, leading_spaces(lines[i]), block_indent, with_text);
    if (with_text < min_lines) continue;
    LiftedBlock b{static_cast<int>(i), static_cast<int>(bar), {}};
    for (size_t j = i + 1; j < end; ++j) {
      if (!lines[j].empty()) b.text.append(lines[j].substr(block_indent));
      // Every line's break, but that of a last line the text does not end.
      if (j + 1 < lines.size()) b.text.push_back('\n');
      emptied[j] = true;
    }
    out.blocks.push_back(std::move(b));
    i = end - 1;
  }
  if (out.blocks.empty()) {
    out.yaml = text;
    return out;
  }
  out.yaml.reserve(text.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!emptied[i]) out.yaml.append(lines[i]);
    if (i + 1 < lines.size()) out.yaml.push_back('\n');
  }
  return out;
}

bool lifted_blocks_found(const YAML::Node& root, const std::vector<LiftedBlock>& blocks) {
  std::set<std::pair<int, int>> wanted;
  for (const LiftedBlock& b : blocks) wanted.emplace(b.line, b.column);
  // Each collection once (by where it starts), so aliases cannot multiply the walk.
  std::set<std::pair<int, int>> visited;
  std::vector<YAML::Node> todo{root};
  while (!todo.empty() && !wanted.empty()) {
    const YAML::Node node = todo.back();
    todo.pop_back();
    const YAML::Mark m = node.Mark();
    if (node.IsScalar()) {
      if (node.Scalar().empty()) wanted.erase({m.line, m.column});
      continue;
    }
    if (!visited.emplace(m.line, m.column).second) continue;
    if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) todo.push_back(it->second);
    } else if (node.IsSequence()) {
      for (auto it = node.begin(); it != node.end(); ++it) todo.push_back(*it);
    }
  }
  return wanted.empty();
}

}  // namespace meshplan
