// The command line that launches a serving layout on each engine. Argument names as in the
// engines' documentation: vLLM `vllm serve` engine arguments, SGLang `sglang.launch_server`
// server arguments, TensorRT-LLM `trtllm-serve` options (see engine_flags.cc).
#pragma once

#include <string>

#include "serving/serving_memory.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

// One line per engine, the model name as the model argument (`moe`: the model has experts).
// Where an engine cannot run the layout, its line says why instead.
std::string vllm_command(const std::string& model, bool moe, const ServingLayout& l,
                         const ServingOptions& o);
std::string sglang_command(const std::string& model, const ServingLayout& l,
                           const ServingOptions& o);
std::string trtllm_command(const std::string& model, const ServingLayout& l,
                           const ServingOptions& o);

}  // namespace meshplan::serving
