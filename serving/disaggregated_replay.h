// Discrete-event replay of requests through disaggregated prefill and decode pools (NVIDIA
// Dynamo, SGLang's and vLLM's prefill/decode disaggregation, DistServe: Zhong et al. 2024,
// arXiv 2401.09670).
//
// Prefill workers run prompts only: an idle worker takes waiting prompts first come, first
// served, whole, while the step's token budget holds them (a prompt longer than the budget runs
// alone in budget-sized chunks over consecutive steps). When a prompt's last chunk ends, its KV
// cache moves to the decode pool (transfer_s later), and the decode worker streams the answer:
// the first token reaches the client when the transfer ends, as in SGLang's and Dynamo's designs,
// where the decode worker returns every token. Decode workers run decode-only continuous
// batching: a transferred request joins the worker with the fewest sequences that has room
// (max_batch and KV blocks as the aggregated replay admits: the whole request's for TensorRT-LLM,
// the prompt's for engines that allocate on demand; ties to the lowest index), at that worker's
// next step; waiting requests queue first come, first served. Each decode step adds one token
// to every sequence of its worker; a request finishes after osl − 1 of them. On demand
// (ReplayLimits::cache_tokens), each step's tokens take cache first and a full worker preempts
// its sequence admitted last: it goes back to the head of the decode queue and, readmitted,
// recomputes its prompt and answer so far on its decode worker (vLLM's recompute preemption,
// run by the decode instance's scheduler). Prefill workers' KV capacity is not limited (prompts
// leave as their transfer starts). Load as in request_replay.h: offline, closed loop (a finish
// issues the next request, which reaches the prefill pool decode.front_end_s later), Poisson.
// A decode worker keeps its sequences' answers lazily (one more token each per step) and what a
// step needs in sums and queues, the same step for step as visiting every sequence
// (tests/serving/replay_paths_test.cc). It runs its steps as runs, one event each: from a step
// on, while its steps are plain decodes that nothing else can touch, up to the step at which its
// first sequence finishes or the next crosses into a new page; a sequence given to it meanwhile
// cuts the run at the step under way, and a preemption that leaves sequences waiting cuts every
// run there (the next event asks for room again at the first step end, as step by step). A run
// sums its local-attention keys per step without visiting each sequence (local_keys.h) and, given
// decode_price, prices its steps from fixed terms computed once (decode_step_price.h). So
// decode_step_s (or the price) is also asked for steps a cut drops: it must be a function of the
// batch alone.
// An event visits only the workers it concerns (busy ones kept by the end of their step).
// Deterministic: events at one time run in a fixed order (prefill completions, decode completions,
// arrivals, transfers, admissions, prefill starts, decode starts; workers by index).
#pragma once

#include <cstdint>

#include "serving/request_replay.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

struct DisaggregatedLimits {
  int64_t prefill_workers = 1;
  int64_t prefill_step_tokens = 8192;  // prompt tokens one prefill step carries
  int64_t decode_workers = 1;
  ReplayLimits decode;  // one decode worker: max_batch, kv_tokens, tokens_per_request, cache_tokens
  // One request's KV cache, prefill worker to decode worker: a fixed latency and a time per
  // prompt token.
  double kv_transfer_latency_s = 0, kv_transfer_s_per_token = 0;
  double transfer_s(int64_t isl) const {
    return kv_transfer_latency_s + kv_transfer_s_per_token * static_cast<double>(isl);
  }
};

// REQUIRES: workers ≥ 1, prefill_step_tokens ≥ 1, decode.max_batch ≥ 1 and decode.kv_tokens ≥
// what the longest request takes (request_replay.h). `steps` and `mean_batch` of the result count
// decode steps; prefill_pool_busy and decode_pool_busy say how well the pools' rates match.
// `decode_price`, where given, prices the decode workers' runs of plain decodes as in
// replay_requests (bit for bit what decode_step_s answers for them).
// `r`'s pool shares (prefill_pool_busy, decode_pool_busy) over pools of the given sizes: each
// pool's busy seconds over its workers × the duration (left 0 for a zero duration).
void set_pool_busy(ReplayResult& r, int64_t prefill_workers, int64_t decode_workers);

ReplayResult replay_disaggregated(const Workload& w, const DisaggregatedLimits& limits,
                                  const StepTimeFn& prefill_step_s, const StepTimeFn& decode_step_s,
                                  const DecodePriceFn& decode_price = {});

}  // namespace meshplan::serving
