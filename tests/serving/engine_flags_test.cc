// Engine command lines: each layout field lands on the engine's own argument.
#include "serving/engine_flags.h"

#include <doctest/doctest.h>

using namespace meshplan::serving;

namespace {

ServingLayout layout(int64_t tp, int64_t pp, int64_t ep, int64_t replicas, bool adp) {
  ServingLayout l{tp, pp, ep, replicas, 256, adp};
  return l;
}

}  // namespace

TEST_CASE(
    "engine flags: vLLM, SGLang and TensorRT-LLM for tp 4 × pp 2 × 2 replicas, FP8, requests of "
    "2500 tokens at most") {
  ServingOptions o;
  o.weights = WeightFormat::fp8;
  o.kv = KvFormat::fp8;
  const ServingLayout l = layout(4, 2, 1, 2, false);
  CHECK(vllm_command("m", false, l, o, 2500) ==
        "vllm serve m --tensor-parallel-size 4 --pipeline-parallel-size 2 --data-parallel-size 2 "
        "--max-num-seqs 256 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.90 "
        "--block-size 16 --max-model-len 2500 --kv-cache-dtype fp8 --quantization fp8");
  CHECK(sglang_command("m", l, o, 2500) ==
        "python -m sglang.launch_server --model-path m --tp-size 4 --pp-size 2 --dp-size 2 "
        "--ep-size 1 --max-running-requests 256 --chunked-prefill-size 8192 "
        "--mem-fraction-static 0.88 --page-size 1 --context-length 2500 --kv-cache-dtype fp8_e4m3 "
        "--quantization fp8");
  CHECK(trtllm_command("m", l, o, 2500) ==
        "trtllm-serve m --tp_size 4 --pp_size 2 --ep_size 1 --max_batch_size 256 "
        "--max_num_tokens 8192 --max_seq_len 2500 --kv_cache_free_gpu_memory_fraction 0.90   # x2 "
        "servers");
}

TEST_CASE("engine flags: MXFP4 weights are vLLM's and SGLang's --quantization mxfp4") {
  ServingOptions o;
  o.weights = WeightFormat::mxfp4;
  const ServingLayout l = layout(1, 1, 1, 1, false);
  CHECK(vllm_command("m", true, l, o, 0).ends_with(" --block-size 16 --quantization mxfp4"));
  CHECK(sglang_command("m", l, o, 0).ends_with(" --page-size 1 --quantization mxfp4"));
  // TensorRT-LLM reads the format from the checkpoint (gpt-oss's own).
  CHECK(trtllm_command("m", l, o, 0).find("mxfp4") == std::string::npos);
}

TEST_CASE("engine flags: attention-DP and expert parallelism, and a memory fraction override") {
  ServingOptions o;
  o.memory_fraction = 0.95;
  const ServingLayout l = layout(8, 1, 8, 1, true);
  CHECK(vllm_command("m", true, l, o, 0) ==
        "vllm serve m --tensor-parallel-size 1 --pipeline-parallel-size 1 --data-parallel-size 8 "
        "--enable-expert-parallel --max-num-seqs 256 --max-num-batched-tokens 8192 "
        "--gpu-memory-utilization 0.95 --block-size 16");
  CHECK(sglang_command("m", l, o, 0) ==
        "python -m sglang.launch_server --model-path m --tp-size 8 --pp-size 1 --dp-size 8 "
        "--ep-size 8 --max-running-requests 256 --chunked-prefill-size 8192 "
        "--mem-fraction-static 0.95 --page-size 1 --enable-dp-attention");
  CHECK(trtllm_command("m", l, o, 0).find("enable_attention_dp: true") != std::string::npos);
}

TEST_CASE("engine flags: SGLang's mixed chunk and prefill-token cap") {
  ServingOptions o;
  o.engine = Engine::sglang;
  o.mixed_chunk = true;
  o.max_prefill_tokens = 2524;
  CHECK(sglang_command("m", layout(1, 1, 1, 1, false), o, 0) ==
        "python -m sglang.launch_server --model-path m --tp-size 1 --pp-size 1 --dp-size 1 "
        "--ep-size 1 --max-running-requests 256 --chunked-prefill-size 8192 "
        "--mem-fraction-static 0.88 --page-size 1 --enable-mixed-chunk --max-prefill-tokens 2524");
}

TEST_CASE(
    "engine flags: TensorRT-LLM's chunked prefill as its flag, MAX_UTILIZATION in a YAML "
    "file the line writes") {
  ServingOptions o;
  o.engine = Engine::trtllm;
  o.chunked_context = true;
  o.max_utilization = true;
  CHECK(trtllm_command("m", layout(1, 1, 1, 1, false), o, 0) ==
        "echo '{scheduler_config: {capacity_scheduler_policy: MAX_UTILIZATION}}' > extra.yaml && "
        "trtllm-serve m --tp_size 1 --pp_size 1 --ep_size 1 --max_batch_size 256 "
        "--max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.90 --enable_chunked_prefill "
        "--extra_llm_api_options extra.yaml   # x1 servers");
  o.max_utilization = false;
  CHECK(trtllm_command("m", layout(1, 1, 1, 1, false), o, 0).rfind("trtllm-serve m ", 0) == 0);
}

TEST_CASE(
    "engine flags: TensorRT-LLM's disaggregated pools carry a KV cache transceiver, its context "
    "servers without the overlap scheduler, behind its disaggregated server") {
  ServingOptions o;
  o.engine = Engine::trtllm;
  const ServingLayout l = layout(2, 1, 1, 3, false);
  CHECK(trtllm_command("m", l, o, 0, PoolRole::prefill) ==
        "echo '{disable_overlap_scheduler: true, cache_transceiver_config: {}}' > ctx.yaml && "
        "trtllm-serve m --tp_size 2 --pp_size 1 --ep_size 1 --max_batch_size 256 "
        "--max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.90 "
        "--extra_llm_api_options ctx.yaml   # x3 servers");
  o.max_utilization = true;
  CHECK(trtllm_command("m", l, o, 0, PoolRole::decode) ==
        "echo '{scheduler_config: {capacity_scheduler_policy: MAX_UTILIZATION}, "
        "cache_transceiver_config: {}}' > gen.yaml && "
        "trtllm-serve m --tp_size 2 --pp_size 1 --ep_size 1 --max_batch_size 256 "
        "--max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.90 "
        "--extra_llm_api_options gen.yaml   # x3 servers");
  CHECK(trtllm_disaggregated_router(2, 1) ==
        "echo '{hostname: localhost, port: 8000, context_servers: {num_instances: 2, urls: "
        "[\"prefill-0:8000\", \"prefill-1:8000\"]}, generation_servers: {num_instances: 1, urls: "
        "[\"decode-0:8000\"]}}' > disagg.yaml && trtllm-serve disaggregated -c disagg.yaml   # "
        "urls: each server's host:port");
}

TEST_CASE("engine flags: a step-token cap is every engine's own flag") {
  ServingOptions o;
  o.max_step_tokens = 2560;
  const ServingLayout l = layout(1, 1, 1, 1, false);
  CHECK(vllm_command("m", false, l, o, 0).find("--max-num-batched-tokens 2560 ") !=
        std::string::npos);
  CHECK(sglang_command("m", l, o, 0).find("--chunked-prefill-size 2560 ") != std::string::npos);
  CHECK(trtllm_command("m", l, o, 0).find("--max_num_tokens 2560 ") != std::string::npos);
}

TEST_CASE("engine flags: vLLM runs an MoE model's replicas as servers, its experts split 1 or tp") {
  ServingOptions o;
  // Expert-parallel over the 8 GPUs of each of two replicas: two servers (a data-parallel size
  // of 2 would spread the experts over all 16).
  CHECK(vllm_command("m", true, layout(8, 1, 8, 2, false), o, 0) ==
        "vllm serve m --tensor-parallel-size 8 --pipeline-parallel-size 1 --data-parallel-size 1 "
        "--enable-expert-parallel --max-num-seqs 256 --max-num-batched-tokens 8192 "
        "--gpu-memory-utilization 0.90 --block-size 16   # x2 servers");
  // Attention-DP with the experts tensor-parallel over the 8 ranks (ep 1): no expert parallelism.
  CHECK(vllm_command("m", true, layout(8, 1, 1, 1, true), o, 0) ==
        "vllm serve m --tensor-parallel-size 1 --pipeline-parallel-size 1 --data-parallel-size 8 "
        "--max-num-seqs 256 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.90 "
        "--block-size 16");
  // A dense model's replicas are one server's data-parallel ranks.
  CHECK(vllm_command("m", false, layout(2, 1, 1, 4, false), o, 0).find("--data-parallel-size 4 ") !=
        std::string::npos);
  // Four expert groups in eight GPUs: vLLM has no such split.
  CHECK(vllm_command("m", true, layout(8, 1, 4, 1, false), o, 0) ==
        "vllm: no command for ep 4 in an engine of tp 8: its --enable-expert-parallel spreads the "
        "experts over every GPU of the engine (ep 1 or 8)");
}
