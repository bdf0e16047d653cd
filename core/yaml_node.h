// Typed, position-aware access to YAML input. Every failure throws InputError carrying
// file:line:column, the dotted field path, the value as written and the rule broken; callers
// at the library boundary turn it into a Result (see result.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "core/yaml_blocks.h"

namespace meshplan {

// The text of an input file, kept for caret displays.
struct SourceText {
  std::string file;
  std::vector<std::string> lines;
  // The long literal blocks yaml-cpp read as empty scalars (core/yaml_blocks.h), in line order.
  std::vector<LiftedBlock> lifted;
  static std::shared_ptr<SourceText> from_string(std::string file, const std::string& text);
  std::string line(int one_based) const;
  // The text of the lifted block whose `|` is at `m`, or null.
  const std::string* lifted_text(const YAML::Mark& m) const;
};

// The integer `s` spells, into `value`, when it lies in [min, max]; else the rule it breaks
// (YamlNode::as_int's, for fields read from text inside a scalar).
std::optional<std::string> int_from_text(const std::string& s, int64_t min, int64_t max,
                                         int64_t& value);

class YamlNode {
 public:
  YamlNode(YAML::Node node, std::shared_ptr<const SourceText> source, std::string path);

  // Parses `text` (the contents of `file`). Throws InputError on malformed YAML.
  static YamlNode parse(const std::string& text, const std::string& file);
  // Reads and parses a file. Throws InputError when it is missing or malformed.
  static YamlNode load_file(const std::string& file);

  const std::string& path() const { return path_; }
  const std::string& file() const { return source_->file; }
  SourceLocation location() const;
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  const YAML::Node& raw() const { return node_; }

  // Map access. REQUIRES: is_map() (else throws InputError "must be a mapping").
  bool has(const std::string& key) const;
  YamlNode child(const std::string& key) const;  // throws "is required" when absent
  std::optional<YamlNode> optional_child(const std::string& key) const;
  // Every key not in `allowed` is an error ("unknown field … did you mean …?"); all are reported.
  void expect_only_keys(const std::vector<std::string>& allowed) const;
  std::vector<std::string> keys() const;

  // Sequence access. REQUIRES: is_sequence().
  size_t size() const;
  YamlNode element(size_t i) const;

  // Scalars.
  std::string as_string() const;
  int64_t as_int(int64_t min, int64_t max) const;  // inclusive range, stated in the rule
  double as_double(double min, double max) const;
  bool as_bool() const;
  // One of `choices` (exact match), else "must be one of a|b|c (did you mean …?)".
  std::string as_choice(const std::vector<std::string>& choices) const;

  // Convenience: child value when present, else `fallback`.
  int64_t get_int(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  double get_double(const std::string& key, double fallback, double min, double max) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& choices) const;

  // Where line `content_line` (0: the first) of this scalar's text sits, at `content_column`
  // of that line, when the scalar is a literal or folded block (`key: |`, whose text starts on
  // the line below, its indentation stripped); any other scalar: location().
  SourceLocation block_location(size_t content_line, size_t content_column) const;

  // Throws InputError at this node's position.
  [[noreturn]] void fail(const std::string& rule) const;
  Diagnostic diagnostic(const std::string& rule) const;

 private:
  std::string scalar_text() const;
  // The scalar's text as written: a lifted block's from the source, else yaml-cpp's.
  // REQUIRES: is_scalar().
  const std::string& scalar_value() const;
  SourceLocation key_location(const std::string& key) const;

  YAML::Node node_;
  std::shared_ptr<const SourceText> source_;
  std::string path_;
};

// The most bytes an input file may hold: far above any model, cluster, profile or request trace
// (the largest shipped input is under 1 MiB; a million-request trace is tens of MiB), and a bound
// on what an endless stream (/dev/zero, /dev/urandom) makes meshplan read before it refuses.
constexpr size_t kMaxInputFileBytes = size_t{256} << 20;

// Reads a whole file; throws InputError naming the file when it cannot be read or holds more than
// kMaxInputFileBytes.
std::string read_text_file(const std::string& file);

}  // namespace meshplan
