// Memory of one GPU serving a model: weights at their format, activation workspace, reserved
// memory, and the KV cache the engine's budget rule leaves; from it the tokens the cache holds
// and the requests that fit at once.
//
// Weights: the transformer's linear maps at the weight format, split as tensor parallelism
// splits them (core/layer_geometry.h; routed experts split tp ways whatever the ep); the
// embedding, LM head, norms and MoE router stay BF16 (FP8 and INT4 checkpoints quantize the
// decoder's linear layers only: NVIDIA ModelOpt and AutoAWQ leave lm_head unquantized).
// The GPU of the largest stage is counted: ceil(layers / pp) layers, plus the embedding on
// the first stage and the LM head on the last (both when pp = 1).
// Attention-DP (serving_options.h): everything but the routed experts is whole on every rank,
// the KV cache per token is that of tp = 1, and the replica caches tp ranks' worth of tokens.
// Activations: the engine's profiling pass runs one step of max_step_tokens tokens; its peak
// is the MLP's input, gate/up output and activation output per token, BF16, plus FP32 logits
// of max_batch sequences (vLLM's profile_run samples max_num_seqs rows).
// Reserved: CUDA context, NCCL buffers and CUDA graphs outside the allocator: 2 GiB (vLLM's
// memory profiling log on H100 reports non-torch memory and CUDA graph pools of 0.5-1.5 GiB
// each; an estimate, not a measurement of ours).
#pragma once

#include <cstdint>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "serving/engine_preset.h"
#include "serving/kv_cache.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

constexpr double kReservedBytes = 2.0 * 1024 * 1024 * 1024;

struct ServingMemory {
  double capacity_bytes = 0;    // HBM of one GPU
  double weight_bytes = 0;      // per GPU, largest stage
  double activation_bytes = 0;  // per GPU, the profiling step's peak
  double reserved_bytes = 0;    // CUDA context, NCCL, CUDA graphs
  double kv_budget_bytes = 0;   // per GPU, what the engine's rule leaves (≥ 0)
  double kv_bytes_per_token = 0;
  int64_t block_tokens = 1;
  int64_t kv_tokens = 0;  // tokens one replica caches (whole blocks, all its ranks)
  // isl + osl rounded up to blocks, in tokens of every layer (request_cache_tokens: less where
  // the engine frees a sliding window's older K/V), less a shared prefix's whole blocks
  int64_t tokens_per_request = 0;
  // A prompt prefix every request shares (Workload::prefix_tokens): what each request reuses and
  // what one copy holds; the replica holds one copy per cache (each attention-DP rank its own).
  PrefixReuse prefix;
  int64_t prefix_resident_tokens = 0;
  int64_t max_concurrency = 0;  // requests of the workload whose KV fits in one replica
  bool fits() const { return max_concurrency > 0; }
};

// Weight bytes on the largest stage's GPU.
double weight_bytes_per_gpu(const ModelSpec& model, const ServingLayout& layout, WeightFormat w);
// Activation workspace of one step of `step_tokens` tokens and `batch` sequences.
double activation_bytes_per_gpu(const ModelSpec& model, int64_t tp, int64_t step_tokens,
                                int64_t batch);
// The KV budget per the engine's rule with memory fraction `fraction`, below zero where the
// weights and workspace exceed what the rule gives them.
double signed_kv_budget_bytes(const EnginePreset& engine, double fraction, double capacity_bytes,
                              double weight_bytes, double activation_bytes, double reserved_bytes);
// The same, never negative.
double kv_budget_bytes(const EnginePreset& engine, double fraction, double capacity_bytes,
                       double weight_bytes, double activation_bytes, double reserved_bytes);
// The options' memory fraction, or the engine's default.
double memory_fraction(const ServingOptions& options);

// Everything above for one replica of `layout` (max_batch resolved) and requests of
// isl + osl tokens, the first `prefix_tokens` of every prompt shared.
// REQUIRES: 0 ≤ prefix_tokens < isl; no prefix where the engine frees a sliding window's K/V.
ServingMemory serving_memory(const ModelSpec& model, const GpuSpec& gpu,
                             const ServingLayout& layout, const ServingOptions& options,
                             int64_t isl, int64_t osl, int64_t prefix_tokens = 0);

}  // namespace meshplan::serving
