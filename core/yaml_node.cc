#include "core/yaml_node.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "core/edit_distance.h"
#include "core/yaml_structure.h"

namespace meshplan {

std::shared_ptr<SourceText> SourceText::from_string(std::string file, const std::string& text) {
  auto s = std::make_shared<SourceText>();
  s->file = std::move(file);
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    s->lines.push_back(l);
  }
  return s;
}

std::string SourceText::line(int one_based) const {
  if (one_based < 1 || one_based > static_cast<int>(lines.size())) return "";
  return lines[static_cast<size_t>(one_based - 1)];
}

const std::string* SourceText::lifted_text(const YAML::Mark& m) const {
  const auto it = std::lower_bound(lifted.begin(), lifted.end(), std::make_pair(m.line, m.column),
                                   [](const LiftedBlock& b, const std::pair<int, int>& at) {
                                     return std::make_pair(b.line, b.column) < at;
                                   });
  return it != lifted.end() && it->line == m.line && it->column == m.column ? &it->text : nullptr;
}

std::string read_text_file(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw InputError{{Diagnostic{{file, 0, 0, ""}, "", "", "is a directory, not a file"}}};
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string rule = err == ENOENT
                                 ? "cannot open file (does it exist?)"
                                 : fmt::format("cannot open file: {}", std::strerror(err));
    throw InputError{{Diagnostic{{file, 0, 0, ""}, "", "", rule}}};
  }
  // In chunks, so that a file without end is refused at the bound rather than read until memory
  // runs out.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes)
      throw InputError{{Diagnostic{
          {file, 0, 0, ""},
          "",
          "",
          fmt::format("holds more than {} MiB, more than any meshplan input (a model, cluster, "
                      "profile or request trace); is it a device or an endless stream?",
                      kMaxInputFileBytes >> 20)}}};
  }
  return text;
}

YamlNode::YamlNode(YAML::Node node, std::shared_ptr<const SourceText> source, std::string path)
    : node_(std::move(node)), source_(std::move(source)), path_(std::move(path)) {}

namespace {

// Content lines a literal block needs before it is lifted out of yaml-cpp's reading: enough that
// only the long tables of calibration profiles are, every other block read as yaml-cpp reads it.
constexpr size_t kLiftedBlockMinLines = 16;

// The whole-document rules (core/yaml_structure.h) over `root`, read from `yaml`.
YamlNode checked_root(const YAML::Node& root, const std::string& yaml,
                      std::shared_ptr<const SourceText> source) {
  std::vector<Diagnostic> errors = yaml_document_errors(yaml, *source);
  if (!errors.empty()) throw InputError{errors};
  if (!root.IsMap()) {
    SourceLocation where{source->file, 1, 1, source->line(1)};
    throw InputError{{Diagnostic{where, "", "", "must be a YAML mapping of fields"}}};
  }
  errors = yaml_key_errors(root, *source);
  if (!errors.empty()) throw InputError{errors};
  return YamlNode(root, std::move(source), "");
}

}  // namespace

YamlNode YamlNode::parse(const std::string& text, const std::string& file) {
  std::shared_ptr<SourceText> source = SourceText::from_string(file, text);
  LiftedText lifted = lift_literal_blocks(text, kLiftedBlockMinLines);
  if (!lifted.blocks.empty()) {
    // Kept only where the guess holds (core/yaml_blocks.h); anything else is read as written.
    std::optional<YAML::Node> root;
    try {
      root = YAML::Load(lifted.yaml);
    } catch (const YAML::Exception&) {
    }
    if (root && lifted_blocks_found(*root, lifted.blocks)) {
      source->lifted = std::move(lifted.blocks);
      try {
        return checked_root(*root, lifted.yaml, source);
      } catch (const YAML::Exception&) {
        source->lifted.clear();
      }
    }
  }
  try {
    return checked_root(YAML::Load(text), text, source);
  } catch (const YAML::Exception& e) {
    SourceLocation where{file, e.mark.line + 1, e.mark.column + 1, source->line(e.mark.line + 1)};
    throw InputError{{Diagnostic{where, "", "", "invalid YAML: " + e.msg}}};
  }
}

YamlNode YamlNode::load_file(const std::string& file) { return parse(read_text_file(file), file); }

SourceLocation YamlNode::location() const {
  YAML::Mark m = node_.Mark();
  if (m.line < 0) return {source_->file, 0, 0, ""};
  return {source_->file, m.line + 1, m.column + 1, source_->line(m.line + 1)};
}

SourceLocation YamlNode::block_location(size_t content_line, size_t content_column) const {
  const YAML::Mark m = node_.Mark();
  if (m.line < 0 || !node_.IsScalar()) return location();
  const std::string indicator_line = source_->line(m.line + 1);
  const auto at = static_cast<size_t>(m.column);
  if (at >= indicator_line.size() || (indicator_line[at] != '|' && indicator_line[at] != '>'))
    return location();
  const int line = m.line + 2 + static_cast<int>(content_line);
  const std::string text = source_->line(line);
  const size_t indent =
      text.find_first_not_of(' ') == std::string::npos ? text.size() : text.find_first_not_of(' ');
  return {source_->file, line, static_cast<int>(indent + content_column) + 1, text};
}

Diagnostic YamlNode::diagnostic(const std::string& rule) const {
  std::string value = node_.IsScalar() ? scalar_value() : "";
  return Diagnostic{location(), path_, value, rule};
}

void YamlNode::fail(const std::string& rule) const { throw InputError{{diagnostic(rule)}}; }

SourceLocation YamlNode::key_location(const std::string& key) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      YAML::Mark m = it->first.Mark();
      return {source_->file, m.line + 1, m.column + 1, source_->line(m.line + 1)};
    }
  }
  return location();
}

static std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

bool YamlNode::has(const std::string& key) const {
  if (!node_.IsMap()) fail("must be a mapping of fields");
  return static_cast<bool>(node_[key]);
}

std::optional<YamlNode> YamlNode::optional_child(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  YAML::Node c = node_[key];
  if (c.IsNull()) {
    SourceLocation where = key_location(key);
    throw InputError{{Diagnostic{where, join_path(path_, key), "", "has no value"}}};
  }
  return YamlNode(c, source_, join_path(path_, key));
}

YamlNode YamlNode::child(const std::string& key) const {
  auto c = optional_child(key);
  if (!c) {
    SourceLocation where = location();
    throw InputError{{Diagnostic{where, join_path(path_, key), "", "is required but missing"}}};
  }
  return *c;
}

std::vector<std::string> YamlNode::keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) fail("must be a mapping of fields");
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      YamlNode(it->first, source_, path_).fail("keys must be plain names, not lists or mappings");
    }
    out.push_back(it->first.Scalar());
  }
  return out;
}

void YamlNode::expect_only_keys(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("must be a mapping of fields");
  std::vector<Diagnostic> errors;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string key = it->first.Scalar();
    bool known = false;
    for (const auto& a : allowed) known = known || a == key;
    if (known) continue;
    YAML::Mark m = it->first.Mark();
    SourceLocation where{source_->file, m.line + 1, m.column + 1, source_->line(m.line + 1)};
    errors.push_back(
        Diagnostic{where, join_path(path_, key), "", "unknown field" + did_you_mean(key, allowed)});
  }
  if (!errors.empty()) throw InputError{errors};
}

size_t YamlNode::size() const {
  if (!node_.IsSequence()) fail("must be a list");
  return node_.size();
}

YamlNode YamlNode::element(size_t i) const {
  return YamlNode(node_[i], source_, fmt::format("{}[{}]", path_, i));
}

const std::string& YamlNode::scalar_value() const {
  const std::string& s = node_.Scalar();
  if (s.empty() && !source_->lifted.empty())
    if (const std::string* block = source_->lifted_text(node_.Mark())) return *block;
  return s;
}

std::string YamlNode::scalar_text() const {
  if (!node_.IsScalar()) fail("must be a single value, not a list or mapping");
  return scalar_value();
}

std::string YamlNode::as_string() const {
  std::string s = scalar_text();
  if (s.empty()) fail("must not be empty");
  return s;
}

std::optional<std::string> int_from_text(const std::string& s, int64_t min, int64_t max,
                                         int64_t& value) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  const bool whole = ec == std::errc() && ptr == s.data() + s.size();
  if (!whole || value < min || value > max)
    return fmt::format("must be an integer between {} and {}", min, max);
  return std::nullopt;
}

int64_t YamlNode::as_int(int64_t min, int64_t max) const {
  int64_t v = 0;
  if (auto rule = int_from_text(scalar_text(), min, max, v)) fail(*rule);
  return v;
}

double YamlNode::as_double(double min, double max) const {
  std::string s = scalar_text();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  bool whole = !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
  if (!whole || v < min || v > max)
    fail(fmt::format("must be a number between {} and {}", min, max));
  return v;
}

bool YamlNode::as_bool() const {
  std::string s = scalar_text();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  fail("must be true or false");
}

std::string YamlNode::as_choice(const std::vector<std::string>& choices) const {
  std::string s = scalar_text();
  for (const auto& c : choices)
    if (c == s) return s;
  fail(fmt::format("must be one of {}{}", fmt::join(choices, "|"), did_you_mean(s, choices)));
}

int64_t YamlNode::get_int(const std::string& key, int64_t fallback, int64_t min,
                          int64_t max) const {
  auto c = optional_child(key);
  return c ? c->as_int(min, max) : fallback;
}

double YamlNode::get_double(const std::string& key, double fallback, double min, double max) const {
  auto c = optional_child(key);
  return c ? c->as_double(min, max) : fallback;
}

bool YamlNode::get_bool(const std::string& key, bool fallback) const {
  auto c = optional_child(key);
  return c ? c->as_bool() : fallback;
}

std::string YamlNode::get_choice(const std::string& key, const std::string& fallback,
                                 const std::vector<std::string>& choices) const {
  auto c = optional_child(key);
  return c ? c->as_choice(choices) : fallback;
}

}  // namespace meshplan
