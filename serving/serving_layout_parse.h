// The --layout string of `meshplan serve`: "tp=4,pp=1,ep=1,replicas=2,max_batch=64", every
// key optional (tp, pp, ep, replicas default 1; max_batch 0: the engine's default;
// attention_dp 0 or 1, default 0), no key twice, values positive integers (max_batch ≥ 0).
#pragma once

#include <string>

#include "core/result.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

// Errors: one diagnostic per bad item, naming the field, the value and the rule, with the
// column where the item starts (file "--layout").
Result<ServingLayout> parse_serving_layout(const std::string& text);

}  // namespace meshplan::serving
