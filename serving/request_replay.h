// Discrete-event replay of requests through one replica's continuous-batching scheduler.
//
// Time advances by engine steps. Before each step the scheduler admits waiting requests that
// have arrived, in arrival order, while the replica runs fewer than max_batch sequences and the
// KV cache has room for the request's whole isl + osl (block-rounded; TensorRT-LLM's default
// GUARANTEED_NO_EVICT policy, so no request is ever preempted). A step then carries one decode
// token for every sequence past its prompt and, with the step's remaining token budget
// (max_step_tokens), chunks of the admitted prompts in admission order (chunked prefill, as
// vLLM V1 and SGLang schedule by default; TensorRT-LLM's default runs each prompt whole, see
// chunked_prefill below). A request's first token comes at the end of the step that finishes
// its prompt; each later step adds one token. When nothing can run the clock jumps to the next
// arrival, so an idle replica serves an arrival at once.
// KV policy: TensorRT-LLM's GUARANTEED_NO_EVICT reserves a request's whole isl + osl at
// admission (above). vLLM and SGLang allocate as sequences grow (ReplayLimits::cache_tokens
// set): a request is admitted when its prompt fits; before each step every decoding sequence
// takes the cache of the token it adds, and when the cache is full the sequence admitted last is
// preempted (vLLM V1 Scheduler.schedule: self.running.pop(), recompute mode; SGLang retracts
// decode requests likewise): its cache is freed, it goes back to the head of the queue, and on
// readmission it prefills its prompt and the tokens it had generated again.
// The replay is step by step; where nothing but the decodes' lengths changes from one step to
// the next it sums the run of steps without visiting each sequence, and a sequence asks for
// cache only where it crosses into a new page (ReplayLimits::cache_block_tokens), the same step
// for step as asking every token (tests/serving/replay_paths_test.cc); given a decode price
// (decode_step_price.h), such a run's steps are priced from fixed terms computed once.
// Load: offline (every request at time 0), closed loop (`concurrency` requests in flight; each
// finish releases the next, which reaches the engine ReplayLimits::front_end_s later; the first
// wave, which arrives at once, is warm-up and left out of the latency statistics when at least as
// many requests follow it), open loop (Poisson arrivals from a fixed seed: exponential gaps −ln(1 −
// u)/rate with u from std::mt19937_64, identical on every platform).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "serving/decode_step_price.h"
#include "serving/kv_cache.h"
#include "serving/request_lengths.h"
#include "serving/serving_options.h"
#include "serving/step_time.h"

namespace meshplan::serving {

// Requests replayed when the workload names none: enough for stable means and p99 (100 the
// least; ten times the concurrency in a closed loop).
constexpr int64_t kDefaultRequests = 1000;
constexpr int64_t kMaxRequests = 200000;

struct ReplayLimits {
  int64_t max_batch = 1;
  int64_t max_step_tokens = 8192;
  int64_t kv_tokens = 0;           // tokens the replica's cache holds
  int64_t tokens_per_request = 0;  // isl + osl, block-rounded
  bool record_steps = false;       // keep the first kMaxRecordedSteps steps (for traces)
  // Split prompts across steps (chunked prefill). Off, a prompt runs whole in one step once the
  // step's remaining token budget holds it, and the prompts behind it wait (first come, first
  // served); a prompt longer than max_step_tokens is still split, as the engine must.
  bool chunked_prefill = true;
  // Decodes and prompt chunks share a step. Off (SGLang's prefill-first scheduler), a step with
  // any admitted prompt left carries prompt chunks alone, within the whole token budget, and
  // the decoding sequences wait for the next step without prompts.
  bool mixed_steps = true;
  // Prompt tokens one step takes in whole prompts past its first, less the step's decodes
  // (SGLang's PrefillAdder and --max-prefill-tokens); 0: only max_step_tokens bounds them.
  int64_t max_prefill_tokens = 0;
  // SGLang's admission reserve (PrefillAdder): a waiting request is admitted only while its
  // prompt (past a cached prefix) plus its answer (clipped at 4096) stays under the free cache less
  // each running sequence's answer left (clipped) × a ratio, which starts at 0.7, falls by (0.7 −
  // 0.098) / 600 each decode step to 0.098, returns to 0.7 when the replica idles, and after a
  // preemption is re-estimated as (tokens decoded + 20 × sequences) / (answer tokens + 1) over
  // those left running. Off: a request is admitted when its prompt's cache fits.
  bool reserves_answers = false;
  // The model's local attention (ModelSpec::attended_window: its window, or sparse attention's
  // top_k), for what a decode reads on those layers.
  std::optional<AttentionWindow> window;
  // Engines that allocate the cache as sequences grow (see the header comment): the cache a
  // sequence of n tokens holds (kv_cache.h RequestCache). Empty: whole isl + osl
  // reserved at admission (tokens_per_request).
  std::function<int64_t(int64_t)> cache_tokens;
  // cache_tokens(n) is the same for every n that rounds up to one multiple of this (its page
  // size): a sequence asks for more cache only where it crosses into a new page. 0: not known,
  // asked for every token.
  int64_t cache_block_tokens = 0;
  // A prompt prefix every request shares (kv_cache.h PrefixReuse), its cache warm: each request
  // computes its prompt from `prefix_reused_tokens` on and holds its tokens less the prefix's
  // whole blocks (`prefix_shared_tokens`, held once: left out of kv_tokens by the caller, as is
  // tokens_per_request). Preempted, a sequence keeps the prefix.
  int64_t prefix_reused_tokens = 0;
  int64_t prefix_shared_tokens = 0;
  // The serving front end's time per request (engine_preset.h front_end_s): in a closed loop a
  // finished request's successor reaches the engine this long after it finished (the answer's
  // way back to the client and the next request's way in). add_front_end adds it to TTFT.
  double front_end_s = 0;
  // Requests of different lengths (request_lengths.h): the cache a request of isl + osl tokens
  // reserves at admission, less the shared prefix's blocks. Empty: tokens_per_request, every
  // request the same.
  std::function<int64_t(int64_t)> reserve_tokens;
  // The cache a request of `sequence` tokens holds on demand, the shared prefix aside.
  int64_t held_tokens(int64_t sequence) const {
    return cache_tokens(sequence) - prefix_shared_tokens;
  }
  // The longest sequence the cache held for `sequence` also covers (ReplayRequest::held_until);
  // 0 where the cache is not allocated on demand or its page size is not known.
  int64_t held_until(int64_t sequence) const {
    if (!cache_tokens || cache_block_tokens <= 0) return 0;
    return block_rounded_tokens(sequence, cache_block_tokens);
  }
  // The cache a request of `sequence` = isl + osl tokens takes when admitted with `prompt`
  // tokens to hold: the prompt's on demand, else its whole isl + osl.
  int64_t admission_tokens(int64_t prompt, int64_t sequence) const {
    if (cache_tokens) return held_tokens(prompt);
    return reserve_tokens ? reserve_tokens(sequence) : tokens_per_request;
  }
};

// SGLang's reserve constants (global_config.py / environ.py: SGLANG_INIT_NEW_TOKEN_RATIO 0.7,
// SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600,
// SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION 4096, retract_decode_steps 20).
struct AnswerReserve {
  static constexpr double kInitRatio = 0.7;
  static constexpr double kMinRatio = 0.7 * 0.14;
  static constexpr double kDecayPerStep = (kInitRatio - kMinRatio) / 600;
  static constexpr int64_t kClipTokens = 4096;
  static constexpr int64_t kRetractSteps = 20;
};

// Steps a replay records when asked: enough for a trace one can open.
constexpr int64_t kMaxRecordedSteps = 100000;

// One engine step of the replay.
struct ReplayStep {
  double start_s = 0, duration_s = 0;
  int64_t decodes = 0, prefill_tokens = 0, chunks = 0;
};

// `scheduled_s`: the start of the first step that computes part of its prompt (the end of its
// wait in the queue: for admission, for the step under way, for the prompts ahead of it).
// `output_tokens`: its answer's length (osl, or its own under a length spread).
struct RequestTimes {
  double arrival_s = 0, first_token_s = 0, finish_s = 0, scheduled_s = 0;
  int64_t output_tokens = 0;
  // Time per output token after the first (0 for a one-token answer).
  double tpot_s() const {
    return output_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(output_tokens - 1)
                             : 0;
  }
};

struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  int64_t count = 0;  // samples (0: none, e.g. TPOT of one-token answers; the values are 0)
};

struct ReplayResult {
  // In arrival order. A search keeps its estimates' replays without them (serving_search.cc:
  // probe), so what a result says of its requests it says in the fields below as well.
  std::vector<RequestTimes> requests;
  int64_t requests_replayed = 0;  // requests.size() when summarized
  double arrival_span_s = 0;      // the last request's arrival less the first's (0 for one)
  int64_t measured_from = 0;      // latencies count requests from this index on
  int64_t steps = 0;
  double duration_s = 0;  // first arrival to last finish
  double output_tokens_per_s = 0;
  double mean_batch = 0;    // sequences per step, averaged over steps
  int64_t preemptions = 0;  // sequences preempted to free cache (on-demand allocation only)
  LatencyStats ttft_s, tpot_s;
  // The part of TTFT spent queued: arrival to the start of the first step computing the prompt
  // (RequestTimes::scheduled_s); the rest of TTFT is that step and any later ones of the prompt.
  LatencyStats queue_s;
  std::vector<ReplayStep> recorded;  // with limits.record_steps: the first steps, in order
  // Disaggregated replays: the share of each pool's worker time spent in steps over the replay's
  // duration (rate matching: the busier pool bounds the throughput). 0 otherwise.
  double prefill_pool_busy = 0, decode_pool_busy = 0;
  // Disaggregated replays: each pool's worker time in steps (the shares' numerators), and the
  // workers it gave work: one more than the highest index given a prompt (prefill) or a
  // sequence (decode). Workers above that index never took part (pool_replay_memo.h).
  double prefill_busy_s = 0, decode_busy_s = 0;
  int64_t prefill_workers_used = 0, decode_workers_used = 0;
  // The part of every request's TTFT spent in the serving front end, outside the engine
  // (add_front_end); ttft_s includes it, queue_s does not.
  double front_end_s = 0;
};

using StepTimeFn = std::function<double(const StepBatch&)>;

// One request's progress through a replay.
struct ReplayRequest {
  int64_t isl = 0, osl = 0;  // its prompt and answer lengths
  double arrival_s = 0, first_token_s = 0, finish_s = 0;
  double scheduled_s = -1;  // RequestTimes::scheduled_s; −1 until a step takes its prompt
  int64_t prefilled = 0, generated = 0;  // prompt tokens computed, answer tokens produced
  // Tokens to prefill: isl, or isl + generated when readmitted after a preemption.
  int64_t prompt = 0;
  int64_t held = 0;  // cache tokens held while running
  // On demand: sequences up to this length need no more cache than `held` (ReplayLimits::
  // held_until of the length it was taken for; 0: ask).
  int64_t held_until = 0;
};

// One worker's cache under the on-demand rule (ReplayLimits::cache_tokens; the header comment),
// shared by the aggregated and the disaggregated replays: the sequences it runs, in admission
// order, its free cache tokens, and where a preempted sequence goes (the head of `waiting`).
struct OnDemandWorker {
  std::vector<ReplayRequest>& requests;
  std::vector<int64_t>& running;
  int64_t& free_kv;
  std::deque<int64_t>& waiting;
  int64_t& preemptions;
  // Every decoding sequence (its prompt computed), in admission order, takes the cache of the
  // token it adds this step; when the cache is full the sequence admitted last is preempted,
  // until the one asking fits or is itself preempted (vLLM V1's scheduler). Nothing without
  // limits.cache_tokens.
  void grow(const ReplayLimits& limits);
  // The last admitted sequence frees its cache and waits again, to recompute its prompt and
  // answer so far (isl + generated, past the reused prefix) when readmitted.
  void preempt_last(const ReplayLimits& limits);
};

// Requests a replay has in flight at once: a closed loop's concurrency (at least 1), else all
// `count`.
int64_t requests_in_flight(const Workload& w, int64_t count);
// Requests left out of the latency statistics: a closed loop's first wave (its `concurrency`
// requests, which arrive at once) when at least as many follow it and the workload does not
// measure it (Workload::first_wave_measured); none otherwise.
int64_t warmup_requests(const Workload& w, int64_t count);
// Throughput and latency statistics of replayed requests (arrival order), latencies over the
// requests from `measured_from` on; steps, mean_batch and recorded are left to the caller.
ReplayResult summarize_requests(std::vector<RequestTimes> requests, int64_t measured_from);
// r.arrival_span_s from its requests' arrivals (as add_front_end left them).
void set_arrival_span(ReplayResult& r);
// summarize_requests over a replay's requests of workload `w`, its warm-up left out.
ReplayResult summarize_replay(const std::vector<ReplayRequest>& requests, const Workload& w);
// Requests replayed for `w`: a trace's (at most `requests` of them), else its own count, else the
// defaults above.
int64_t replay_request_count(const Workload& w);
// The longest isl + osl among the requests a replay of `w` runs (request_lengths).
int64_t longest_replayed_sequence(const Workload& w);
// The longest prompt among them.
int64_t longest_replayed_prompt(const Workload& w);
// Arrival times: all 0 (offline), the first `concurrency` at 0 (closed loop; the rest are set
// by the replay), Poisson, or a trace's. REQUIRES: the count ≥ 1 (at most the trace's size).
std::vector<double> initial_arrivals(const Workload& w, int64_t count);
// The `count` requests of a replay of `w`: their arrivals (initial_arrivals) and lengths
// (request_lengths), the prompt each computes set to its isl.
std::vector<ReplayRequest> initial_requests(const Workload& w, int64_t count);

// Replays the workload (per replica: concurrency and rate already divided by the replicas).
// REQUIRES: limits.max_batch ≥ 1, limits.kv_tokens ≥ what the longest request takes (whole, or
// on demand at its last token), isl, osl ≥ 1.
// `decode_price`, where given, prices the steps that only decode (decode_step_price.h); it
// must answer what step_time_s answers for them (StepTimeModel::decode_price does, bit for bit).
ReplayResult replay_requests(const Workload& w, const ReplayLimits& limits,
                             const StepTimeFn& step_time_s, const DecodePriceFn& decode_price = {});

// The serving front end (engine_preset.h front_end_s) as the client sees it: every request's
// TTFT grows by `front_end_s` (its arrival_s moves that much earlier: the client sent it before
// the engine saw it) and the TTFT statistics with it (each quantile moves by the same constant);
// queue time, TPOT, throughput and the steps stay as replayed. In a closed loop the replay itself
// holds the front end too (ReplayLimits::front_end_s: each successor reaches the engine that long
// after the request it follows finished). REQUIRES: front_end_s ≥ 0.
void add_front_end(ReplayResult& r, double front_end_s);

// Nearest-rank percentiles and the mean of `values` (all zero when empty).
LatencyStats latency_stats(std::vector<double> values);

}  // namespace meshplan::serving
