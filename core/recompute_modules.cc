#include "core/recompute_modules.h"

namespace meshplan {

const std::array<const char*, kRecomputeModules>& recompute_module_names() {
  static constexpr std::array<const char*, kRecomputeModules> kNames = {
      "core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe", "shared_experts"};
  return kNames;
}

double sum_over(RecomputeModules modules, const std::array<double, kRecomputeModules>& values) {
  double sum = 0;
  for (size_t i = 0; i < kRecomputeModules; ++i) {
    const auto m = static_cast<RecomputeModule>(i);
    if (!has(modules, m)) continue;
    if (m == RecomputeModule::moe_act && has(modules, RecomputeModule::moe)) continue;
    sum += values[i];
  }
  return sum;
}

std::string to_string(RecomputeModules set) {
  std::string out;
  for (size_t i = 0; i < kRecomputeModules; ++i) {
    if (!has(set, static_cast<RecomputeModule>(i))) continue;
    if (!out.empty()) out += '+';
    out += recompute_module_names()[i];
  }
  return out.empty() ? "none" : out;
}

std::optional<RecomputeModules> parse_recompute_modules(std::string_view text) {
  RecomputeModules set = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('+', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view name = text.substr(start, end - start);
    size_t i = 0;
    while (i < kRecomputeModules && name != recompute_module_names()[i]) ++i;
    if (i == kRecomputeModules) return std::nullopt;
    const RecomputeModules b = bit(static_cast<RecomputeModule>(i));
    if (set & b) return std::nullopt;
    set |= b;
    start = end + 1;
  }
  return set;
}

}  // namespace meshplan
