// What selective recompute rebuilds in the backward pass, as Megatron-Core names the modules
// (--recompute-granularity selective --recompute-modules ...; transformer_config.py
// recompute_modules, default ["core_attn"]): a set, kept as bits.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace meshplan {

enum class RecomputeModule : uint8_t {
  core_attn,       // the attention core (scores, softmax, values)
  layernorm,       // the norms before attention and MLP (their outputs, the GEMMs' inputs)
  mla_up_proj,     // MLA's up-projections to per-head Q, K, V
  mlp,             // a dense layer's MLP
  moe_act,         // the routed experts' activation function
  moe,             // the whole routed-expert block (router, dispatch, experts)
  shared_experts,  // the shared experts
};
inline constexpr size_t kRecomputeModules = 7;

// A set of modules: bit i is RecomputeModule i.
using RecomputeModules = uint8_t;
inline constexpr RecomputeModules bit(RecomputeModule m) {
  return static_cast<RecomputeModules>(1u << static_cast<unsigned>(m));
}
inline constexpr bool has(RecomputeModules set, RecomputeModule m) { return (set & bit(m)) != 0; }
// Megatron-Core's default.
inline constexpr RecomputeModules kDefaultRecomputeModules = bit(RecomputeModule::core_attn);

// Σ of a per-module quantity over `modules`, moe_act's left out when moe is there too (the
// whole routed block holds its activation): what recomputing the set drops or repeats.
double sum_over(RecomputeModules modules, const std::array<double, kRecomputeModules>& values);

// Megatron-Core's names, in enum order.
const std::array<const char*, kRecomputeModules>& recompute_module_names();
// "core_attn+layernorm" (enum order); the empty set is "none".
std::string to_string(RecomputeModules set);
// Reads names joined by '+' (any order, each once). Returns the set or nothing.
std::optional<RecomputeModules> parse_recompute_modules(std::string_view text);

}  // namespace meshplan
