#include "serving/serving_layout_parse.h"

#include <charconv>
#include <set>
#include <vector>

#include "core/edit_distance.h"

namespace meshplan::serving {
namespace {

const std::vector<std::string> kKeys = {
    "tp", "pp", "ep", "replicas", "max_batch", "attention_dp", "prefill_tp", "prefill_replicas"};
constexpr int64_t kMaxValue = 10'000'000;  // core/model_limits.h bounds ranks at 10^7

Diagnostic item_error(const std::string& text, size_t column, const std::string& field,
                      const std::string& value, const std::string& rule) {
  return Diagnostic{{"--layout", 1, static_cast<int>(column) + 1, text}, field, value, rule};
}

int64_t* field_of(ServingLayout& l, const std::string& key) {
  if (key == "tp") return &l.tp;
  if (key == "pp") return &l.pp;
  if (key == "ep") return &l.ep;
  if (key == "replicas") return &l.replicas;
  if (key == "max_batch") return &l.max_batch;
  if (key == "prefill_tp") return &l.prefill_tp;
  if (key == "prefill_replicas") return &l.prefill_replicas;
  return nullptr;
}

}  // namespace

Result<ServingLayout> parse_serving_layout(const std::string& text) {
  ServingLayout l;
  std::vector<Diagnostic> errors;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int64_t attention_dp = 0;
    int64_t* field = key == "attention_dp" ? &attention_dp : field_of(l, key);
    if (eq == std::string::npos) {
      errors.push_back(item_error(text, start, "layout", item, "must be KEY=VALUE"));
    } else if (!field) {
      errors.push_back(
          item_error(text, start, key, value,
                     "is not a serving layout field (tp|pp|ep|replicas|max_batch|attention_dp|"
                     "prefill_tp|prefill_replicas)" +
                         did_you_mean(key, kKeys)));
    } else if (!seen.insert(key).second) {
      errors.push_back(item_error(text, start, key, value, "is given twice"));
    } else {
      int64_t v = -1;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      const int64_t least = key == "max_batch" || key == "attention_dp" ? 0 : 1;
      const int64_t most = key == "attention_dp" ? 1 : kMaxValue;
      const bool whole = ec == std::errc() && ptr == value.data() + value.size();
      if (!whole || v < least || v > most)
        errors.push_back(
            item_error(text, start + eq + 1, key, value,
                       key == "attention_dp" ? "must be 0 or 1"
                       : least == 0 ? "must be an integer between 0 (engine default) and 10000000"
                                    : "must be an integer between 1 and 10000000"));
      else if (key == "attention_dp")
        l.attention_dp = v == 1;
      else
        *field = v;
    }
    start = end + 1;
  }
  if (errors.empty() && seen.count("prefill_tp") != seen.count("prefill_replicas"))
    errors.push_back(
        item_error(text, 0, seen.count("prefill_tp") ? "prefill_tp" : "prefill_replicas",
                   std::to_string(seen.count("prefill_tp") ? l.prefill_tp : l.prefill_replicas),
                   "disaggregated prefill needs both prefill_tp and prefill_replicas"));
  if (!errors.empty()) return errors;
  return l;
}

}  // namespace meshplan::serving
