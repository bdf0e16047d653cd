#include "core/yaml_structure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string_view>

#include "core/yaml_node.h"

namespace meshplan {
namespace {

SourceLocation at_mark(const YAML::Mark& m, const SourceText& source) {
  if (m.line < 0) return {source.file, 0, 0, ""};
  return {source.file, m.line + 1, m.column + 1, source.line(m.line + 1)};
}

std::string short_location(const SourceLocation& where) {
  return fmt::format("{}:{}:{}", where.file, where.line, where.column);
}

struct Pending {
  YAML::Node node;
  std::string path;
};

std::string join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Checks one mapping's keys; queues its values.
void check_map(const Pending& map, const SourceText& source, std::vector<Pending>& todo,
               std::vector<Diagnostic>& errors) {
  std::vector<std::pair<std::string, YAML::Mark>> seen;
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    const YAML::Node key = it->first;  // a copy: `it->first` lives in a temporary
    if (!key.IsScalar()) {
      errors.push_back(Diagnostic{at_mark(key.Mark(), source), map.path, "",
                                  "keys must be plain names, not lists or mappings"});
      continue;
    }
    const std::string path = join(map.path, key.Scalar());
    for (const auto& [name, first] : seen) {
      if (name != key.Scalar()) continue;
      errors.push_back(Diagnostic{at_mark(key.Mark(), source), path, "",
                                  fmt::format("is given twice; the first is at {}",
                                              short_location(at_mark(first, source)))});
    }
    seen.emplace_back(key.Scalar(), key.Mark());
    todo.push_back({it->second, path});
  }
}

// Whether a line at column 0 can only be a key of a block mapping at the root ("name: x",
// "name:", the name of letters, digits and "_-./") or an item of a block sequence under one
// ("- x"): anything else there (a flow collection, a bare scalar, a tab, a quoted or complex
// key, a marker) may end yaml-cpp's first document early, as its JSON Lines and plain-text
// readings do.
bool plain_root_line(std::string_view line) {
  if (line.starts_with("- ") || line == "-" || line == "-\r") return true;
  size_t colon = 0;
  while (colon < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[colon])) ||
          std::string_view("_-./").find(line[colon]) != std::string_view::npos))
    ++colon;
  return colon > 0 && colon < line.size() && line[colon] == ':' &&
         (colon + 1 == line.size() || line[colon + 1] == ' ' || line[colon + 1] == '\r');
}

}  // namespace

// No second document where the first line of content is at column 0, every line at column 0
// (comments and blank lines aside) is plain_root_line, save one "---" or directives before the
// first of them, and no character is a control character but a tab or a line end.
bool may_hold_two_documents(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    const bool line_end = u == '\n' || (u == '\r' && i + 1 < text.size() && text[i + 1] == '\n');
    if ((u < 0x20 && u != '\t' && !line_end) || u == 0x7F) return true;
  }
  bool opened = false;  // a "---" opened the document
  bool keyed = false;   // the root's first key was seen
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    at = end + 1;
    const size_t first = line.find_first_not_of(" \r");
    if (first == std::string_view::npos || line[first] == '#') continue;  // blank or comment
    if (first > 0) {  // indented: inside a root key's value, or a root that is not at column 0
      if (!keyed) return true;
      continue;
    }
    if (!keyed && !opened && line[0] == '%') continue;  // a directive
    if (!keyed && !opened && (line == "---" || line == "---\r")) {
      opened = true;
      continue;
    }
    if (!plain_root_line(line) || (!keyed && line[0] == '-')) return true;
    keyed = true;
  }
  return false;
}

std::vector<Diagnostic> yaml_key_errors(const YAML::Node& root, const SourceText& source) {
  std::vector<Diagnostic> errors;
  std::vector<Pending> todo{{root, ""}};
  std::set<int> visited;  // byte offsets of collections already checked (aliases share nodes)
  while (!todo.empty()) {
    Pending p = todo.back();
    todo.pop_back();
    if (!p.node.IsMap() && !p.node.IsSequence()) continue;
    if (!visited.insert(p.node.Mark().pos).second) continue;
    if (p.node.IsMap()) {
      check_map(p, source, todo, errors);
      continue;
    }
    for (size_t i = 0; i < p.node.size(); ++i)
      todo.push_back({p.node[i], fmt::format("{}[{}]", p.path, i)});
  }
  std::stable_sort(errors.begin(), errors.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.where.line, a.where.column) < std::pair(b.where.line, b.where.column);
  });
  return errors;
}

std::vector<Diagnostic> yaml_document_errors(const std::string& text, const SourceText& source) {
  if (!may_hold_two_documents(text)) return {};
  std::istringstream in(text);
  YAML::Parser parser(in);
  YamlDocumentStarts starts;
  if (!parser.HandleNextDocument(starts) || !parser.HandleNextDocument(starts)) return {};
  SourceLocation second = at_mark(starts.marks.back(), source);
  if (second.source_line.empty()) {  // an empty document has no content: take its "---" line
    for (int i = static_cast<int>(source.lines.size()); i >= 1; --i) {
      if (source.line(i).rfind("---", 0) == 0) {
        second = {source.file, i, 1, source.line(i)};
        break;
      }
    }
  }
  SourceLocation first = at_mark(starts.marks.front(), source);
  if (first.line == 0) first = {source.file, 1, 1, ""};
  return {Diagnostic{second, "", "",
                     fmt::format("a second YAML document starts here (the first is at {}); "
                                 "a file holds one document",
                                 short_location(first))}};
}

}  // namespace meshplan
