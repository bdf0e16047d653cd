#include "serving/engine_preset.h"

#include <algorithm>
#include <cmath>

namespace meshplan::serving {
namespace {

// vLLM (docs.vllm.ai, engine arguments; vllm/engine/arg_utils.py): --gpu-memory-utilization
// 0.9 of total GPU memory for weights, activations and KV cache; --block-size 16; on GPUs with
// at least 70 GiB, --max-num-seqs 1024 and --max-num-batched-tokens 8192 for the OpenAI server
// (chunked prefill on by default in the V1 engine).
// SGLang (docs.sglang.ai, server arguments): --mem-fraction-static is the share of memory for
// weights plus the KV pool (0.88 is what server_args picks for 80 GB-class GPUs); --page-size
// 1; --chunked-prefill-size 8192; --max-running-requests capped by the pool (1024 here).
// TensorRT-LLM (nvidia.github.io/TensorRT-LLM, "How to change KV cache behavior"):
// free_gpu_memory_fraction 0.9 of the memory free after weights and activations;
// tokens_per_block 32; trtllm-serve --max_batch_size 2048, --max_num_tokens 8192.
// Host overhead per step: vLLM's own profile of v0.5.3 put scheduling and input preparation at
// 29% of a Llama-3-8B H100 step (blog "vLLM v0.6.0: 2.7x throughput improvement", 2024-09-05),
// which the V1 engine's multi-step/async scheduling hides mostly; we take 1 ms for vLLM and
// SGLang (Python schedulers) and 0.5 ms for TensorRT-LLM's C++ executor. Per sequence in the
// step, TensorRT-LLM: 10 µs, fitted to the TensorRT-LLM rows of the development set
// (tests/data/serving_runs.yaml; 0, 5, 10 and 20 µs tried: offline throughput mean |error|
// 14.0%, 9.7%, 10.7%, 13.9%, online throughput 22.6%, 19.5%, 16.8%, 14.1%, online TPOT 22.3%,
// 21.0%, 20.9%, 21.9%) once the GEMMs were priced at their measured speed; the form follows
// vLLM's profile above (scheduling and input preparation grow with the batch). vLLM (0.12) and
// SGLang: fitted the same way to their AIConfigurator rows (tests/data/
// serving_runs_aiconfigurator.yaml, TPOT mean |error| over the engine's rows). Refitted on
// 2026-11-27 once each kernel paid its fixed cost on top of its work (step_time.h
// kKernelLatencyS), which took part of what these had absorbed: vLLM, 240 rows, 0, 10, 20, 30,
// 40, 50 µs: 16.7%, 16.3%, 16.0%, 15.9%, 16.2%, 16.9% — 30 µs (50 µs before, 17.2%); SGLang,
// 199 rows, 0, 10, 20, 30 µs: 20.6%, 20.1%, 20.9%, 23.6% — 10 µs (15 before, 18.9%; 0.5.1's
// Qwen3-32B rows come out further over). TensorRT-LLM's 595 rows would take 0 µs (14.6%, 10 µs
// 15.0%), but the development set's offline throughput needs its 10 µs (mean |error| 9.4%
// against 13.0% at 0), so it stays. Checked on rows it was not fitted to, TensorRT-LLM's
// perf-overview tables in full (tests/data/serving_runs_trtllm_perf_overview.yaml, 2026-11-27,
// with chunked context): 0, 2.5, 5, 7.5, 10 µs give offline throughput 19.8%, 16.3%, 13.6%,
// 12.8%, 12.9% (240 rows), online throughput 13.2%, 12.9%, 12.6%, 12.3%, 12.0% and online TPOT
// 15.2%, 14.9%, 14.6%, 14.3%, 14.0% (59 rows); AIConfigurator's TensorRT-LLM TPOT 12.7-12.6%.
// Rechecked 2026-12-01 on the model of that day, 0, 2.5, 5, 7.5, 10 µs: development-set
// throughput 15.4%, 13.2%, 11.8%, 11.4%, 11.4% (offline 12.0%, 9.3%, 7.9%, 8.4%, 9.0%; online
// 19.7%, 18.2%, 16.8%, 15.5%, 14.5%), online TPOT 17.1%, 16.4%, 16.1%, 15.9%, 16.1%, the
// perf-overview file's throughput 16.7%, 13.9%, 11.9%, 11.3%, 11.4%: the offline rows (Llama 3.1
// 8B at ~2,000 sequences a step) want less, the online ones more; 10 µs stays.
// Chunked prefill: on by default in vLLM V1 and SGLang (--chunked-prefill-size 8192); off in
// TensorRT-LLM (LLM API enable_chunked_prefill = False, tensorrt_llm/llmapi/llm_args.py; the
// C++ executor's enable_chunked_context and the Triton backend's likewise default to false), so
// its scheduler runs each prompt whole in one step, within max_num_tokens.
// Sliding-window K/V: vLLM's V1 hybrid KV cache manager (since v0.9.2; on by default on CUDA
// without a KV connector) frees a sliding-window layer's blocks behind the window
// (vllm/v1/core/single_type_kv_cache_manager.py SlidingWindowManager: cdiv(W − 1, block) + 1
// blocks in steady decode) from one block pool shared with the full-attention layers
// (kv_cache_utils.py); a model whose every layer slides (Mistral 7B v0.1) since PR #14097. Its
// chunked local attention (Llama 4) is left out of it by default (PR #21761,
// VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0), so those layers keep every token here.
// SGLang's hybrid SWA pools serve an allow-list (Llama 4, gpt-oss), never Gemma 2/3, in two
// static pools (swa_full_tokens_ratio 0.8) this model does not price: every layer keeps every
// token. TensorRT-LLM: KvCacheConfig.max_attention_window defaults to max_seq_len on every layer
// (windows only when set by hand): every token.
// Mixed steps: vLLM V1 schedules decodes and prompt chunks in one token budget
// (vllm/v1/core/sched/scheduler.py), TensorRT-LLM's in-flight batching runs context and
// generation requests in one iteration; SGLang runs a prefill batch whenever it can form one and
// decodes only when it cannot (Scheduler.get_next_batch_to_run: "Run prefill first if
// possible"), mixing decodes into prefill batches only with --enable-mixed-chunk (ServerArgs
// enable_mixed_chunk = False; python/sglang/srt/server_args.py at 469c63e5). Its PrefillAdder
// adds whole prompts while their tokens stay within --max-prefill-tokens (16384; less the
// decodes a mixed step carries), the first prompt always, and chunks a prompt only past the
// chunked-prefill size. It also admits a request only while its prompt and answer (clipped at
// 4096 tokens) fit under the free cache less every running sequence's answer left × a ratio
// that starts at 0.7 and decays to 0.098 over 600 decode steps (PrefillAdder.add_one_req and
// rem_total_tokens, Scheduler.update_running_batch; request_replay.h AnswerReserve). With the
// radix cache on (its default, and AIConfigurator's launches) requests with ignore_eos take this
// path too.
// Prefix caching (a shared prompt prefix, kv_cache.h PrefixReuse): vLLM caches whole blocks only
// (a block's hash covers its tokens), SGLang pages of one token; TensorRT-LLM's
// enable_partial_reuse (default True) also reuses the tokens of a partly matched block.
// Admission: TensorRT-LLM's capacity scheduler defaults to GUARANTEED_NO_EVICT
// (CapacitySchedulerPolicy, tensorrt_llm/llmapi/llm_args.py), which admits a request only when
// its whole isl + osl fits; its MAX_UTILIZATION ("pack as many requests as possible at each
// iteration ... at the risk of having to pause requests if the KV cache size limit is reached",
// docs/source/performance/performance-tuning-guide/useful-runtime-flags.md) allocates as vLLM
// does below and, where a started request cannot get its blocks, pauses started requests from
// the end of the list, freeing their blocks (cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp
// MaxUtilizationScheduler at 02a10fe: schedulingRemoveSequence), as vLLM preempts the request
// scheduled last (ServingOptions::max_utilization); vLLM V1 allocates blocks for
// the tokens each step schedules (KVCacheManager.allocate_slots) and preempts the running request
// scheduled last when none are left (vllm/v1/core/sched/scheduler.py, recompute); SGLang allocates
// per token and retracts decode requests when its pool runs out (Scheduler.update_running_batch →
// retract_decode). Front end (the part of TTFT outside the engine: tokenizer, request routing,
// detokenizer, the first token's way back): TensorRT-LLM 8 ms, fitted to the development set's rows
// of its online serving table (v0.14 through Triton's tensorrtllm_backend, whose ensemble tokenizes
// and detokenizes in Python models; tests/data/serving_runs.yaml trtol-*, 13 rows): 0, 3, 5, 6, 7,
// 8, 10, 12 ms give TTFT mean |error| 22.8%, 19.6%, 17.5%, 16.4%, 15.9%, 15.7%, 16.0%, 16.2%.
// The table's low-load rows show a constant: on Llama 3.1 8B (one GPU, QPS 2-4, H100 and H200,
// prompts of 202 and 467 tokens) the measured TTFT exceeds the replay's by 5.6-8.4 ms whatever
// the prompt length, where the measured ITL is within 1 ms of the model's. Checked on the
// table's 59 rows it was not fitted to (tests/data/serving_runs_trtllm_perf_overview.yaml): TTFT
// 30.4% → 12.7%. trtllm-serve's OpenAI server (AIConfigurator's TensorRT-LLM rows) is taken
// alike, unmeasured. vLLM and SGLang: 0, not priced: no published measurement isolates their API
// servers' share, and AIConfigurator's rows leave 4-400 ms of TTFT unexplained, by campaign, too
// spread to fit; --front-end-latency sets it for any engine.
// Fused-MoE kernels (MoeGemmEfficiency): NVIDIA AIConfigurator's H200 kernel tables at 095f58a
// (aic-core/src/aiconfigurator_core/systems/data/h200_sxm/moe/{sglang/0.5.9,vllm/0.18.0,
// trtllm/1.2.0rc5}/moe_perf.parquet: SGLang's sglang_fused_moe_triton, vLLM's vllm_fused_moe,
// TensorRT-LLM's CUTLASS kernel in its PyTorch flow), the rows of tests/data/
// aiconfigurator_moe_kernels.csv; each point the median over the compute-bound rows of its width
// of the roofline's compute time over the measured time, at most 1
// (tests/serving/moe_gemm_efficiency_test.cc). Curves at expert widths 512, 1,024, …, 16,384 on a
// rank, BF16 / per-tensor FP8 / block FP8. SGLang's table has no per-tensor FP8: the same Triton
// kernel without the scales' loads, the block curve stands for it. MXFP4 (w4a16_mxfp4, timed
// against the BF16 rate): the tables' gpt-oss shapes only (experts 2,880 wide, on ranks of
// tp 1 to 32 in TensorRT-LLM's, tp 1 in vLLM's), so a width beyond them takes the nearest
// measured point: vLLM's one point (2,880) is its whole curve, TensorRT-LLM's widest (2^11)
// stands for wider ones; SGLang's MXFP4 MoE on Hopper runs the same Triton kernels as vLLM's
// (triton_kernels matmul_ogs), whose curve stands for it, unmeasured. Not fitted to any serving
// run.
constexpr EnginePreset kEngines[] = {
    {Engine::vllm,
     "vllm",
     BudgetRule::fraction_of_total,
     0.90,
     16,
     1024,
     8192,
     {1.0e-3, 30e-6},
     true,
     true,
     false,
     true,
     0,
     false,
     false,
     0,
     {{{0.562, 0.640, 0.698, 0.797, 0.761, 0.750}},
      {{0.455, 0.592, 0.718, 0.866, 0.915, 0.870}},
      {{0.304, 0.375, 0.419, 0.468, 0.473, 0.484}},
      {{0.714, 0.714, 0.714, 0.714, 0.714, 0.714}}},
     "vLLM engine arguments (--gpu-memory-utilization 0.9, --block-size 16)"},
    {Engine::sglang,
     "sglang",
     BudgetRule::static_fraction,
     0.88,
     1,
     1024,
     8192,
     {1.0e-3, 10e-6},
     true,
     false,
     false,
     false,
     16384,
     true,
     false,
     0,
     {{{0.353, 0.377, 0.367, 0.814, 0.539, 0.525}},
      {{0.433, 0.595, 0.712, 0.825, 0.851, 0.883}},
      {{0.433, 0.595, 0.712, 0.825, 0.851, 0.883}},
      {{0.714, 0.714, 0.714, 0.714, 0.714, 0.714}}},
     "SGLang server arguments (--mem-fraction-static, --page-size 1)"},
    {Engine::trtllm,
     "trtllm",
     BudgetRule::fraction_of_free,
     0.90,
     32,
     2048,
     8192,
     {0.5e-3, 10e-6},
     false,
     false,
     true,
     true,
     0,
     false,
     true,
     8e-3,
     {{{0.565, 0.823, 0.984, 1, 1, 1}},
      {{0.363, 0.571, 0.811, 1, 1, 1}},
      {{0.193, 0.300, 0.432, 0.563, 0.622, 0.653}},
      {{0.372, 0.524, 0.584, 0.584, 0.584, 0.584}}},
     "TensorRT-LLM KvCacheConfig (free_gpu_memory_fraction 0.9, tokens_per_block 32)"},
};

}  // namespace

const EnginePreset& engine_preset(Engine e) {
  for (const EnginePreset& p : kEngines)
    if (p.engine == e) return p;
  return kEngines[0];
}

int64_t step_tokens(const ServingOptions& options) {
  return step_tokens_of(options.engine, options);
}

int64_t step_tokens_of(Engine e, const ServingOptions& options) {
  return options.max_step_tokens > 0 ? options.max_step_tokens : engine_preset(e).max_step_tokens;
}

// vLLM's SchedulerConfig._verify_args (vllm/config/scheduler.py) raises "max_num_batched_tokens
// (…) must be greater than or equal to max_num_seqs (…)": every sequence a step carries takes
// at least one of its tokens. SGLang and TensorRT-LLM start with either larger.
bool reserves_whole_request(const ServingOptions& options) {
  return engine_preset(options.engine).reserves_whole_request && !options.max_utilization;
}

bool batch_within_step_tokens(Engine e) { return e == Engine::vllm; }

bool engine_splits_experts(Engine e, int64_t tp, int64_t ep) {
  return e != Engine::vllm || ep == 1 || ep == tp;
}

int64_t default_max_batch(const ServingOptions& options) {
  const int64_t cap = engine_preset(options.engine).max_batch;
  return batch_within_step_tokens(options.engine) ? std::min(cap, step_tokens(options)) : cap;
}

int64_t prefill_tokens(const ServingOptions& options) {
  return options.max_prefill_tokens > 0 ? options.max_prefill_tokens
                                        : engine_preset(options.engine).max_prefill_tokens;
}

double MoeWidthCurve::at(double width) const {
  const double x = std::log2(width) - kFirstLog2;
  if (!(x > 0)) return share.front();
  const size_t last = share.size() - 1;
  if (x >= static_cast<double>(last)) return share.back();
  const size_t i = static_cast<size_t>(x);
  const double f = x - static_cast<double>(i);
  return share[i] + f * (share[i + 1] - share[i]);
}

double moe_gemm_efficiency(const ServingOptions& options, const ModelSpec& model,
                           double expert_width) {
  const MoeGemmEfficiency& e = engine_preset(options.engine).moe_gemm;
  switch (options.weights) {
    case WeightFormat::bf16:
      return e.bf16.at(expert_width);
    case WeightFormat::fp8:
      return (model.fp8_weight_block ? e.fp8_block : e.fp8).at(expert_width);
    case WeightFormat::int4:
      return 1;
    case WeightFormat::mxfp4:
      return e.mxfp4.at(expert_width);
  }
  return 1;
}

double front_end_s(const ServingOptions& options) {
  return options.front_end_s ? *options.front_end_s : engine_preset(options.engine).front_end_s;
}

}  // namespace meshplan::serving
