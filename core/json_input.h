// Parsing JSON input with the same promise as YAML: every failure is an InputError at a
// position. nlohmann::json alone throws out_of_range for numbers beyond a double (1e400),
// keeps the last of duplicate keys silently, and recurses when printing deep values.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace meshplan {

// Containers nested deeper than this are refused (config.json and nccl-tests JSON nest 3-4).
constexpr int kMaxJsonDepth = 64;

// Parses `text` (the contents of `file`). Throws InputError for malformed JSON, a number out
// of range, nesting deeper than kMaxJsonDepth, or a key given twice in one object (naming both
// places).
nlohmann::json parse_json_input(const std::string& text, const std::string& file);

// A value for a diagnostic: scalars as JSON text, containers as "{…}" / "[…]" (never recursive).
std::string json_value_text(const nlohmann::json& value);

}  // namespace meshplan
