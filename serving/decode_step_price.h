// The time of a decode-only engine step as a function of the keys its batch reads.
//
// A replay runs stretches of steps in which only the decodes' context changes (request_replay:
// Scheduler::run_decodes; disaggregated_replay: a decode worker's runs): the batch's token
// count, and with it every GEMM, small kernel, collective, LM-head and host term of the step,
// stays the same, and only attention's cache read grows. StepTimeModel::decode_price computes
// the fixed terms once for a run; DecodeStepPrice::step_s adds attention for each step's keys
// with the step model's own arithmetic (DecodeAttention, which StepTimeModel::attention_layer_s
// calls too), so a run priced this way is bit for bit a run priced step by step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

namespace meshplan::serving {

struct StepBreakdown {
  double gemm_s = 0, attention_s = 0, communication_s = 0, other_s = 0, overhead_s = 0;
  double total_s() const { return gemm_s + attention_s + communication_s + other_s + overhead_s; }
};

// A step's round through `pp` pipeline stages in `micro` micro-batches (step_time.h
// micro_batches): `stage` is one micro-batch's layers and attention on the largest stage, `head`
// the LM head's work for one micro-batch on the last stage, `hop_s` one activation hop. A
// micro-batch passes the stages in turn and comes back to the first (pp hops), sampled once on
// the last: the round lasts the longer of one micro-batch's way (pp stages and hops, one head)
// and the last stage's work for all `micro` of them (each its layers, a hop and the head). With
// as many micro-batches as stages that is always the second, pp × (stage + hop + head); with one
// sequence on pp stages the first (its head once, not pp times).
inline StepBreakdown pipeline_round(const StepBreakdown& stage, const StepBreakdown& head,
                                    double hop_s, double pp, double micro) {
  StepBreakdown busy;  // the last stage's, for every micro-batch
  busy.gemm_s = (stage.gemm_s + head.gemm_s) * micro;
  busy.other_s = (stage.other_s + head.other_s) * micro;
  busy.communication_s = (stage.communication_s + head.communication_s) * micro;
  busy.attention_s = stage.attention_s * micro;
  if (pp > 1) busy.communication_s += micro * hop_s;
  if (micro >= pp) return busy;
  StepBreakdown way;  // one micro-batch's, through every stage
  way.gemm_s = stage.gemm_s * pp + head.gemm_s;
  way.other_s = stage.other_s * pp + head.other_s;
  way.communication_s = stage.communication_s * pp + head.communication_s + pp * hop_s;
  way.attention_s = stage.attention_s * pp;
  return way.total_s() > busy.total_s() ? way : busy;
}

// One layer's decode attention: every cached token's K/V (or MLA latent) read once at the read
// bandwidth, or the decodes' attention FLOPs at its sustained rate where that is slower, as one
// kernel (the fixed cost `kernel_latency_s`, then its work).
struct DecodeAttention {
  double local_share = 0;  // layers attending locally (ModelSpec::window), of all
  bool windowed = false;   // the model has local layers: they read decode_local_tokens
  double kv_bytes_per_token_layer = 0;
  // Query heads on one rank, as its attention kernel computes them (vLLM's sparse MLA pads them
  // to FlashMLA's multiple: StepTimeModel's constructor).
  double heads_local = 1;
  double qk_plus_v_dim = 0;  // query-key plus value head dims (FlashAttention's convention)
  double data_share = 1;     // a rank's share of the sequences (1 / tp under attention-DP)
  double hbm_bytes_per_s = 1;
  double flops_per_s = 1;  // decode attention's sustained FLOP/s
  double kernel_latency_s = 0;
  // A sparse-attention indexer (ModelSpec::sparse_attention), which reads and scores every
  // cached token of each decode (its context, not the top_k the attention reads): its cache's
  // bytes per token and layer and its FLOPs per key (2 · index heads · index head dim, every
  // head on every rank; in FP8, counted as the BF16 FLOPs taking as long). 0 without one.
  double index_bytes_per_token_layer = 0;
  double index_flops_per_key = 0;
  // Bytes each of the indexer's scores moves: the FP32 logit its scoring kernel writes and its
  // top-k kernel reads back (DeepGEMM's fp8_mqa_logits and fp8_paged_mqa_logits return float32
  // [queries × keys], vLLM's and SGLang's indexers pass them to a top-k kernel): 2 · 4. 0 without
  // an indexer.
  double index_logit_bytes = 0;

  // A layer's mean keys over the model's global and local layers.
  double keys(double context_tokens, double local_tokens) const {
    const double global = 1 - local_share;
    return global * context_tokens + local_share * (windowed ? local_tokens : context_tokens);
  }
  // The layer's attention kernel reading `cache_bytes` (the decodes' keys' and any prompt
  // chunk's cached context) with `keys` decode keys; `decodes`: the step decodes (or reads
  // decode context), else only the read is priced.
  // `index_keys`: the decodes' whole contexts, which an indexer reads and scores.
  double layer_s(double decode_keys, double index_keys, double cache_bytes, bool decodes) const {
    const double decode_flops =
        2 * decode_keys * heads_local * qk_plus_v_dim + index_keys * index_flops_per_key;
    const double read_s =
        (cache_bytes + index_keys * (index_bytes_per_token_layer + index_logit_bytes)) *
        data_share / hbm_bytes_per_s;
    if (!decodes) return read_s;
    return kernel_latency_s + std::max(read_s, decode_flops * data_share / flops_per_s);
  }
};

// A decode-only step of a fixed batch (its decodes and sampling rows): the step's terms that do
// not depend on the keys read (GEMMs, collectives, small kernels, LM head, pipeline hops, host),
// and attention's per step.
struct DecodeStepPrice {
  StepBreakdown stage;  // one micro-batch on the largest stage, without attention
  StepBreakdown head;   // the LM head's, one micro-batch on the last stage
  double hop_s = 0;     // one activation hop
  double overhead_s = 0;
  DecodeAttention attention;
  double stage_layers = 0;  // layers of the largest pipeline stage
  double pp = 1;
  double micro_batches = 1;  // step_time.h micro_batches: pp, or the decodes where fewer

  // StepTimeModel::time(batch).total_s() of the batch with these decodes reading
  // `context_tokens` (and `local_tokens` under local attention), summed over its sequences.
  double step_s(double context_tokens, double local_tokens) const {
    const double keys = attention.keys(context_tokens, local_tokens);
    const double layer_s =
        attention.layer_s(keys, context_tokens, keys * attention.kv_bytes_per_token_layer, true);
    StepBreakdown one = stage;
    one.attention_s = layer_s * stage_layers / micro_batches;
    StepBreakdown round = pipeline_round(one, head, hop_s, pp, micro_batches);
    round.overhead_s = overhead_s;
    return round.total_s();
  }
};

// The price of decode-only steps of `decodes` sequences, `sampled` of them sampling a token.
using DecodePriceFn = std::function<DecodeStepPrice(int64_t decodes, int64_t sampled)>;

}  // namespace meshplan::serving
