// "--layout tp=8,pp=4,..." → Layout, with the column of every error.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "core/edit_distance.h"
#include "core/layout.h"

namespace meshplan {
namespace {

const std::vector<std::string> kKeys = {
    "dp",   "tp",       "pp",    "cp",         "ep",
    "zero", "mbs",      "vpp",   "recompute",  "recompute_layers",
    "sp",   "schedule", "order", "tp_overlap", "uneven"};

struct Item {
  std::string key, value;
  int column;  // 1-based column of the key
};

class LayoutParser {
 public:
  LayoutParser(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

  Layout parse() {
    Layout l;
    std::optional<bool> sp;
    std::optional<Schedule> schedule;
    for (const Item& it : split()) apply(it, l, sp, schedule);
    if (!errors_.empty()) {
      std::stable_sort(
          errors_.begin(), errors_.end(),
          [](const Diagnostic& a, const Diagnostic& b) { return a.where.column < b.where.column; });
      throw InputError{errors_};
    }
    l.sp = sp.value_or(l.tp > 1);
    l.schedule = schedule.value_or(l.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b);
    return l;
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

  std::optional<int64_t> integer(const Item& it, int64_t min, int64_t max) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(it.value.data(), it.value.data() + it.value.size(), v);
    if (ec != std::errc() || p != it.value.data() + it.value.size() || v < min || v > max) {
      error(it.column, it.key, it.value,
            fmt::format("must be an integer between {} and {}", min, max));
      return std::nullopt;
    }
    return v;
  }

  std::optional<bool> boolean(const Item& it) {
    if (it.value == "true" || it.value == "1" || it.value == "on") return true;
    if (it.value == "false" || it.value == "0" || it.value == "off") return false;
    error(it.column, it.key, it.value, "must be true or false");
    return std::nullopt;
  }

  std::optional<std::string> choice(const Item& it, const std::vector<std::string>& choices) {
    for (const auto& c : choices)
      if (c == it.value) return c;
    error(it.column, it.key, it.value,
          fmt::format("must be one of {}{}", fmt::join(choices, "|"),
                      did_you_mean(it.value, choices)));
    return std::nullopt;
  }

  void set_int(const Item& it, int64_t& field, int64_t min, int64_t max) {
    if (auto v = integer(it, min, max)) field = *v;
  }

  void apply(const Item& it, Layout& l, std::optional<bool>& sp,
             std::optional<Schedule>& schedule) {
    constexpr int64_t kMaxDegree = 1'000'000;
    const std::string& k = it.key;
    if (k == "dp")
      set_int(it, l.dp, 0, kMaxDegree);  // 0: fill
    else if (k == "tp")
      set_int(it, l.tp, 1, kMaxDegree);
    else if (k == "pp")
      set_int(it, l.pp, 1, kMaxDegree);
    else if (k == "cp")
      set_int(it, l.cp, 1, kMaxDegree);
    else if (k == "ep")
      set_int(it, l.ep, 1, kMaxDegree);
    else if (k == "mbs")
      set_int(it, l.mbs, 1, kMaxDegree);
    else if (k == "vpp")
      set_int(it, l.vpp, 1, 1024);
    else if (k == "recompute_layers")
      set_int(it, l.recompute_layers, 0, 100'000);
    else if (k == "zero") {
      if (auto v = integer(it, 0, 3)) l.zero = static_cast<int>(*v);
    } else if (k == "recompute") {
      if (auto c = choice(it, {"none", "selective", "full"}))
        l.recompute = *c == "full"        ? Recompute::full
                      : *c == "selective" ? Recompute::selective
                                          : Recompute::none;
    } else if (k == "schedule") {
      if (auto c = choice(it, {"gpipe", "1f1b", "interleaved", "zb-h1"}))
        schedule = *c == "gpipe"         ? Schedule::gpipe
                   : *c == "1f1b"        ? Schedule::one_f_one_b
                   : *c == "interleaved" ? Schedule::interleaved
                                         : Schedule::zb_h1;
    } else if (k == "sp") {
      sp = boolean(it);
    } else if (k == "tp_overlap") {
      if (auto b = boolean(it)) l.tp_overlap = *b;
    } else if (k == "uneven") {
      if (auto b = boolean(it)) l.uneven = *b;
    } else if (k == "order") {
      parse_order(it, l);
    } else {
      error(it.column, k, it.value, "unknown layout key" + did_you_mean(k, kKeys));
    }
  }

  void parse_order(const Item& it, Layout& l) {
    std::array<Dim, 4> order{};
    size_t n = 0, start = 0;
    bool ok = true;
    unsigned seen = 0;
    while (ok && start <= it.value.size()) {
      size_t end = it.value.find('-', start);
      if (end == std::string::npos) end = it.value.size();
      std::string name = it.value.substr(start, end - start);
      std::optional<Dim> d = name == "tp"   ? std::optional(Dim::tp)
                             : name == "cp" ? std::optional(Dim::cp)
                             : name == "dp" ? std::optional(Dim::dp)
                             : name == "pp" ? std::optional(Dim::pp)
                                            : std::nullopt;
      ok = d && n < 4 && !(seen & (1u << static_cast<unsigned>(*d)));
      if (ok) {
        seen |= 1u << static_cast<unsigned>(*d);
        order[n++] = *d;
      }
      start = end + 1;
    }
    if (!ok || n != 4) {
      error(it.column, it.key, it.value,
            "must list tp, cp, dp and pp once each, innermost first, e.g. tp-cp-dp-pp");
      return;
    }
    l.order = order;
  }

  const std::string& text_;
  const std::string& origin_;
  std::vector<Diagnostic> errors_;
};

}  // namespace

Result<Layout> parse_layout(const std::string& text, const std::string& origin) {
  return capture_input_errors([&] { return LayoutParser(text, origin).parse(); });
}

}  // namespace meshplan
