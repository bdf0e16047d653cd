// What a serving plan is asked about: the weight and KV-cache formats, the inference engine,
// the layout of one model replica and the workload (prompt and answer lengths, load).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/layer_geometry.h"
#include "serving/request_trace.h"

namespace meshplan::serving {

enum class WeightFormat { bf16, fp8, int4, mxfp4 };
enum class KvFormat { bf16, fp8 };
enum class Engine { vllm, sglang, trtllm };

const char* to_string(WeightFormat f);
const char* to_string(KvFormat f);
const char* to_string(Engine e);

// Bytes one parameter takes in `f`. INT4 carries one FP16 scale per group of 128 weights
// (AWQ/GPTQ's default group_size=128): 0.5 + 2/128 bytes. MXFP4 (OCP Microscaling Formats v1.0:
// 4-bit E2M1 elements in blocks of 32 sharing one 8-bit E8M0 scale): 0.5 + 1/32 bytes, which
// only the routed experts take (bytes_per_weight below).
double bytes_per_weight(WeightFormat f);
// Bytes one weight of `map` takes when a model is served in `f`: the MoE router stays BF16 in
// every format (LinearMap::stays_bf16); under MXFP4 every map but the routed experts does too, as
// the gpt-oss checkpoints hold them (config.json quantization_config: quant_method mxfp4,
// modules_to_not_convert the attention, router, embedding and LM head). Biases are BF16 in all.
double bytes_per_weight(WeightFormat f, const LinearMap& map);
double bytes_per_kv_element(KvFormat f);

// One model replica: tp × pp GPUs; ep (dividing tp) splits the routed experts of MoE layers
// across that many of the TP ranks (TensorRT-LLM's moe_ep_size; the rest is moe_tp_size).
// `replicas` copies serve independently; `max_batch` caps the sequences a replica runs at
// once (0: the engine's default, see engine_preset.h).
// Attention data parallelism (TensorRT-LLM enable_attention_dp, SGLang --enable-dp-attention):
// the tp ranks run attention, the dense layers and the LM head as tp data-parallel copies, each
// on its own sequences with its own KV cache; only the routed experts stay split (tp/ep ways,
// over ep ranks), fed by an all-to-all.
// Disaggregated prefill (prefill_replicas > 0): prompts run on prefill_replicas workers of
// prefill_tp GPUs each (pp 1, experts split min(ep, prefill_tp) ways), and the replicas above
// only decode (serving/disaggregated_replay.h).
struct ServingLayout {
  int64_t tp = 1, pp = 1, ep = 1, replicas = 1;
  int64_t max_batch = 0;
  bool attention_dp = false;
  int64_t prefill_tp = 0, prefill_replicas = 0;
  bool disaggregated() const { return prefill_replicas > 0; }
  // The layout of one prefill worker (REQUIRES: disaggregated()).
  ServingLayout prefill_worker() const;
  // Tensor-parallel degree of everything but the routed experts.
  int64_t dense_tp() const { return attention_dp ? 1 : tp; }
  // Ranks holding distinct sequences (and KV) inside one replica.
  int64_t data_ranks() const { return attention_dp ? tp : 1; }
  int64_t gpus() const { return tp * pp * replicas + prefill_tp * prefill_replicas; }
  int64_t replica_gpus() const { return tp * pp; }
};

// "tp4 pp1 ep1 x2 b256" (disaggregated: "… | prefill tp8 x1"): the short form used in tables.
std::string short_text(const ServingLayout& l);
// "tp=4,pp=1,ep=1,replicas=2,max_batch=256": what --layout accepts.
std::string layout_text(const ServingLayout& l);

enum class LoadKind {
  offline,       // every request waiting at time 0 (trtllm-bench throughput, vLLM offline)
  concurrency,   // closed loop: a new request arrives whenever one finishes
  request_rate,  // open loop: Poisson arrivals at a mean rate
  trace          // open loop: the arrival times of a request trace (Workload::trace)
};

struct Workload {
  int64_t isl = 0, osl = 0;  // input (prompt) and output (answer) tokens per request
  // Spread of each request's lengths around isl and osl (0: every request exactly isl and osl;
  // else drawn as request_lengths.h says).
  double isl_stdev = 0, osl_stdev = 0;
  // Requests read from a trace (request_trace.h, --requests-file): each request's lengths, and
  // under LoadKind::trace its arrival; isl and osl are then the trace's means (memory, tables).
  std::shared_ptr<const std::vector<TracedRequest>> trace;
  std::string trace_file;    // where `trace` came from, for reports
  double trace_speedup = 1;  // its arrival times were divided by this (--trace-speedup)
  // Requests differ in length (a spread or a trace).
  bool lengths_vary() const { return isl_stdev > 0 || osl_stdev > 0 || trace != nullptr; }
  // Tokens every prompt begins with (a shared system prompt), cached once by the engine's
  // prefix cache (kv_cache.h PrefixReuse); below every request's prompt.
  int64_t prefix_tokens = 0;
  LoadKind load = LoadKind::offline;
  double concurrency = 0;         // requests in flight, all replicas (closed loop)
  double request_rate_per_s = 0;  // requests per second, all replicas (open loop)
  int64_t requests = 0;           // requests replayed; 0: the default in request_replay.h
  uint64_t seed = 1;              // Poisson arrivals: same seed, same arrivals
  // Closed loop: the first wave (every in-flight request arriving at once on an idle engine)
  // counts in the latency statistics, as a benchmark that drains its warm-up before it measures
  // does (AIPerf: "By default, AIPerf waits indefinitely for all warmup responses before starting
  // profiling", docs/tutorials/warmup.md). Off, the first wave is warm-up (request_replay.h).
  bool first_wave_measured = false;
  // An open loop: requests arrive on their own clock (a Poisson rate, a trace's arrivals), not
  // when others finish.
  bool open_loop() const { return load == LoadKind::request_rate || load == LoadKind::trace; }
};

// Latency objectives a request must meet (0: none). TTFT: time to first token; TPOT: time per
// output token after the first.
struct Slo {
  double ttft_s = 0, tpot_s = 0;
  // The objectives must also hold with every engine step and KV transfer this fraction longer
  // than predicted (--slo-margin; slower_steps.h): 0, as predicted only.
  double margin = 0;
  bool any() const { return ttft_s > 0 || tpot_s > 0; }
};

struct ServingOptions {
  WeightFormat weights = WeightFormat::bf16;
  KvFormat kv = KvFormat::bf16;
  Engine engine = Engine::vllm;
  Slo slo;
  // The engine's memory fraction for its budget rule (--gpu-memory-utilization,
  // --mem-fraction-static, kv_cache_free_gpu_mem_fraction); 0: the engine's default.
  double memory_fraction = 0;
  // Tokens one engine step may carry (vLLM --max-num-batched-tokens, SGLang
  // --chunked-prefill-size, TRT-LLM max_num_tokens); 0: the engine's default.
  int64_t max_step_tokens = 0;
  // SGLang's prefill batches: --enable-mixed-chunk runs the decodes inside the prefill steps
  // (off: its prefill-first default, engine_preset.h); --max-prefill-tokens caps the prompt
  // tokens of one prefill batch, past its first prompt (0: the engine's default, 16384).
  bool mixed_chunk = false;
  int64_t max_prefill_tokens = 0;
  // SGLang: search with and without --enable-mixed-chunk (`mixed_chunk` is then the setting of
  // the problem being evaluated).
  bool mixed_chunk_searched = false;
  // TensorRT-LLM: split prompts across steps beside the decodes (the C++ executor's
  // enable_chunked_context, the LLM API's enable_chunked_prefill; off by default there,
  // engine_preset.cc).
  bool chunked_context = false;
  // TensorRT-LLM's capacity scheduler MAX_UTILIZATION (--capacity-scheduler-policy; the LLM
  // API's scheduler_config.capacity_scheduler_policy): admits requests as far as the cache holds
  // the tokens they compute and pauses the latest when it runs out, as vLLM preempts
  // (engine_preset.h reserves_whole_request); off, its default GUARANTEED_NO_EVICT.
  bool max_utilization = false;
  // Search the weight format too: BF16, and FP8 where the GPU has FP8 tensor cores
  // (`weights` is then the format of the problem being evaluated).
  bool weights_auto = false;
  // The search also tries disaggregated prefill/decode splits of the GPUs (--disaggregated).
  bool search_disaggregated = false;
  // Seconds of each request's TTFT spent in the serving front end, outside the engine
  // (--front-end-latency); unset: the engine's default (engine_preset.h front_end_s).
  std::optional<double> front_end_s;
};

}  // namespace meshplan::serving
