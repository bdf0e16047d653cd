// Defaults that depend on other fields, and the cross-field rules of a model.
#pragma once

#include <functional>
#include <string>

#include "core/diagnostic.h"
#include "core/model_spec.h"

namespace meshplan {

// Builds a diagnostic for `field` breaking `rule` (the caller knows where fields live).
using FieldDiagnostic =
    std::function<Diagnostic(const std::string& field, const std::string& rule)>;

// Fills head_dim (hidden/heads) and ffn_hidden (4·hidden for gelu/relu) when unset, then checks:
// hidden divisible by heads when head_dim is implied, heads divisible by kv_heads, ffn_hidden
// given for swiglu, first_dense_layers < layers, max_positions given for learned positions.
// Throws InputError listing every violation.
void complete_and_check_model(ModelSpec& m, const FieldDiagnostic& at);

}  // namespace meshplan
