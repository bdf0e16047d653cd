// The command line that launches a serving layout on each engine. Argument names as the engines
// define them: vLLM `vllm serve` engine arguments, SGLang `sglang.launch_server` server arguments,
// TensorRT-LLM `trtllm-serve` options and LLM API keys; tests/serving/engine_flag_tables_test.cc
// checks every option against each engine's table at a pinned commit (tests/data/engines/).
#pragma once

#include <string>

#include "serving/serving_memory.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

// A pool's part in prefill/decode disaggregation (whole: the layout serves whole requests).
enum class PoolRole { whole, prefill, decode };

// One line per engine, the model name as the model argument (`moe`: the model has experts).
// Where an engine cannot run the layout, its line says why instead. `role`: a disaggregated
// layout's pools, SGLang's servers in their pool's --disaggregation-mode, vLLM's with the NIXL KV
// connector, TensorRT-LLM's with a KV cache transceiver.
// `max_sequence_tokens` > 0: the longest request (isl + osl) the server is to take, passed as
// the engine's maximum length (vLLM --max-model-len, SGLang --context-length, TensorRT-LLM
// --max_seq_len) in place of the model's whole context window, which vLLM refuses to start with
// where the KV cache cannot hold one sequence of it (vllm/v1/core/kv_cache_utils.py
// _check_enough_kv_cache_memory: "Try increasing `gpu_memory_utilization` or decreasing
// `max_model_len`").
std::string vllm_command(const std::string& model, bool moe, const ServingLayout& l,
                         const ServingOptions& o, int64_t max_sequence_tokens,
                         PoolRole role = PoolRole::whole);
std::string sglang_command(const std::string& model, const ServingLayout& l,
                           const ServingOptions& o, int64_t max_sequence_tokens,
                           PoolRole role = PoolRole::whole);
std::string trtllm_command(const std::string& model, const ServingLayout& l,
                           const ServingOptions& o, int64_t max_sequence_tokens,
                           PoolRole role = PoolRole::whole);
// TensorRT-LLM's disaggregated server in front of `prefill_servers` context and `decode_servers`
// generation servers (trtllm_command's pool lines): its configuration written to disagg.yaml,
// each server's url a placeholder host (prefill-0, …, decode-0, …) on trtllm-serve's default port.
std::string trtllm_disaggregated_router(int64_t prefill_servers, int64_t decode_servers);

}  // namespace meshplan::serving
