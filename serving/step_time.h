// Time of one engine step (one forward pass of the batch continuous batching formed) on one
// replica: decodes of `decodes` running sequences plus chunks of prompts being prefilled.
//
// Per layer of the largest pipeline stage:
// - each linear map: the overlapped GEMM roofline (serving/gemm_roofline.h) after the kernel's
//   fixed cost (kKernelLatencyS). FP8 weights run FP8 GEMMs (W8A8); BF16 and INT4 (W4A16, weights
//   read at INT4's bytes) run BF16 GEMMs. Routed experts: each token runs top_k of them; a step
//   reads the weights of the experts its tokens touch, E_local·(1 − (1 − top_k/E)^tokens) of this
//   GPU's E_local = E/ep in expectation under uniform routing, each a GEMM of its share of the
//   routed tokens.
// - attention: prefill chunks as causal fused attention (planner/attention_model.h, FLOPs in
//   FlashAttention's convention over the chunk's queries against its context; the engine's own
//   kernel as measured for the GPU where the profile has it: prompt_attention_); decodes read
//   every cached token's K/V (or MLA latent) once at the read bandwidth.
// - four small memory-bound kernels (two norms, RoPE + KV append, activation), each
//   the kernel's fixed cost + bytes / HBM. MoE layers add the routing permute and unpermute, each
//   reading and writing the hidden states of the GPU's tokens and of its experts' routed rows
//   (TensorRT-LLM's MoE runner: expandInputRowsKernel and finalizeMoeRoutingKernel,
//   cpp/tensorrt_llm/kernels/mixtureOfExperts/moe_kernels.cu; vLLM's fused_moe: the permute
//   and moe_sum).
// - TP: one all-reduce after attention and one after the MLP, timed by the collective model with
//   the profile's α-β fits (planner/collective_model.h); an all-reduce inside the NVLink domain
//   takes the engine's peer kernel instead where that is faster (serving/peer_all_reduce.h).
//   MoE layers with ep > 1 the same: with attention split TP ways every rank holds every token,
//   so each runs its own experts on the tokens routed to them and the block's partial sums meet
//   in the MLP's all-reduce; the engines dispatch tokens by all-to-all only under attention-DP
//   (vLLM: vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig
//   .use_all2all_kernels = dp_size > 1 and use_ep, otherwise the MoE layer's reduce_results
//   all-reduce; TensorRT-LLM: tensorrt_llm/_torch/modules/fused_moe/fused_moe_wide_ep.py
//   select_alltoall_method_type returns NotEnabled without mapping.enable_attention_dp).
// Then the LM head for the sequences that sample a token. Under TP its output columns are split
// and the engines all-gather them, so that every rank samples over the whole vocabulary (vLLM V1:
// LogitsProcessor._gather_logits all-gathers where Platform.use_all_gather, which is true under
// VLLM_USE_V1, vllm/platforms/interface.py; SGLang: LogitsProcessor's
// tensor_model_parallel_all_gather; TensorRT-LLM: the lm_head ColumnLinear with
// gather_output=True): BF16 logits of every sampled row through an all-gather over the TP
// group, then their FP32 copy written and read back by sampling on each rank (vLLM's sampler and
// TensorRT-LLM's both sample from FP32 logits). Last, the engine's host overhead
// (engine_preset.h HostOverhead: per step and per sequence carried).
// Attention-DP (serving_options.h): attention, dense layers, LM head and small kernels run on
// each rank's 1/tp share of the tokens with whole weights; routed experts see every token
// (split tp/ep ways over ep ranks), fed by an all-to-all over the EP group.
// Pipeline parallelism: the batch runs as pp micro-batches, so a round (every sequence one
// step further) takes pp × the stage's time at 1/pp of the batch, plus pp point-to-point hops
// (pp − 1 stage boundaries and the sampled tokens back to the first stage). A micro-batch holds
// whole sequences: a step of fewer sequences than pp runs as one micro-batch each, and its round
// still passes all pp stages (pp × the stage's time at one sequence: the pipeline is not full). The
// largest stage is timed, with the LM head: its pp micro-batches each read the stage's weights
// once. A prompt's chunk is not split between micro-batches (the engines' pipeline batches take
// whole requests: vLLM's and TensorRT-LLM's in-flight micro-batches, SGLang's at its chunk size),
// and it passes the stages one after another: the micro-batch holding the largest chunk carries at
// least its tokens, and the round is pp × the stage's time at that many (a lone 8,000-token
// prompt on pp 8 takes the time of its 8,000 tokens through every layer, not of 1,000).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/cluster_spec.h"
#include "core/layer_geometry.h"
#include "core/model_spec.h"
#include "core/profile.h"
#include "planner/attention_model.h"
#include "planner/collective_model.h"
#include "serving/decode_step_price.h"
#include "serving/engine_preset.h"
#include "serving/gemm_roofline.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

// Fixed cost of one GPU kernel inside a CUDA graph, paid before its work: NVIDIA's "Getting
// Started with CUDA Graphs" (developer.nvidia.com/blog, 2019) measures 3.4 µs per short kernel
// launched from a graph. A kernel's time is this plus its work (α + work), not the larger of the
// two: one tensor-parallel rank's decode steps measured on an H200
// (tests/data/one_gpu_serve_steps/steps-h200-tp.json: Llama 3.1 8B, Llama 3 70B and Qwen3-32B at
// TP 1/2/4/8, batch 1-64, each step one CUDA graph) run 18-19 µs per layer above their streaming
// time at TP 8 whatever the model, which the larger-of-the-two left unpriced: its decode error
// grew with TP (h200-published, mean signed: tp1 −1%, tp2 −6%, tp4 −12%, tp8 −20%; 11.6% mean
// |error|); α + work: +2.6%, +2.3%, +1.5%, −1.7% (6.6%), and with h200-measured 21.1% → 11.3%.
constexpr double kKernelLatencyS = 3.4e-6;
constexpr int kSmallKernelsPerLayer = 4;

struct PrefillChunk {
  int64_t tokens = 0;          // prompt tokens computed in this step
  int64_t context_before = 0;  // prompt tokens already in the cache
};

struct StepBatch {
  int64_t decodes = 0;               // sequences generating one token each
  double decode_context_tokens = 0;  // cached tokens those sequences attend to, summed
  // Of those, what a local-attention layer reads (core/attention_span.h local_keys), summed;
  // the same as decode_context_tokens for a model without ModelSpec::window.
  double decode_local_tokens = 0;
  std::vector<PrefillChunk> chunks;  // prompt chunks
  int64_t sampled = 0;               // sequences that sample a token (LM head rows)
  int64_t tokens() const;
  // One more decode of a sequence with `context` cached tokens, under the model's local
  // attention (ModelSpec::window) if any.
  void add_decode(const std::optional<AttentionWindow>& window, int64_t context);
};

// The query-key pairs the attention kernel computes for prompt chunk `c` on a local layer of
// `model` (one whose attended_window() is set): the window's keys of each of its queries
// (core/attention_span.h local_keys_sum); under sparse attention every query's top_k index
// slots, those before its position too (masked, not skipped: FlashMLA's sparse prefill computes
// its scores over [queries, heads, top_k], its README's definition of flash_mla_sparse_fwd).
double chunk_local_keys(const ModelSpec& model, const PrefillChunk& c);

// Micro-batches the step runs as under `pp` stages: pp, or one per sequence (decode or prompt
// chunk) where it has fewer; at least 1.
double micro_batches(const StepBatch& batch, int64_t pp);

// One operation of a serving step's layer, head or host, and its seconds (kernel latency
// included): StepTimeModel::step_ops lists a step op by op (`meshplan serve --ops`).
enum class StepOpKind { gemm, attention, memory, communication, host };
struct StepOp {
  const char* name = "";  // a linear map's ("qkv", "mlp_up", …), or what the op does
  StepOpKind kind = StepOpKind::gemm;
  double seconds = 0;
  const char* of = "";  // whose maps: "routed experts", "shared experts", "" (the layer's own)
};
// A step's ops: one layer of each kind at one micro-batch's tokens on the largest stage (what
// StepBreakdown's gemm, other and communication sum, × the stage's layers), attention per layer
// for the batch, the LM head's per micro-batch, the host's once.
struct StepOps {
  std::vector<StepOp> dense, moe;  // empty where the stage has no layer of the kind
  double stage_dense_layers = 0, stage_moe_layers = 0;
  double pp = 1, micro_batches = 1;
  double tokens = 0;             // one micro-batch's, what the layer ops are priced at
  double attention_layer_s = 0;  // one layer's attention, the whole batch
  std::vector<StepOp> head, host;
  StepBreakdown total;  // time(batch)
};

class StepTimeModel {
 public:
  // REQUIRES: the layout fits the cluster (tp·pp ≤ GPUs), tp within one node's network level.
  StepTimeModel(const ModelSpec& model, const ClusterSpec& cluster,
                const CalibrationProfile& profile, const ServingLayout& layout,
                const ServingOptions& options, const HostOverhead& host);

  // Not for two threads at once: it keeps the layer costs of the token counts it was asked.
  StepBreakdown time(const StepBatch& batch) const;
  // Decode-only steps of `decodes` sequences, `sampled` of them sampling: their fixed terms
  // computed once, attention per step (decode_step_price.h); bit for bit time(batch).total_s().
  // REQUIRES: decodes ≥ 1.
  DecodeStepPrice decode_price(int64_t decodes, int64_t sampled) const;
  // time(batch) op by op.
  StepOps step_ops(const StepBatch& batch) const;

 private:
  // One dense and one MoE layer (add_layer) at a token count.
  struct LayerCosts {
    double key = -1;  // the tokens
    StepBreakdown dense, moe;
    double hop_s = 0;  // one pipeline hop of the tokens' activations (pp > 1)
  };
  // The LM head's rows at a count of sampling sequences (per stage): its GEMM, the logits'
  // all-gather and their FP32 write and read, kept like the layers' costs.
  struct HeadCosts {
    double key = -1;  // the rows
    double gemm_s = 0, communication_s = 0, other_s = 0;
  };
  // The layers' costs at `tokens`: a replay asks the same counts step after step, so the last
  // ones asked are kept, one slot per count modulo kLayerMemoSlots (the same numbers as
  // computing them again).
  const LayerCosts& layer_costs(double tokens) const;
  const HeadCosts& head_costs(double rows) const;
  void fill_layer_costs(double tokens, LayerCosts& c) const;
  void fill_head_costs(double rows, HeadCosts& c) const;
  static constexpr size_t kLayerMemoSlots = 1024;
  // One layer at `tokens` tokens (already divided by pp), adding into `out`.
  void add_layer(const std::vector<LinearMap>& linears, bool moe, double tokens,
                 StepBreakdown& out) const;
  // Each op of that layer, in add_layer's order, passed to `op(StepOp)`.
  template <class Op>
  void each_layer_op(const std::vector<LinearMap>& linears, bool moe, double tokens, Op op) const;
  double linear_s(const LinearMap& m, double tokens) const;
  double bf16_linear_s(const LinearMap& m, double tokens) const;  // before the kernel's fixed cost
  // Attention of one layer for the whole batch: prefill chunks, then the decodes' cache reads.
  double attention_layer_s(const StepBatch& batch) const;
  // One micro-batch's work on the largest stage (layers and attention), the LM head's for it on
  // the last, a hop, and the micro-batches of the step (decode_step_price.h pipeline_round).
  struct StageWork {
    StepBreakdown stage, head;
    double hop_s = 0;
    double micro = 1;
    double tokens = 0;  // one micro-batch's, the layers' costs are priced at
  };
  StageWork stage_work(const StepBatch& batch) const;
  // The step's time from its stage work `w` (stage_work(batch)): the pipeline round and the host.
  StepBreakdown round_of(const StepBatch& batch, const StageWork& w) const;
  // The host's time for the step's sequences.
  double overhead_s(const StepBatch& batch) const;
  double memory_kernel_s(double bytes) const;
  // An all-reduce over `ranks` consecutive GPUs: NCCL's, or the engine's peer kernel where the
  // group is inside the NVLink domain, the profile has its fit and it is faster.
  double all_reduce_s(int64_t ranks, double bytes) const;

  ModelSpec model_;
  ServingLayout layout_;
  ServingOptions options_;
  std::vector<LinearMap> dense_layer_, moe_layer_;
  LinearMap lm_head_;
  double stage_dense_layers_ = 0, stage_moe_layers_ = 0;
  // Attention's terms: the local layers' share and K/V bytes per token (prefill chunks read
  // them too) and what a decode reads; DecodeStepPrice carries a copy.
  DecodeAttention decode_attention_;
  HostOverhead host_;
  double data_share_ = 1;            // a rank's share of the sequences (1 / tp under attention-DP)
  ResolvedCalibration calibration_;  // the profile's scalars for the GPU and weight precision
  GemmRoofline gemm_;
  // The routed experts' GEMMs: gemm_ at the engine's fused-MoE share of the dense rate
  // (moe_gemm_efficiency, engine_preset.h).
  GemmRoofline expert_gemm_;
  // The router's and the LM head's GEMMs, BF16 whatever the weight format (bf16_linear_s):
  // gemm_ itself where the weights already run BF16 GEMMs.
  GemmRoofline bf16_gemm_;
  AttentionModel attention_;
  // The prompt chunks' own attention: the engine's measured kernel for the KV-cache format where
  // the profile has it (prompt_attention_kernels), else attention_'s; the indexer's scores keep
  // attention_.
  AttentionModel prompt_attention_;
  CollectiveModel collectives_;
  PeerAllReduceFit peer_;
  mutable std::vector<LayerCosts> layer_memo_;
  mutable std::vector<HeadCosts> head_memo_;
};

}  // namespace meshplan::serving
