#include "core/json_input.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "core/diagnostic.h"
#include "core/json_location.h"

namespace meshplan {
namespace {

using nlohmann::json;

[[noreturn]] void fail_at(const std::string& file, const std::string& text, size_t offset,
                          const std::string& field, const std::string& rule) {
  throw InputError{{Diagnostic{location_of_offset(file, text, offset), field, "", rule}}};
}

// The offset just past the string literal starting at `at` (a '"').
size_t skip_string(const std::string& text, size_t at) {
  size_t i = at + 1;
  while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
  return i + 1;
}

// The key a string literal spells ("a" and "\u0061" are one key); the literal itself when it
// does not decode.
std::string key_text(const std::string& literal) {
  json decoded = json::parse(literal, nullptr, /*allow_exceptions=*/false);
  return decoded.is_string() ? decoded.get<std::string>() : literal;
}

// One open object or array while scanning: its keys (objects) and whether a key comes next.
struct Open {
  bool object = false;
  bool expect_key = false;
  std::map<std::string, size_t> keys;  // key → offset of its first occurrence
};

// Scans well-formed JSON `text` for nesting depth and duplicate keys. REQUIRES: json::parse
// accepted `text`.
void check_structure(const std::string& text, const std::string& file) {
  std::vector<Open> open;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      if (static_cast<int>(open.size()) >= kMaxJsonDepth)
        fail_at(file, text, i, "", fmt::format("nesting deeper than {} levels", kMaxJsonDepth));
      open.push_back(Open{c == '{', c == '{', {}});
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty()) {
      open.back().expect_key = open.back().object;
    } else if (c == '"') {
      const size_t end = skip_string(text, i);
      if (!open.empty() && open.back().expect_key) {
        open.back().expect_key = false;
        const std::string key = key_text(text.substr(i, end - i));
        auto [it, fresh] = open.back().keys.emplace(key, i);
        if (!fresh) {
          const SourceLocation first = location_of_offset(file, text, it->second);
          fail_at(file, text, i, key,
                  fmt::format("is given twice; the first is at {}:{}:{}", file, first.line,
                              first.column));
        }
      }
      i = end;
      continue;
    }
    ++i;
  }
}

}  // namespace

json parse_json_input(const std::string& text, const std::string& file) {
  // nlohmann::json stops at a NUL byte and accepts what came before it.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    fail_at(file, text, nul, "", "contains a NUL byte: not a JSON text file");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    auto colon = what.find("syntax error");
    fail_at(file, text, e.byte > 0 ? e.byte - 1 : 0, "",
            "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon)));
  } catch (const json::out_of_range& e) {  // 406: a number beyond a double
    std::string what = e.what();
    auto quote = what.find('\'');
    std::string number =
        quote == std::string::npos ? "" : what.substr(quote + 1, what.rfind('\'') - quote - 1);
    size_t at = number.empty() ? 0 : text.find(number);
    fail_at(file, text, at == std::string::npos ? 0 : at, "",
            fmt::format("number {} is out of range (beyond ±1.8e308)", number));
  }
  check_structure(text, file);
  return j;
}

std::string json_value_text(const json& value) {
  if (value.is_object()) return "{…}";
  if (value.is_array()) return "[…]";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace meshplan
