// "--layout tp=8,pp=4,..." → Layout, with the column of every error. Each key's syntax is its
// kLayoutFields entry (core/layout_fields.h).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/edit_distance.h"
#include "core/layout.h"
#include "core/layout_fields.h"

namespace meshplan {
namespace {

struct Item {
  std::string key, value;
  int column;  // 1-based column of the key
};

class LayoutParser {
 public:
  LayoutParser(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

  Layout parse() {
    Layout layout;
    std::map<const LayoutField*, int> given;  // field → column of its first entry
    for (const Item& item : split()) apply(item, layout, given);
    if (!errors_.empty()) {
      std::stable_sort(
          errors_.begin(), errors_.end(),
          [](const Diagnostic& a, const Diagnostic& b) { return a.where.column < b.where.column; });
      throw InputError{errors_};
    }
    for (const LayoutField& field : kLayoutFields)
      if (field.derive_default && !given.count(&field)) field.derive_default(layout);
    return layout;
  }

 private:
  std::vector<Item> split() {
    std::vector<Item> items;
    size_t start = 0;
    while (start <= text_.size()) {
      size_t end = text_.find(',', start);
      if (end == std::string::npos) end = text_.size();
      std::string part = text_.substr(start, end - start);
      int column = static_cast<int>(start) + 1;
      size_t eq = part.find('=');
      if (part.empty()) {
        if (!text_.empty())
          error(column, "", "", "empty entry; write key=value pairs separated by commas");
      } else if (eq == std::string::npos) {
        error(column, part, "", "must be written key=value");
      } else {
        items.push_back({part.substr(0, eq), part.substr(eq + 1), column});
      }
      start = end + 1;
    }
    return items;
  }

  void error(int column, const std::string& field, const std::string& value,
             const std::string& rule) {
    errors_.push_back(Diagnostic{{origin_, 1, column, text_}, field, value, rule});
  }

  void apply(const Item& item, Layout& layout, std::map<const LayoutField*, int>& given) {
    const LayoutField* field = find_layout_field(item.key);
    if (!field) {
      error(item.column, item.key, item.value,
            "unknown layout key" + did_you_mean(item.key, layout_field_keys()));
      return;
    }
    auto [first, fresh] = given.emplace(field, item.column);
    if (!fresh) {
      error(item.column, item.key, item.value,
            fmt::format("is given twice; the first is at column {}", first->second));
      return;
    }
    const std::string rule = field->parse(item.value, layout);
    if (!rule.empty()) error(item.column, item.key, item.value, rule);
  }

  const std::string& text_;
  const std::string& origin_;
  std::vector<Diagnostic> errors_;
};

}  // namespace

Result<Layout> parse_layout(const std::string& text, const std::string& origin) {
  return capture_input_errors([&] { return LayoutParser(text, origin).parse(); });
}

void locate_in_layout(std::vector<Diagnostic>& errors, const std::string& text) {
  for (Diagnostic& d : errors) {
    if (d.where.line != 0 || d.field.empty()) continue;
    for (size_t start = 0; start <= text.size();) {
      size_t end = text.find(',', start);
      if (end == std::string::npos) end = text.size();
      if (text.compare(start, d.field.size() + 1, d.field + "=") == 0) {
        d.where.line = 1;
        d.where.column = static_cast<int>(start) + 1;
        d.where.source_line = text;
        break;
      }
      start = end + 1;
    }
  }
}

}  // namespace meshplan
