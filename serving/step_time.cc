#include "serving/step_time.h"

#include <algorithm>
#include <cmath>

#include "core/attention_span.h"
#include "core/collective.h"
#include "planner/calibration.h"
#include "serving/kv_cache.h"
#include "serving/peer_all_reduce.h"

namespace meshplan::serving {

namespace {

// An indexer score as DeepGEMM's logits kernels write it and top-k reads it: FP32.
constexpr double kIndexLogitBytes = 4;

// A kernel of `work_s` in a CUDA graph: its fixed cost, then its work (step_time.h).
double kernel_s(double work_s) { return kKernelLatencyS + work_s; }

constexpr double kActivationBytes = 2;  // BF16 activations between kernels
constexpr double kLogitBytes = 4;       // logits are sampled in FP32
constexpr double kNormStatBytes = 4;    // a tensor-parallel RMSNorm's FP32 mean squares

// Fused-attention kernels inference engines run on Hopper, in preference order (vLLM and
// SGLang: FlashAttention-3 / FlashInfer; TensorRT-LLM its own FMHA, closest to FA3).
const std::vector<std::string> kServingAttentionKernels = {"fa3", "fa2", "cudnn"};

// The kernels of a prompt chunk's attention: the engine's own, as AIConfigurator timed it on the
// GPU over the KV-cache format (profiles' samples named after the engine, "-fp8kv" for an FP8
// cache: scripts/aiconfigurator-attention-kernels.mjs), else kServingAttentionKernels. With an FP8
// cache TensorRT-LLM's kernel computes in FP8: its engine builder turns FP8 context FMHA on
// wherever paged context FMHA (PluginConfig's default) meets an FP8 KV cache ("FP8 Context FMHA
// is enabled to support FP8 Paged Context FMHA", tensorrt_llm/builder.py), and trtllm-bench's
// build sets use_fp8_context_fmha for every FP8 checkpoint, whose cache it makes FP8
// (tensorrt_llm/bench/build/build.py at 000a01de); its PyTorch flow (trtllm-serve since 1.0) is
// taken alike, unverified. vLLM's and SGLang's keep BF16 math over an FP8 cache (vLLM's table
// has no other rows; SGLang's FP8-math rows time the same). MLA's prompts run through the same
// fused kernels (the latent expanded to heads of 192 and 128); sparse attention's do not
// (FlashMLA's sparse kernels gather each query's top_k keys, which these tables do not time), and
// keep kServingAttentionKernels.
std::vector<std::string> prompt_attention_kernels(const ModelSpec& model,
                                                  const ServingOptions& options) {
  std::vector<std::string> kernels;
  if (!model.sparse_attention)
    kernels.push_back(std::string(engine_preset(options.engine).name) +
                      (options.kv == KvFormat::fp8 ? "-fp8kv" : ""));
  kernels.insert(kernels.end(), kServingAttentionKernels.begin(), kServingAttentionKernels.end());
  return kernels;
}

// INT4 and MXFP4 weights are widened to BF16 inside the GEMM (W4A16: AWQ's kernels; on Hopper,
// which has no FP4 tensor cores, the MXFP4 MoE kernels of vLLM and TensorRT-LLM,
// AIConfigurator's w4a16_mxfp4), so their math runs at the BF16 rate.
Precision gemm_precision(WeightFormat w) {
  return w == WeightFormat::fp8 ? Precision::fp8 : Precision::bf16;
}

// Query-key plus value head dims (FlashAttention's convention counts 4·s²·h·d for d_qk = d_v).
double qk_plus_v_dim(const ModelSpec& m) {
  if (m.mla)
    return static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim +
                               m.mla->v_head_dim);
  return 2 * static_cast<double>(m.head_dim);
}

}  // namespace

void StepBatch::add_decode(const std::optional<AttentionWindow>& window, int64_t context) {
  ++decodes;
  decode_context_tokens += static_cast<double>(context);
  decode_local_tokens += window ? local_keys(*window, context) : static_cast<double>(context);
}

int64_t StepBatch::tokens() const {
  int64_t t = decodes;
  for (const PrefillChunk& c : chunks) t += c.tokens;
  return t;
}

// An expert's intermediate width on one rank: split over the tp / ep ranks of its EP group
// (linear_s); 0 for a model without experts.
static double expert_width_on_rank(const ModelSpec& model, const ServingLayout& layout) {
  if (!model.moe) return 0;
  return static_cast<double>(model.moe->expert_ffn_hidden) * static_cast<double>(layout.ep) /
         static_cast<double>(layout.tp);
}

StepTimeModel::StepTimeModel(const ModelSpec& model, const ClusterSpec& cluster,
                             const CalibrationProfile& profile, const ServingLayout& layout,
                             const ServingOptions& options, const HostOverhead& host)
    : model_(model),
      layout_(layout),
      options_(options),
      dense_layer_(layer_linears(model, 0)),
      moe_layer_(layer_linears(model, model.layers - 1)),
      lm_head_(lm_head_linear(model)),
      host_(host),
      calibration_(resolve_calibration(profile, cluster.gpu, gemm_precision(options.weights))),
      gemm_(profile, cluster.gpu, gemm_precision(options.weights), calibration_),
      expert_gemm_(profile, cluster.gpu, gemm_precision(options.weights), calibration_,
                   moe_gemm_efficiency(options, model, expert_width_on_rank(model, layout))),
      bf16_gemm_(gemm_precision(options.weights) == Precision::bf16
                     ? gemm_
                     : GemmRoofline(profile, cluster.gpu, Precision::bf16,
                                    resolve_calibration(profile, cluster.gpu, Precision::bf16))),
      attention_(profile, cluster.gpu, kServingAttentionKernels, calibration_),
      prompt_attention_(profile, cluster.gpu, prompt_attention_kernels(model, options),
                        calibration_),
      collectives_(profile, cluster, calibration_),
      peer_(profile.peer_all_reduce),
      layer_memo_(kLayerMemoSlots),
      head_memo_(kLayerMemoSlots) {
  const double per_stage = static_cast<double>(stage_layers(model, layout.pp));
  const double moe_share =
      static_cast<double>(model.moe_layers()) / static_cast<double>(model.layers);
  stage_moe_layers_ = per_stage * moe_share;
  stage_dense_layers_ = per_stage - stage_moe_layers_;
  data_share_ = 1 / static_cast<double>(layout.data_ranks());
  DecodeAttention& a = decode_attention_;
  a.local_share = local_layer_share(model);
  a.windowed = model.attended_window().has_value();
  a.kv_bytes_per_token_layer = kv_bytes_per_token_layer(model, layout.dense_tp(), options.kv);
  a.heads_local =
      std::max(1.0, static_cast<double>(model.heads) / static_cast<double>(layout.dense_tp()));
  // vLLM runs a sparse-attention model's MLA through FlashMLA's sparse kernels in MQA form on the
  // latent, prefill and decode alike, and those take a multiple of 64 query heads a rank on
  // Hopper, 128 on Blackwell: a rank with fewer pads its queries with zero heads, which the
  // kernel computes (vllm/v1/attention/backends/mla/flashmla_sparse.py at 60191e18,
  // FlashMLASparseImpl: prefill_padding, _bf16_flash_mla_kernel; its FP8 decode kernel pads to
  // 64 or 128). DeepSeek-V3.2's 128 heads at tp 8: 16 a rank, computed as 64.
  if (model.sparse_attention && options.engine == Engine::vllm) {
    const bool blackwell =
        cluster.gpu.name.rfind("B", 0) == 0 || cluster.gpu.name.rfind("GB", 0) == 0;
    const double multiple = blackwell ? 128 : 64;
    a.heads_local = std::ceil(a.heads_local / multiple) * multiple;
  }
  a.qk_plus_v_dim = qk_plus_v_dim(model);
  a.data_share = data_share_;
  a.hbm_bytes_per_s = calibration_.hbm_bytes_per_s.value;
  a.flops_per_s = calibration_.attention_efficiency.value * cluster.gpu.peak_bf16_flops_per_s *
                  calibration_.sustained_compute_ratio.value;
  a.kernel_latency_s = kKernelLatencyS;
  a.index_bytes_per_token_layer = indexer_bytes_per_token_layer(model);
  // The indexer scores in FP8 (DeepGEMM's fp8_mqa_logits, which vLLM and SGLang call): its FLOPs
  // count at the attention kernels' BF16 rate scaled by the datasheet's FP8 / BF16 peak (half
  // the time on Hopper; BF16 where the GPU has no FP8).
  if (model.sparse_attention) {
    const double fp8_speedup = cluster.gpu.peak_flops_per_s(Precision::fp8) /
                               cluster.gpu.peak_flops_per_s(Precision::bf16);
    a.index_flops_per_key = indexer_flops_per_key(model) / fp8_speedup;
    a.index_logit_bytes = 2 * kIndexLogitBytes;
  }
}

double StepTimeModel::memory_kernel_s(double bytes) const {
  return kernel_s(bytes / calibration_.hbm_bytes_per_s.value);
}

double StepTimeModel::all_reduce_s(int64_t ranks, double bytes) const {
  const GroupShape group = GroupShape::of(ranks, 1);
  const double nccl = collectives_.time_s(Collective::all_reduce, group, bytes);
  if (!peer_.known() || !peer_all_reduce_serves(ranks) ||
      collectives_.members_within(group, 0) < ranks ||
      (peer_.max_bytes > 0 && bytes >= peer_.max_bytes))
    return nccl;
  return std::min(nccl, peer_all_reduce_s(peer_, ranks, bytes));
}

double StepTimeModel::linear_s(const LinearMap& m, double tokens) const {
  const double in = m.rank_in(layout_.dense_tp()), out = m.rank_out(layout_.dense_tp());
  double t = 0;
  if (m.stays_bf16()) {
    t = bf16_linear_s(m, tokens);
  } else if (m.role == LinearRole::expert) {
    const double experts = static_cast<double>(model_.moe->experts);
    const double top_k = static_cast<double>(model_.moe->top_k);
    const double ep = static_cast<double>(layout_.ep);
    const double touched_share = 1 - std::pow(1 - top_k / experts, tokens);
    const double touched = experts / ep * touched_share;
    const double per_expert_tokens = tokens * top_k / (experts * touched_share);
    // An expert split over the tp / ep ranks of its EP group.
    const double split = static_cast<double>(layout_.tp) / ep;
    const double e_in =
        m.split == TpSplit::row ? static_cast<double>(m.in) / split : static_cast<double>(m.in);
    const double e_out = m.split == TpSplit::column ? static_cast<double>(m.out) / split
                                                    : static_cast<double>(m.out);
    t = expert_gemm_.time_s(per_expert_tokens, e_out, e_in, touched,
                            bytes_per_weight(options_.weights, m));
  } else {
    t = gemm_.time_s(tokens * data_share_, out, in, static_cast<double>(m.copies),
                     bytes_per_weight(options_.weights, m));
  }
  return kernel_s(t);
}

template <class Op>
void StepTimeModel::each_layer_op(const std::vector<LinearMap>& linears, bool moe, double tokens,
                                  Op op) const {
  for (const LinearMap& m : linears)
    op(StepOp{m.name, StepOpKind::gemm, linear_s(m, tokens),
              m.role == LinearRole::expert   ? "routed experts"
              : m.role == LinearRole::shared ? "shared experts"
                                             : ""});
  const double activation_bytes = tokens * static_cast<double>(model_.hidden) * kActivationBytes;
  op(StepOp{"norms, residual adds (4 kernels)", StepOpKind::memory,
            kSmallKernelsPerLayer * memory_kernel_s(2 * activation_bytes * data_share_)});
  if (model_.sparse_attention) {
    // The sparse-attention indexer's small kernels beside its three GEMMs and its scores
    // (priced with attention), as DeepSeek's inference/model.py Indexer.forward runs them: RoPE,
    // the Hadamard rotation and the FP8 quantization of the index queries (3), the key's
    // LayerNorm, RoPE, rotation, quantization and cache write (5), the head weights' scaling and
    // the top-k selection, which writes top_k indices a token. Each reads and writes its
    // tensor in BF16 (the weights in FP32).
    const SparseAttentionSpec& s = *model_.sparse_attention;
    const double heads = static_cast<double>(s.index_heads),
                 dim = static_cast<double>(s.index_head_dim);
    const double t = tokens * data_share_;
    const double indexer_s = 3 * memory_kernel_s(2 * t * heads * dim * kActivationBytes) +
                             5 * memory_kernel_s(2 * t * dim * kActivationBytes) +
                             memory_kernel_s(2 * t * heads * 4) +
                             memory_kernel_s(t * static_cast<double>(s.top_k) * 4);
    op(StepOp{
        "indexer RoPE, rotations, FP8 quantization, key norm, cache write, top-k (10 kernels)",
        StepOpKind::memory, indexer_s});
  }
  if (moe) {
    // Routing data movement: each token's hidden state copied to its top_k experts' rows
    // (permute), and the rows weighted back into one (unpermute); a GPU moves the rows of its
    // own experts, top_k / ep of every token's in expectation, and its share of the tokens.
    const double rows =
        activation_bytes * static_cast<double>(model_.moe->top_k) / static_cast<double>(layout_.ep);
    op(StepOp{"moe permute, unpermute", StepOpKind::memory,
              2 * memory_kernel_s(rows + activation_bytes * data_share_)});
  }
  if (layout_.tp == 1) return;
  if (layout_.attention_dp) {
    // Only MoE layers communicate: each rank's tokens to their experts' ranks and back.
    if (moe && layout_.ep > 1) {
      const double routed = activation_bytes * data_share_ * static_cast<double>(model_.moe->top_k);
      op(StepOp{
          "EP all-to-all (dispatch, combine)", StepOpKind::communication,
          2 * collectives_.time_s(Collective::all_to_all, GroupShape::of(layout_.ep, 1), routed)});
    }
    if (moe && layout_.ep < layout_.tp)  // experts split tp/ep ways: their partial sums
      op(StepOp{"expert partial-sum all-reduce", StepOpKind::communication,
                all_reduce_s(layout_.tp / layout_.ep, activation_bytes)});
    return;
  }
  // Attention's output, then the MLP's partial sums, dense or MoE with any ep: under attention TP
  // every rank holds every token, so expert parallelism moves none. Each rank runs its own experts
  // on the tokens routed to them and the MoE block ends with the all-reduce a TP MLP ends with.
  op(StepOp{"TP all-reduce (attention, MLP)", StepOpKind::communication,
            2 * all_reduce_s(layout_.tp, activation_bytes)});
  // A q/k RMSNorm over the whole layer (QkNorm::per_layer, MiniMax-M2) spans every rank's heads:
  // its mean squares are all-reduced, one (tokens, 2) FP32 tensor a layer (vLLM's minimax_m2.py,
  // MiniMaxText01RMSNormTP.forward_qk: the decoder layer's third all-reduce).
  if (model_.qk_norm == QkNorm::per_layer)
    op(StepOp{"q/k norm all-reduce", StepOpKind::communication,
              all_reduce_s(layout_.tp, tokens * 2 * kNormStatBytes)});
}

void StepTimeModel::add_layer(const std::vector<LinearMap>& linears, bool moe, double tokens,
                              StepBreakdown& out) const {
  each_layer_op(linears, moe, tokens, [&](const StepOp& op) {
    (op.kind == StepOpKind::gemm     ? out.gemm_s
     : op.kind == StepOpKind::memory ? out.other_s
                                     : out.communication_s) += op.seconds;
  });
}

double StepTimeModel::attention_layer_s(const StepBatch& batch) const {
  const DecodeAttention& a = decode_attention_;
  // A layer's mean over the model's global and local layers (ModelSpec::window): a local layer
  // reads and attends over its window's keys only.
  const double local = a.local_share, global = 1 - local;
  const double kv_bytes_per_token_layer = a.kv_bytes_per_token_layer;
  const double decode_keys = a.keys(batch.decode_context_tokens, batch.decode_local_tokens);
  double prefill_s = 0, cache_bytes = decode_keys * kv_bytes_per_token_layer;
  for (const PrefillChunk& c : batch.chunks) {
    const double t = static_cast<double>(c.tokens), p = static_cast<double>(c.context_before);
    const double per_key = 2 * a.heads_local * a.qk_plus_v_dim;
    const int64_t span = c.context_before + c.tokens;
    prefill_s +=
        global *
        prompt_attention_.time(per_key * t * (p + t / 2), model_.head_dim, span, true).forward_s;
    cache_bytes += global * p * kv_bytes_per_token_layer;
    if (a.index_flops_per_key > 0) {
      // The indexer scores the chunk's queries against every key before them and its own
      // causal prefix, reading the cached ones (attention-shaped, at the attention kernel's
      // rate for its head dim), and writes each score as an FP32 logit that top-k reads back.
      const double scores = t * (p + t / 2);
      prefill_s += attention_
                       .time(a.index_flops_per_key * scores,
                             model_.sparse_attention->index_head_dim, span, true)
                       .forward_s;
      cache_bytes += p * a.index_bytes_per_token_layer + scores * a.index_logit_bytes;
    }
    if (local > 0) {
      const AttentionWindow w = *model_.attended_window();
      const double keys = chunk_local_keys(model_, c);
      prefill_s +=
          local *
          prompt_attention_.time(per_key * keys, model_.head_dim, std::min(span, w.tokens), true)
              .forward_s;
      cache_bytes += local * local_keys(w, c.context_before) * kv_bytes_per_token_layer;
    }
  }
  // Decodes read every cached token once (at the read bandwidth); under attention-DP each rank
  // attends over its own share of the sequences.
  const double decode_s = a.layer_s(decode_keys, batch.decode_context_tokens, cache_bytes,
                                    batch.decodes > 0 || batch.decode_context_tokens > 0);
  return (batch.chunks.empty() ? 0 : kernel_s(prefill_s * data_share_)) + decode_s;
}

namespace {

// The slot of `memo` kept for `key` (one per key modulo its size), computed anew by
// `compute(slot)` unless it holds that key already.
template <class Costs, class Compute>
const Costs& kept(std::vector<Costs>& memo, double key, const Compute& compute) {
  Costs& c = memo[static_cast<size_t>(static_cast<uint64_t>(key) % memo.size())];
  if (c.key != key) {
    c = Costs{};
    c.key = key;
    compute(c);
  }
  return c;
}

}  // namespace

double chunk_local_keys(const ModelSpec& model, const PrefillChunk& c) {
  const AttentionWindow w = *model.attended_window();
  if (model.sparse_attention) return static_cast<double>(c.tokens) * static_cast<double>(w.tokens);
  return local_keys_sum(w, c.context_before, c.tokens);
}

double micro_batches(const StepBatch& batch, int64_t pp) {
  const int64_t sequences = batch.decodes + static_cast<int64_t>(batch.chunks.size());
  return static_cast<double>(std::clamp<int64_t>(sequences, 1, pp));
}

const StepTimeModel::LayerCosts& StepTimeModel::layer_costs(double tokens) const {
  return kept(layer_memo_, tokens, [&](LayerCosts& c) { fill_layer_costs(tokens, c); });
}

const StepTimeModel::HeadCosts& StepTimeModel::head_costs(double rows) const {
  return kept(head_memo_, rows, [&](HeadCosts& c) { fill_head_costs(rows, c); });
}

void StepTimeModel::fill_layer_costs(double tokens, LayerCosts& c) const {
  if (stage_dense_layers_ > 0) add_layer(dense_layer_, false, tokens, c.dense);
  if (stage_moe_layers_ > 0) add_layer(moe_layer_, true, tokens, c.moe);
  if (layout_.pp > 1) {
    const double hop_bytes = tokens * static_cast<double>(model_.hidden) * kActivationBytes;
    c.hop_s = collectives_.p2p_time_s(layout_.tp, hop_bytes);
  }
}

// The router and the LM head stay BF16 whatever the weight format, weights and activations
// streamed once: the quantizers leave them out (TensorRT-LLM's FP8 checkpoints from ModelOpt,
// whose default configurations disable the *lm_head* quantizers; vLLM's FP8 methods serve
// linear layers, its ParallelLMHead keeps the unquantized embedding method, and FP8 checkpoints
// list lm_head under `ignore`), as serving_memory.cc counts their bytes.
double StepTimeModel::bf16_linear_s(const LinearMap& m, double tokens) const {
  const double in = m.rank_in(layout_.dense_tp()), out = m.rank_out(layout_.dense_tp());
  return bf16_gemm_.time_s(tokens * data_share_, out, in, static_cast<double>(m.copies),
                           kActivationBytes);
}

void StepTimeModel::fill_head_costs(double rows, HeadCosts& c) const {
  c.gemm_s = kernel_s(bf16_linear_s(lm_head_, rows));
  // The head's columns are split dense_tp ways and every rank samples from the whole
  // vocabulary: the logits are all-gathered in the head's BF16 output, then each rank writes
  // and reads back the FP32 logits of every row for softmax/top-k.
  const double vocab_rows = rows * data_share_ * lm_head_.rank_out(1);
  if (layout_.dense_tp() > 1)
    c.communication_s =
        collectives_.time_s(Collective::all_gather, GroupShape::of(layout_.dense_tp(), 1),
                            vocab_rows * kActivationBytes);
  c.other_s = memory_kernel_s(2 * vocab_rows * kLogitBytes);
}

StepTimeModel::StageWork StepTimeModel::stage_work(const StepBatch& batch) const {
  StepBreakdown stage;
  const double micro = micro_batches(batch, layout_.pp);
  // A micro-batch's tokens: 1/micro of the step's, but a prompt chunk's whole (the header).
  double tokens = static_cast<double>(batch.tokens()) / micro;
  const PrefillChunk* largest = nullptr;
  for (const PrefillChunk& c : batch.chunks)
    if (static_cast<double>(c.tokens) > tokens) {
      tokens = static_cast<double>(c.tokens);
      largest = &c;
    }
  if (tokens <= 0) return {stage, {}, 0, micro, tokens};
  // One layer of each kind, then scaled by the stage's layer counts.
  const LayerCosts& layers_at = layer_costs(tokens);
  const StepBreakdown& dense = layers_at.dense;
  const StepBreakdown& moe = layers_at.moe;
  auto scale_add = [&](const StepBreakdown& one, double count) {
    stage.gemm_s += one.gemm_s * count;
    stage.other_s += one.other_s * count;
    stage.communication_s += one.communication_s * count;
  };
  scale_add(dense, stage_dense_layers_);
  scale_add(moe, stage_moe_layers_);
  const double layers = stage_dense_layers_ + stage_moe_layers_;
  stage.attention_s = attention_layer_s(batch) * layers / micro;
  if (largest != nullptr) {  // that chunk's attention in its micro-batch, through every stage
    StepBatch alone;
    alone.chunks.push_back(*largest);
    stage.attention_s = std::max(stage.attention_s, attention_layer_s(alone) * layers);
  }

  // LM head rows: the sequences sampling a token, on the last stage.
  StepBreakdown head;
  if (batch.sampled > 0) {
    const HeadCosts& h = head_costs(static_cast<double>(batch.sampled) / micro);
    head.gemm_s = h.gemm_s;
    head.communication_s = h.communication_s;  // 0 on one rank
    head.other_s = h.other_s;
  }
  return {stage, head, layers_at.hop_s, micro, tokens};
}

StepBreakdown StepTimeModel::round_of(const StepBatch& batch, const StageWork& w) const {
  StepBreakdown round =
      pipeline_round(w.stage, w.head, w.hop_s, static_cast<double>(layout_.pp), w.micro);
  round.overhead_s = overhead_s(batch);
  return round;
}

StepBreakdown StepTimeModel::time(const StepBatch& batch) const {
  if (batch.tokens() <= 0) return {};
  return round_of(batch, stage_work(batch));
}

double StepTimeModel::overhead_s(const StepBatch& batch) const {
  return host_.step_s(static_cast<double>(batch.decodes) +
                      static_cast<double>(batch.chunks.size()));
}

StepOps StepTimeModel::step_ops(const StepBatch& batch) const {
  StepOps out;
  if (batch.tokens() <= 0) return out;
  const StageWork w = stage_work(batch);
  out.total = round_of(batch, w);
  out.pp = static_cast<double>(layout_.pp);
  out.micro_batches = w.micro;
  out.tokens = w.tokens;
  out.stage_dense_layers = stage_dense_layers_;
  out.stage_moe_layers = stage_moe_layers_;
  auto into = [](std::vector<StepOp>& ops) {
    return [&ops](const StepOp& op) { ops.push_back(op); };
  };
  if (stage_dense_layers_ > 0) each_layer_op(dense_layer_, false, out.tokens, into(out.dense));
  if (stage_moe_layers_ > 0) each_layer_op(moe_layer_, true, out.tokens, into(out.moe));
  out.attention_layer_s = w.stage.attention_s / (stage_dense_layers_ + stage_moe_layers_);
  if (w.head.gemm_s > 0) {
    out.head.push_back({"lm_head", StepOpKind::gemm, w.head.gemm_s});
    if (w.head.communication_s > 0)
      out.head.push_back({"logits all-gather", StepOpKind::communication, w.head.communication_s});
    out.head.push_back({"logits FP32 write, read", StepOpKind::memory, w.head.other_s});
  }
  out.host.push_back(
      {"engine host work (scheduling, inputs, sampling)", StepOpKind::host, out.total.overhead_s});
  return out;
}

DecodeStepPrice StepTimeModel::decode_price(int64_t decodes, int64_t sampled) const {
  StepBatch batch;
  batch.decodes = decodes;
  batch.sampled = sampled;
  const StageWork w = stage_work(batch);
  DecodeStepPrice price;
  price.stage = w.stage;
  price.stage.attention_s = 0;  // the step's own (step_s)
  price.head = w.head;
  price.hop_s = w.hop_s;
  price.overhead_s = overhead_s(batch);
  price.attention = decode_attention_;
  price.stage_layers = stage_dense_layers_ + stage_moe_layers_;
  price.pp = static_cast<double>(layout_.pp);
  price.micro_batches = w.micro;
  return price;
}

}  // namespace meshplan::serving
