#include "core/yaml_structure.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <set>
#include <sstream>

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

// Records where each document starts; ignores everything else.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

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
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
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
