// A model mapping read from YAML outside a model file: the validation files' `models:` entries
// (checks/validation.cc), which hold the keys of models/*.yaml without `name`.
#pragma once

#include <cstdint>
#include <string>

#include "core/model_spec.h"
#include "core/yaml_node.h"

namespace meshplan {

// The model `root` describes with every key of models/*.yaml but `name` (unknown keys are
// errors), named `name`; learned positions without max_positions take `default_max_positions`
// (0: required). Throws InputError as the model file reader does.
ModelSpec read_model_mapping(const YamlNode& root, const std::string& name,
                             int64_t default_max_positions);

}  // namespace meshplan
