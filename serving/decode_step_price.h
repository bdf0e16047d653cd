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

// One layer's decode attention: every cached token's K/V (or MLA latent) read once at the read
// bandwidth, or the decodes' attention FLOPs at its sustained rate where that is slower, as one
// kernel (the fixed cost `kernel_latency_s`, then its work).
struct DecodeAttention {
  double local_share = 0;  // layers attending locally (ModelSpec::window), of all
  bool windowed = false;   // the model has local layers: they read decode_local_tokens
  double kv_bytes_per_token_layer = 0;
  double heads_local = 1;    // query heads on one rank
  double qk_plus_v_dim = 0;  // query-key plus value head dims (FlashAttention's convention)
  double data_share = 1;     // a rank's share of the sequences (1 / tp under attention-DP)
  double hbm_bytes_per_s = 1;
  double flops_per_s = 1;  // decode attention's sustained FLOP/s
  double kernel_latency_s = 0;

  // A layer's mean keys over the model's global and local layers.
  double keys(double context_tokens, double local_tokens) const {
    const double global = 1 - local_share;
    return global * context_tokens + local_share * (windowed ? local_tokens : context_tokens);
  }
  // The layer's attention kernel reading `cache_bytes` (the decodes' keys' and any prompt
  // chunk's cached context) with `keys` decode keys; `decodes`: the step decodes (or reads
  // decode context), else only the read is priced.
  double layer_s(double decode_keys, double cache_bytes, bool decodes) const {
    const double decode_flops = 2 * decode_keys * heads_local * qk_plus_v_dim;
    const double read_s = cache_bytes * data_share / hbm_bytes_per_s;
    if (!decodes) return read_s;
    return kernel_latency_s + std::max(read_s, decode_flops * data_share / flops_per_s);
  }
};

// A decode-only step of a fixed batch (its decodes and sampling rows): the step's terms that do
// not depend on the keys read (GEMMs, collectives, small kernels, LM head, pipeline hops, host),
// and attention's per step.
struct DecodeStepPrice {
  double gemm_s = 0, communication_s = 0, other_s = 0, overhead_s = 0;
  DecodeAttention attention;
  double stage_layers = 0;  // layers of the largest pipeline stage
  double pp = 1;
  double micro_batches = 1;  // step_time.h micro_batches: pp, or the decodes where fewer

  // StepTimeModel::time(batch).total_s() of the batch with these decodes reading
  // `context_tokens` (and `local_tokens` under local attention), summed over its sequences.
  double step_s(double context_tokens, double local_tokens) const {
    const double keys = attention.keys(context_tokens, local_tokens);
    const double layer_s = attention.layer_s(keys, keys * attention.kv_bytes_per_token_layer, true);
    const double attention_s = layer_s * stage_layers / micro_batches * pp;
    return gemm_s + attention_s + communication_s + other_s + overhead_s;
  }
};

// The price of decode-only steps of `decodes` sequences, `sampled` of them sampling a token.
using DecodePriceFn = std::function<DecodeStepPrice(int64_t decodes, int64_t sampled)>;

}  // namespace meshplan::serving
