// Defaults that depend on other fields, and the cross-field rules of a model.
#pragma once

#include <functional>
#include <string>

#include "core/diagnostic.h"
#include "core/model_spec.h"

namespace meshplan {

// The largest model accepted: 10^15 parameters (500× the largest trained to date). With it,
// parameter and byte counts (≤ 20 bytes per parameter) stay far inside int64_t.
constexpr double kMaxParameters = 1e15;

// Parameters of `m` counted in floating point, so that it cannot overflow whatever the widths.
// REQUIRES: m completed (head_dim and ffn_hidden filled in).
double parameter_estimate(const ModelSpec& m);

// Builds a diagnostic for `field` breaking `rule` (the caller knows where fields live).
using FieldDiagnostic =
    std::function<Diagnostic(const std::string& field, const std::string& rule)>;

// Fills head_dim (hidden/heads) and ffn_hidden (4·hidden for gelu/relu) when unset, then checks:
// hidden divisible by heads when head_dim is implied, heads divisible by kv_heads, ffn_hidden
// given for swiglu, first_dense_layers < layers, max_positions given for learned positions
// (context_tokens at most it, and it where unset), and at most kMaxParameters parameters in all
// (reported under `layers`). Throws InputError listing every violation.
void complete_and_check_model(ModelSpec& m, const FieldDiagnostic& at);

}  // namespace meshplan
