#include "serving/engine_flags.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "serving/engine_preset.h"

namespace meshplan::serving {
namespace {

// The options' memory fraction when given, else engine `e`'s default.
double fraction_for(Engine e, const ServingOptions& o) {
  return o.memory_fraction > 0 ? o.memory_fraction : engine_preset(e).memory_fraction;
}

// vLLM's and SGLang's --quantization for the weight format ("" for BF16): fp8, awq for INT4
// (AWQ's group-of-128 layout), mxfp4.
std::string quantization_flag(WeightFormat w) {
  switch (w) {
    case WeightFormat::bf16:
      return "";
    case WeightFormat::fp8:
      return " --quantization fp8";
    case WeightFormat::int4:
      return " --quantization awq";
    case WeightFormat::mxfp4:
      return " --quantization mxfp4";
  }
  return "";
}

}  // namespace

// vLLM `vllm serve` (EngineArgs.add_cli_args; the pinned table
// tests/data/engines/vllm-99d7eb5d6a51-engine-args.txt): --tensor-parallel-size,
// --pipeline-parallel-size, --data-parallel-size, --enable-expert-parallel, --max-num-seqs,
// --max-num-batched-tokens, --gpu-memory-utilization, --block-size, --max-model-len,
// --kv-cache-dtype, --quantization. Attention-DP is vLLM's data parallelism over the tp ranks
// (docs: "Data Parallel Deployment", DP attention + EP for MoE). vLLM's MoE layers span every GPU
// of an engine, its data-parallel ranks included (FusedMoEParallelConfig.make: the experts split tp
// × dp ways under --enable-expert-parallel, else tensor-parallel over as many), so the replicas of
// an MoE model are separate servers and ep is 1 or tp (engine_splits_experts); a dense model's
// replicas are its data-parallel ranks. --quantization takes any string there; "mxfp4" names vLLM's
// Mxfp4Config (vllm/model_executor/layers/quantization/mxfp4.py, "MXFP4 quantization method for
// GPT-OSS model"), what it reads from a gpt-oss checkpoint.
std::string vllm_command(const std::string& model, bool moe, const ServingLayout& l,
                         const ServingOptions& o, int64_t max_sequence_tokens, PoolRole role) {
  if (!engine_splits_experts(Engine::vllm, l.tp, l.ep))
    return fmt::format(
        "vllm: no command for ep {} in an engine of tp {}: its --enable-expert-parallel spreads "
        "the experts over every GPU of the engine (ep 1 or {})",
        l.ep, l.tp, l.tp);
  const EnginePreset& e = engine_preset(Engine::vllm);
  const int64_t servers = moe ? l.replicas : 1;
  std::string s = fmt::format(
      "vllm serve {} --tensor-parallel-size {} --pipeline-parallel-size {} --data-parallel-size "
      "{}{} --max-num-seqs {} --max-num-batched-tokens {} --gpu-memory-utilization {:.2f} "
      "--block-size {}",
      model, l.dense_tp(), l.pp, l.replicas / servers * l.data_ranks(),
      l.ep > 1 ? " --enable-expert-parallel" : "", l.max_batch, step_tokens_of(Engine::vllm, o),
      fraction_for(Engine::vllm, o), e.block_tokens);
  if (max_sequence_tokens > 0) s += fmt::format(" --max-model-len {}", max_sequence_tokens);
  // Prefill/decode disaggregation: the KV moves by the NIXL connector, both pools' instances in
  // the role its documentation launches them with (docs/features/nixl_connector_usage.md;
  // KVTransferConfig, vllm/config/kv_transfer.py; the connector reads no role), a proxy in front.
  if (role != PoolRole::whole)
    s += R"( --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}')";
  if (o.kv == KvFormat::fp8) s += " --kv-cache-dtype fp8";
  s += quantization_flag(o.weights);
  if (servers > 1) s += fmt::format("   # x{} servers", servers);
  return s;
}

// SGLang (its server-arguments documentation at b36e8e198b71, the table
// tests/data/engines/sglang-b36e8e198b71-server-args.txt): --tp-size, --pp-size, --dp-size,
// --ep-size, --max-running-requests, --chunked-prefill-size, --mem-fraction-static,
// --page-size, --context-length, --kv-cache-dtype, --quantization (mxfp4 among its choices);
// attention-DP: --enable-dp-attention with --dp-size equal to the tp size (per replica).
std::string sglang_command(const std::string& model, const ServingLayout& l,
                           const ServingOptions& o, int64_t max_sequence_tokens, PoolRole role) {
  const EnginePreset& e = engine_preset(Engine::sglang);
  std::string s = fmt::format(
      "python -m sglang.launch_server --model-path {} --tp-size {} --pp-size {} --dp-size {} "
      "--ep-size {} --max-running-requests {} --chunked-prefill-size {} --mem-fraction-static "
      "{:.2f} --page-size {}",
      model, l.tp, l.pp, l.attention_dp ? l.tp : l.replicas, l.ep, l.max_batch,
      step_tokens_of(Engine::sglang, o), fraction_for(Engine::sglang, o), e.block_tokens);
  if (max_sequence_tokens > 0) s += fmt::format(" --context-length {}", max_sequence_tokens);
  if (l.attention_dp) s += " --enable-dp-attention";
  // Prefill/decode disaggregation: each pool's servers in their mode (the KV moves by the
  // default transfer backend; sglang_router's --pd-disaggregation fronts the two pools).
  if (role != PoolRole::whole)
    s += role == PoolRole::prefill ? " --disaggregation-mode prefill"
                                   : " --disaggregation-mode decode";
  if (o.mixed_chunk) s += " --enable-mixed-chunk";
  if (o.max_prefill_tokens > 0) s += fmt::format(" --max-prefill-tokens {}", o.max_prefill_tokens);
  if (o.kv == KvFormat::fp8) s += " --kv-cache-dtype fp8_e4m3";
  s += quantization_flag(o.weights);
  if (l.attention_dp && l.replicas > 1) s += fmt::format("   # x{} servers", l.replicas);
  return s;
}

// TensorRT-LLM trtllm-serve (tensorrt_llm/commands/serve.py at 4c05a74891e4, the options table
// tests/data/engines/trtllm-4c05a74891e4-serve-options.txt): --tp_size, --pp_size, --ep_size,
// --max_batch_size, --max_num_tokens, --max_seq_len, --kv_cache_free_gpu_memory_fraction,
// --enable_chunked_prefill; one server per replica. FP8 weights and KV come from the
// (ModelOpt-quantized) checkpoint, MXFP4 experts from gpt-oss's own. Attention-DP and the capacity
// scheduler policy have no flag: they are LLM API options (tensorrt_llm/llmapi/llm_args.py
// enable_attention_dp, scheduler_config.capacity_scheduler_policy), which --extra_llm_api_options
// reads from a YAML file; the line writes that file first (a YAML flow mapping), so it runs as
// printed. Prefill/decode disaggregation (examples/disaggregated/README.md): both pools' servers
// carry a cache_transceiver_config (empty: every field of it has a default in each version read,
// whose fields differ: max_num_tokens at fcd3f316, backend and max_tokens_in_buffer later), the
// context servers also disable_overlap_scheduler ("not yet supported in disaggregated context
// server architectures"); `trtllm-serve disaggregated -c` fronts them
// (trtllm_disaggregated_router).
namespace {

// The LLM API options the plan needs beyond the flags, as one YAML flow mapping ("" for none).
std::string extra_llm_api_options(const ServingLayout& l, const ServingOptions& o, PoolRole role) {
  std::vector<std::string> keys;
  if (l.attention_dp) keys.emplace_back("enable_attention_dp: true");
  if (o.max_utilization)
    keys.emplace_back("scheduler_config: {capacity_scheduler_policy: MAX_UTILIZATION}");
  if (role == PoolRole::prefill) keys.emplace_back("disable_overlap_scheduler: true");
  if (role != PoolRole::whole) keys.emplace_back("cache_transceiver_config: {}");
  return keys.empty() ? "" : fmt::format("{{{}}}", fmt::join(keys, ", "));
}

// The YAML file a pool's servers read their LLM API options from.
const char* extra_options_file(PoolRole role) {
  return role == PoolRole::prefill  ? "ctx.yaml"
         : role == PoolRole::decode ? "gen.yaml"
                                    : "extra.yaml";
}

}  // namespace

std::string trtllm_command(const std::string& model, const ServingLayout& l,
                           const ServingOptions& o, int64_t max_sequence_tokens, PoolRole role) {
  const std::string extra = extra_llm_api_options(l, o, role);
  const char* file = extra_options_file(role);
  return fmt::format(
      "{}trtllm-serve {} --tp_size {} --pp_size {} --ep_size {} --max_batch_size {} "
      "--max_num_tokens {}{} --kv_cache_free_gpu_memory_fraction {:.2f}{}{}   # x{} servers",
      extra.empty() ? "" : fmt::format("echo '{}' > {} && ", extra, file), model, l.tp, l.pp, l.ep,
      l.max_batch, step_tokens_of(Engine::trtllm, o),
      max_sequence_tokens > 0 ? fmt::format(" --max_seq_len {}", max_sequence_tokens) : "",
      fraction_for(Engine::trtllm, o), o.chunked_context ? " --enable_chunked_prefill" : "",
      extra.empty() ? "" : fmt::format(" --extra_llm_api_options {}", file), l.replicas);
}

// The disaggregated server's configuration (tensorrt_llm/llmapi/disagg_utils.py
// extract_disagg_cfg and extract_ctx_gen_cfgs: hostname, port, context_servers and
// generation_servers with num_instances and one "host:port" url per instance).
std::string trtllm_disaggregated_router(int64_t prefill_servers, int64_t decode_servers) {
  auto urls = [](const char* pool, int64_t n) {
    std::vector<std::string> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(fmt::format("\"{}-{}:8000\"", pool, i));
    return fmt::format("{}", fmt::join(out, ", "));
  };
  return fmt::format(
      "echo '{{hostname: localhost, port: 8000, context_servers: {{num_instances: {}, urls: "
      "[{}]}}, "
      "generation_servers: {{num_instances: {}, urls: [{}]}}}}' > disagg.yaml && trtllm-serve "
      "disaggregated -c disagg.yaml   # urls: each server's host:port",
      prefill_servers, urls("prefill", prefill_servers), decode_servers,
      urls("decode", decode_servers));
}

}  // namespace meshplan::serving
