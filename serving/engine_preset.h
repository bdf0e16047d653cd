// The inference engines a plan can target: how each sizes its KV cache, its default batch
// limits, its KV page size and the per-step cost of its scheduler. One table row per engine
// (engine_preset.cc), each default with the document it comes from.
#pragma once

#include <array>
#include <cstdint>

#include "core/model_spec.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

enum class BudgetRule {
  fraction_of_total,  // KV = fraction · HBM − weights − activations − reserved (vLLM)
  static_fraction,    // KV = fraction · HBM − weights (SGLang: weights + KV pool share it)
  fraction_of_free    // KV = fraction · (HBM − weights − activations − reserved) (TRT-LLM)
};

// The engine's host work per step (scheduling, input preparation, sampling bookkeeping): a
// fixed part and a part per sequence the step carries (decodes and prompt chunks).
struct HostOverhead {
  double per_step_s = 0;
  double per_sequence_s = 0;
  double step_s(double sequences) const { return per_step_s + per_sequence_s * sequences; }
};

// The share of the dense GEMM rate (the profile's best GEMM efficiency × peak, GemmRoofline) that
// the engine's fused MoE kernel reaches on the routed experts where their math bounds them (a
// prompt step's thousands of tokens; decode-sized steps are bound by reading the experts'
// weights, which this leaves alone), by the experts' weight format (BF16, FP8 with one scale per
// tensor, FP8 with block scales: ModelSpec::fp8_weight_block, DeepSeek-V3, Qwen3-235B-FP8,
// MiniMax-M2.5) and by an expert's width on a rank (its intermediate size over the ranks that
// split it): narrow experts are thin GEMMs, which reach a smaller share. Measured: each figure
// the median over NVIDIA AIConfigurator's H200 kernel tables (tests/data/
// aiconfigurator_moe_kernels.csv) of the roofline's compute time over the measured one, on the
// compute-bound rows whose width rounds to that power of two (moe_gemm_efficiency_test derives
// every figure from that file), at most 1 (the profile's rate is sustained, the tables' burst).
struct MoeWidthCurve {
  // The share at widths 2^9, 2^10, …, 2^14 (512 to 16,384); linear in log2(width) between them,
  // the end figures beyond them.
  static constexpr int kFirstLog2 = 9;
  std::array<double, 6> share{1, 1, 1, 1, 1, 1};
  double at(double width) const;
};
struct MoeGemmEfficiency {
  MoeWidthCurve bf16, fp8, fp8_block;
  // MXFP4 experts widened to BF16 in the kernel (w4a16_mxfp4), as a share of the BF16 rate.
  MoeWidthCurve mxfp4;
};

struct EnginePreset {
  Engine engine;
  const char* name;
  BudgetRule budget;
  double memory_fraction;   // the engine's default for its budget rule
  int64_t block_tokens;     // tokens per KV page (block rounding)
  int64_t max_batch;        // default cap on sequences in one step
  int64_t max_step_tokens;  // default cap on tokens (prefill chunks + decodes) in one step
  HostOverhead host;        // host work per step: scheduling, input preparation, sampling
  bool chunked_prefill;     // splits prompts across steps by default
  // Frees the K/V a sliding-window layer no longer reads (ModelSpec::window, kind sliding), so
  // such a layer holds about the window per request (kv_cache.h request_cache_tokens).
  bool drops_sliding_window_kv;
  // Reserves a request's whole isl + osl of cache when it admits it (TensorRT-LLM's
  // GUARANTEED_NO_EVICT); false: allocates as sequences grow and preempts when the cache is
  // full (serving/request_replay.h).
  bool reserves_whole_request;
  // Runs decodes and prompt chunks in one step (vLLM V1, TensorRT-LLM's in-flight batching);
  // false: a step runs prompt chunks alone while any admitted prompt is left, and decodes wait
  // for a step without them (SGLang's default prefill-first scheduler).
  bool mixes_prefill_and_decode;
  // Prompt tokens one step takes in whole prompts past its first (0: no cap beyond
  // max_step_tokens): SGLang's --max-prefill-tokens.
  int64_t max_prefill_tokens;
  // Admits a request only while its answer fits beside the running sequences' answers left
  // (SGLang's PrefillAdder, ReplayLimits::reserves_answers).
  bool reserves_answers;
  // Its prefix cache reuses a partly matched block's tokens too (kv_cache.h PrefixReuse).
  bool reuses_partial_blocks;
  // Time each request spends in the serving front end, outside the engine, before its first
  // token reaches the client (tokenizer, request routing, detokenizer, streaming): added to TTFT
  // (request_replay.h add_front_end). 0: not priced.
  double front_end_s;
  MoeGemmEfficiency moe_gemm;
  const char* source;
};

const EnginePreset& engine_preset(Engine e);
// Tokens one step may carry: options.max_step_tokens, else the engine's default.
int64_t step_tokens(const ServingOptions& options);
// Engine `e`'s step-token cap under `options` (its flag in a launch command): their
// max_step_tokens when given, else `e`'s default.
int64_t step_tokens_of(Engine e, const ServingOptions& options);
// The engine's default cap on the sequences of one step, for vLLM at most the step's tokens
// (batch_within_step_tokens).
int64_t default_max_batch(const ServingOptions& options);
// Whether the engine reserves a request's whole isl + osl of cache at admission under `options`:
// the engine's rule (EnginePreset::reserves_whole_request), but not under TensorRT-LLM's
// MAX_UTILIZATION (ServingOptions::max_utilization).
bool reserves_whole_request(const ServingOptions& options);
// Whether the engine refuses a batch cap above the step's tokens (vLLM).
bool batch_within_step_tokens(Engine e);
// Whether engine `e` runs `ep` expert groups in an engine of `tp` GPUs (REQUIRES: ep divides
// tp). vLLM's --enable-expert-parallel spreads the experts over every GPU of the engine, its
// tensor × data-parallel ranks (FusedMoEParallelConfig.make: ep_size = tp_size × dp_size, no
// size of its own), so there ep is 1 or tp; SGLang (--ep-size) and TensorRT-LLM (--ep_size, the
// experts' TP the rest) take any ep dividing tp.
bool engine_splits_experts(Engine e, int64_t tp, int64_t ep);
// Prompt tokens one step takes in whole prompts past its first: options.max_prefill_tokens,
// else the engine's default (0: no cap but step_tokens).
int64_t prefill_tokens(const ServingOptions& options);
// The share of the dense GEMM rate the engine's fused MoE kernel reaches for the routed experts
// of `model`, each `expert_width` wide on a rank (EnginePreset::moe_gemm): the weight format's
// curve, block-scaled FP8 where the model's FP8 checkpoint is (ModelSpec::fp8_weight_block), the
// MXFP4 curve for MXFP4 experts; 1 for INT4 (not measured).
double moe_gemm_efficiency(const ServingOptions& options, const ModelSpec& model,
                           double expert_width);
// The front end's share of TTFT: options.front_end_s, else the engine's default.
double front_end_s(const ServingOptions& options);

}  // namespace meshplan::serving
