// The request replay against closed forms: hand-traced small cases and M/D/1 queueing.
#include "serving/request_replay.h"

#include <doctest/doctest.h>

#include "serving/replay_trace.h"
#include "serving/request_trace.h"

using namespace meshplan::serving;

namespace {

ReplayLimits roomy(int64_t max_batch) {
  ReplayLimits l;
  l.max_batch = max_batch;
  l.kv_tokens = 1'000'000;
  l.tokens_per_request = 100;
  return l;
}

double constant_step(const StepBatch&) { return 1.0; }

// Every request at time 0.
Workload offline(int64_t isl, int64_t osl, int64_t requests) {
  Workload w;
  w.isl = isl;
  w.osl = osl;
  w.requests = requests;
  return w;
}

// `concurrency` requests in flight, each finish releasing the next.
Workload closed_loop(int64_t isl, int64_t osl, double concurrency, int64_t requests) {
  Workload w = offline(isl, osl, requests);
  w.load = LoadKind::concurrency;
  w.concurrency = concurrency;
  return w;
}

// One-second steps, each step's tokens appended to `tokens`.
StepTimeFn logging_step(std::vector<int64_t>& tokens) {
  return [&tokens](const StepBatch& b) {
    tokens.push_back(b.tokens());
    return 1.0;
  };
}

// Requests arriving at the trace's times, with its lengths.
Workload traced(std::vector<TracedRequest> requests) {
  Workload w;
  w.trace = std::make_shared<const std::vector<TracedRequest>>(std::move(requests));
  w.load = LoadKind::trace;
  return w;
}

// What each step carried: decodes, their summed context, prompt tokens.
struct StepSeen {
  int64_t decodes = 0;
  double context = 0;
  int64_t prompt = 0;
  bool operator==(const StepSeen&) const = default;
};

// One-second steps, each step's batch appended to `seen`.
StepTimeFn seeing_step(std::vector<StepSeen>& seen) {
  return [&seen](const StepBatch& b) {
    int64_t prompt = 0;
    for (const PrefillChunk& c : b.chunks) prompt += c.tokens;
    seen.push_back({b.decodes, b.decode_context_tokens, prompt});
    return 1.0;
  };
}

}  // namespace

TEST_CASE("replay: closed loop of 4, one prompt step then two decode steps per request") {
  const Workload w = closed_loop(1, 3, 4, 8);
  const ReplayResult r = replay_requests(w, roomy(8), constant_step);
  CHECK(r.steps == 6);
  CHECK(r.ttft_s.mean == 1.0);
  CHECK(r.tpot_s.mean == 1.0);
  CHECK(r.duration_s == 6.0);
  CHECK(r.output_tokens_per_s == doctest::Approx(8.0 * 3 / 6));
  CHECK(r.requests[4].arrival_s == 3.0);
  CHECK(r.requests[4].first_token_s == 4.0);
}

TEST_CASE(
    "replay: a closed loop's first wave is warm-up unless the workload measures it, as AIPerf "
    "does after draining its warm-up") {
  // Two in flight, 4-token prompts, 2-token answers, 6 tokens a step, prompts whole: A prefills
  // in step 1 (TTFT 1); B does not fit beside it and prefills in step 2 beside A's decode (TTFT
  // 2); A finishes at 2 and C arrives, prefilled in step 3 beside B's decode (TTFT 1); D likewise
  // (TTFT 1).
  Workload w = closed_loop(4, 2, 2, 4);
  ReplayLimits limits = roomy(2);
  limits.max_step_tokens = 6;
  limits.chunked_prefill = false;
  const ReplayResult warm = replay_requests(w, limits, constant_step);
  CHECK(warm.measured_from == 2);
  CHECK(warm.ttft_s.mean == 1.0);
  w.first_wave_measured = true;
  const ReplayResult all = replay_requests(w, limits, constant_step);
  CHECK(all.measured_from == 0);
  CHECK(all.ttft_s.mean == doctest::Approx((1.0 + 2 + 1 + 1) / 4));
  CHECK(all.requests[1].first_token_s == 2.0);
}

TEST_CASE("replay: chunked prefill splits a 10-token prompt into 4 + 4 + 2") {
  Workload w;
  w.isl = 10;
  w.osl = 2;
  w.requests = 1;
  std::vector<int64_t> chunk_tokens;
  ReplayLimits limits = roomy(1);
  limits.max_step_tokens = 4;
  const ReplayResult r = replay_requests(w, limits, [&](const StepBatch& b) {
    chunk_tokens.push_back(b.chunks.empty() ? -b.decodes : b.chunks[0].tokens);
    return 1.0;
  });
  CHECK(chunk_tokens == std::vector<int64_t>{4, 4, 2, -1});
  CHECK(r.ttft_s.mean == 3.0);
  CHECK(r.requests[0].finish_s == 4.0);
}

TEST_CASE("replay: without chunked prefill a prompt waits for a step whose budget holds it") {
  // Offline, two 6-token prompts, 8 tokens a step: the first runs whole; the second does not fit
  // the 2 left (chunked: 6 + 2) and runs whole in the next step beside the first's decode.
  Workload w;
  w.isl = 6;
  w.osl = 2;
  w.requests = 2;
  ReplayLimits limits = roomy(2);
  limits.max_step_tokens = 8;
  limits.chunked_prefill = false;
  std::vector<int64_t> tokens;
  const ReplayResult r = replay_requests(w, limits, [&](const StepBatch& b) {
    tokens.push_back(b.tokens());
    return 1.0;
  });
  CHECK(tokens == std::vector<int64_t>{6, 7, 1});
  CHECK(r.requests[0].first_token_s == 1.0);
  CHECK(r.requests[1].first_token_s == 2.0);
  // A prompt longer than the whole budget is still split (4 + 4 + 2), as the engine must.
  w.isl = 10;
  w.requests = 1;
  limits.max_step_tokens = 4;
  tokens.clear();
  replay_requests(w, limits, [&](const StepBatch& b) {
    tokens.push_back(b.tokens());
    return 1.0;
  });
  CHECK(tokens == std::vector<int64_t>{4, 4, 2, 1});
}

TEST_CASE("replay: without mixed steps a prompt runs alone and the decodes wait for it") {
  // Offline, two 4-token prompts, 4 tokens a step, answers of 3 tokens. Mixed (vLLM,
  // TensorRT-LLM): A's prompt; A's decode beside 3 of B's prompt; A's last decode beside B's
  // last prompt token; B's two decodes: first tokens at 1 and 3, 5 steps. Prefill-first
  // (SGLang): A's prompt; B's prompt alone while A waits; two steps decoding both: first tokens
  // at 1 and 2, both done at 4.
  const Workload w = offline(4, 3, 2);
  ReplayLimits limits = roomy(2);
  limits.max_step_tokens = 4;
  std::vector<int64_t> tokens;
  const StepTimeFn step = logging_step(tokens);
  const ReplayResult mixed = replay_requests(w, limits, step);
  CHECK(tokens == std::vector<int64_t>{4, 4, 2, 1, 1});
  CHECK(mixed.ttft_s.mean == 2.0);
  CHECK(mixed.requests[1].finish_s == 5.0);
  limits.mixed_steps = false;
  tokens.clear();
  const ReplayResult apart = replay_requests(w, limits, step);
  CHECK(tokens == std::vector<int64_t>{4, 4, 2, 2});
  CHECK(apart.ttft_s.mean == 1.5);
  CHECK(apart.tpot_s.mean == 1.25);  // A: (4 − 1) / 2, B: (4 − 2) / 2
  CHECK(apart.requests[0].finish_s == 4.0);
  CHECK(apart.requests[1].finish_s == 4.0);
}

TEST_CASE("replay: a prefill-token cap takes whole prompts past the first, less the decodes") {
  // Offline, three 4-token prompts, answers of 2, 12 tokens a step. With no cap the three prompts
  // share the first step. With SGLang's --max-prefill-tokens 6: A alone (B's 4 > 6 − 4); A's
  // last decode and B (room 6 − 1 = 5; C's 4 > 1); B's last decode and C; C's last decode.
  const Workload w = offline(4, 2, 3);
  ReplayLimits limits = roomy(3);
  limits.max_step_tokens = 12;
  std::vector<int64_t> tokens;
  const StepTimeFn step = logging_step(tokens);
  replay_requests(w, limits, step);
  CHECK(tokens == std::vector<int64_t>{12, 3});
  limits.max_prefill_tokens = 6;
  tokens.clear();
  const ReplayResult capped = replay_requests(w, limits, step);
  CHECK(tokens == std::vector<int64_t>{4, 5, 5, 1});
  CHECK(capped.requests[2].first_token_s == 3.0);
}

TEST_CASE("replay: SGLang's answer reserve admits a request only beside the answers left") {
  // Offline, three requests of 2 + 4 tokens, a cache of 10 taken as sequences grow. SGLang's
  // PrefillAdder: A needs 2 + 4 = 6 < 10, admitted; B needs 6 against 10 − 6 = 4: waits. While A
  // decodes B still waits (after step 1: free 7 − 1 mixed decode − 3 answer tokens left × 0.7 =
  // 3.9 < 6). When A finishes at 4 the cache is empty again: B runs 4-8, C 8-12. Without the
  // reserve all three prompts fit at once and share the first step.
  const Workload w = offline(2, 4, 3);
  ReplayLimits limits = roomy(8);
  limits.max_step_tokens = 100;
  limits.kv_tokens = 10;
  limits.tokens_per_request = 6;
  limits.cache_tokens = [](int64_t tokens) { return tokens; };
  limits.reserves_answers = true;
  const ReplayResult reserved = replay_requests(w, limits, constant_step);
  CHECK(reserved.requests[0].first_token_s == 1.0);
  CHECK(reserved.requests[0].finish_s == 4.0);
  CHECK(reserved.requests[1].first_token_s == 5.0);
  CHECK(reserved.requests[1].finish_s == 8.0);
  CHECK(reserved.requests[2].first_token_s == 9.0);
  CHECK(reserved.requests[2].finish_s == 12.0);
  CHECK(reserved.preemptions == 0);
  limits.reserves_answers = false;
  const ReplayResult eager = replay_requests(w, limits, constant_step);
  CHECK(eager.requests[1].first_token_s == 1.0);
  CHECK(eager.requests[2].first_token_s == 1.0);
}

TEST_CASE("replay: the KV cache admits only the requests whose whole isl + osl fits") {
  Workload w;
  w.isl = 1;
  w.osl = 2;
  w.requests = 4;       // offline: all at time 0
  ReplayLimits limits;  // room for two requests of 100 tokens
  limits.max_batch = 10;
  limits.kv_tokens = 200;
  limits.tokens_per_request = 100;
  int64_t widest = 0;
  replay_requests(w, limits, [&](const StepBatch& b) {
    widest = std::max(widest, b.tokens());
    return 1.0;
  });
  CHECK(widest == 2);
}

// The first three requests of seed 1 with prompts 100 ± 20 and answers 10 ± 5 tokens
// (request_lengths_test pins them): 114 + 11, 133 + 6 and 98 + 17 tokens.
Workload three_drawn() {
  Workload w = offline(100, 10, 3);
  w.isl_stdev = 20;
  w.osl_stdev = 5;
  return w;
}

TEST_CASE("replay: each request prefills its own prompt and stops after its own answer") {
  // One at a time, one-second steps: a prompt step gives the first token, osl - 1 decode steps
  // the rest. Request 0: first token 1, done 11; request 1: 12, 17; request 2: 18, 34.
  std::vector<int64_t> tokens;
  const ReplayResult r = replay_requests(three_drawn(), roomy(1), logging_step(tokens));
  REQUIRE(r.requests.size() == 3);
  CHECK(r.requests[0].first_token_s == 1.0);
  CHECK(r.requests[0].finish_s == 11.0);
  CHECK(r.requests[1].first_token_s == 12.0);
  CHECK(r.requests[1].finish_s == 17.0);
  CHECK(r.requests[2].first_token_s == 18.0);
  CHECK(r.requests[2].finish_s == 34.0);
  CHECK(r.requests[2].output_tokens == 17);
  CHECK(tokens[0] == 114);
  CHECK(tokens[11] == 133);
  CHECK(tokens[17] == 98);
  CHECK(r.ttft_s.mean == doctest::Approx(31.0 / 3));
  CHECK(r.tpot_s.mean == doctest::Approx(1.0));
  CHECK(r.output_tokens_per_s == doctest::Approx(34.0 / 34));
}

TEST_CASE("replay: under a length spread a request reserves its own isl + osl") {
  // Cache 125 + 139 = 264 tokens: requests 0 and 1 start together (first tokens at 1);
  // request 2 (115 tokens) waits until request 1 finishes at 6 and frees 139, prefills beside
  // request 0's decode in [6, 7] and finishes 16 steps later, at 23.
  ReplayLimits limits = roomy(8);
  limits.kv_tokens = 264;
  limits.reserve_tokens = [](int64_t sequence) { return sequence; };
  const ReplayResult r = replay_requests(three_drawn(), limits, constant_step);
  REQUIRE(r.requests.size() == 3);
  CHECK(r.requests[0].first_token_s == 1.0);
  CHECK(r.requests[1].first_token_s == 1.0);
  CHECK(r.requests[1].finish_s == 6.0);
  CHECK(r.requests[2].scheduled_s == 6.0);
  CHECK(r.requests[2].first_token_s == 7.0);
  CHECK(r.requests[2].finish_s == 23.0);
  CHECK(r.requests[0].finish_s == 11.0);
  CHECK(r.ttft_s.mean == doctest::Approx(3.0));
}

TEST_CASE("replay: a cache allocated as sequences grow preempts the sequence admitted last") {
  // Two offline requests of 2 + 4 tokens, one step a second, a 9-token cache, one-token blocks.
  // Both prompts fit (2 + 2), and each decode takes one more token: after three steps they hold
  // 4 + 4, and the third decode finds one free token for two sequences. The second (admitted
  // last) is preempted, frees its 4, and waits for its 2 + 3 = 5 tokens to prefill again; the
  // first finishes at 4 s, the second prefills 5 tokens in the fifth step, which also gives its
  // fourth token: done at 5 s, its first token still at 1 s.
  Workload w;
  w.isl = 2;
  w.osl = 4;
  w.requests = 2;
  ReplayLimits limits;
  limits.max_batch = 2;
  limits.kv_tokens = 9;
  limits.tokens_per_request = 6;
  limits.cache_tokens = [](int64_t tokens) { return tokens; };
  std::vector<int64_t> prefill_tokens;
  const ReplayResult r = replay_requests(w, limits, [&](const StepBatch& b) {
    int64_t p = 0;
    for (const PrefillChunk& c : b.chunks) p += c.tokens;
    prefill_tokens.push_back(p);
    return 1.0;
  });
  CHECK(prefill_tokens == std::vector<int64_t>{4, 0, 0, 0, 5});
  CHECK(r.preemptions == 1);
  CHECK(r.requests[0].first_token_s == 1.0);
  CHECK(r.requests[0].finish_s == 4.0);
  CHECK(r.requests[1].first_token_s == 1.0);
  CHECK(r.requests[1].finish_s == 5.0);
  // Reserving each request's whole 6 tokens instead runs them one after the other.
  limits.cache_tokens = nullptr;
  const ReplayResult whole = replay_requests(w, limits, constant_step);
  CHECK(whole.preemptions == 0);
  CHECK(whole.requests[1].first_token_s == 5.0);
  CHECK(whole.requests[1].finish_s == 8.0);
}

TEST_CASE("replay: decode-only steps stop at the step an arrival could be admitted") {
  // A (arrives at 0, 2 + 6 tokens) prefills in [0, 1) and decodes alone with 3, 4, 5 tokens of
  // context in the steps from 1, 2 and 3 s; B (3.5 s, 2 + 2) is admitted at the step from 4 s,
  // which prefills it beside A's decode; both end in the step from 5 s.
  const Workload w = traced({{0.0, 2, 6}, {3.5, 2, 2}});
  std::vector<StepSeen> seen;
  const ReplayResult r = replay_requests(w, roomy(2), seeing_step(seen));
  CHECK(seen ==
        std::vector<StepSeen>{{0, 0, 2}, {1, 3, 0}, {1, 4, 0}, {1, 5, 0}, {1, 6, 2}, {2, 10, 0}});
  CHECK(r.requests[0].first_token_s == 1.0);
  CHECK(r.requests[0].finish_s == 6.0);
  CHECK(r.requests[1].first_token_s == 5.0);
  CHECK(r.requests[1].finish_s == 6.0);
}

TEST_CASE("replay: decode-only steps stop where the sequences' new pages no longer fit") {
  // Two offline requests of 2 + 6 tokens in 2-token pages, a 10-token cache: 2 + 2 held at
  // admission, 4 + 4 after the first decode (step from 1 s), and the step from 3 s finds 2 free
  // for the 4 their third page takes: B, admitted last, is preempted (frees 4) and waits for 6
  // (its 2 + 3 tokens so far, paged) while A decodes alone from 5 to 7 tokens; A's finish at
  // 6 s frees its 8, and B prefills its 5 tokens and decodes with 6 and 7.
  Workload w = offline(2, 6, 2);
  ReplayLimits limits;
  limits.max_batch = 2;
  limits.kv_tokens = 10;
  limits.cache_tokens = [](int64_t tokens) { return (tokens + 1) / 2 * 2; };
  limits.cache_block_tokens = 2;
  std::vector<StepSeen> seen;
  const ReplayResult r = replay_requests(w, limits, seeing_step(seen));
  CHECK(seen == std::vector<StepSeen>{{0, 0, 4},
                                      {2, 6, 0},
                                      {2, 8, 0},
                                      {1, 5, 0},
                                      {1, 6, 0},
                                      {1, 7, 0},
                                      {0, 0, 5},
                                      {1, 6, 0},
                                      {1, 7, 0}});
  CHECK(r.preemptions == 1);
  CHECK(r.requests[0].finish_s == 6.0);
  CHECK(r.requests[1].first_token_s == 1.0);
  CHECK(r.requests[1].finish_s == 9.0);
}

TEST_CASE("replay: decode-only steps after a prompt-only step take no cache twice") {
  // SGLang's scheduler (no mixed steps), one-token pages: A (0 s, 2 + 6) prefills alone and
  // decodes once; B (1.5 s, 2 + 4) is admitted at 2 s, and its prompt runs alone while A's
  // decode waits, A having taken the cache of its next token already: the decode-only steps
  // from 3 s ask A's page again and take nothing. A holds one token per token throughout.
  const Workload w = traced({{0.0, 2, 6}, {1.5, 2, 4}});
  ReplayLimits limits = roomy(2);
  limits.mixed_steps = false;
  limits.cache_tokens = [](int64_t tokens) { return tokens; };
  limits.cache_block_tokens = 1;
  std::vector<StepSeen> seen;
  const ReplayResult r = replay_requests(w, limits, seeing_step(seen));
  CHECK(seen == std::vector<StepSeen>{
                    {0, 0, 2}, {1, 3, 0}, {0, 0, 2}, {2, 7, 0}, {2, 9, 0}, {2, 11, 0}, {1, 7, 0}});
  CHECK(r.preemptions == 0);
  CHECK(r.requests[0].finish_s == 7.0);
  CHECK(r.requests[1].first_token_s == 3.0);
  CHECK(r.requests[1].finish_s == 6.0);
}

TEST_CASE("replay: a sequence asks for more cache only where it crosses into a new page") {
  // Pages of 4 tokens: a sequence of 5-8 tokens holds 8, one of 9-12 holds 12.
  ReplayLimits limits;
  limits.cache_tokens = [](int64_t tokens) { return (tokens + 3) / 4 * 4; };
  limits.cache_block_tokens = 4;
  CHECK(limits.held_until(5) == 8);
  CHECK(limits.held_until(8) == 8);
  CHECK(limits.held_until(9) == 12);
  limits.cache_block_tokens = 0;
  CHECK(limits.held_until(9) == 0);  // page size unknown: asked for every token
}

TEST_CASE("replay: skipping the tokens within a held page preempts and times as asking each") {
  // Twelve offline requests of 5 + 9 tokens in 4-token pages, a 100-token cache: they grow
  // past it and preempt one another. Knowing the page size must change nothing but the asking.
  const Workload w = offline(5, 9, 12);
  ReplayLimits limits = roomy(12);
  limits.kv_tokens = 100;
  int64_t asked = 0;
  limits.cache_tokens = [&asked](int64_t tokens) {
    ++asked;
    return (tokens + 3) / 4 * 4;
  };
  const ReplayResult every = replay_requests(w, limits, constant_step);
  const int64_t asked_every = asked;
  asked = 0;
  limits.cache_block_tokens = 4;
  const ReplayResult paged = replay_requests(w, limits, constant_step);
  CHECK(every.preemptions > 0);
  CHECK(paged.preemptions == every.preemptions);
  CHECK(paged.steps == every.steps);
  REQUIRE(paged.requests.size() == every.requests.size());
  for (size_t i = 0; i < every.requests.size(); ++i) {
    CHECK(paged.requests[i].first_token_s == every.requests[i].first_token_s);
    CHECK(paged.requests[i].finish_s == every.requests[i].finish_s);
  }
  CHECK(asked < asked_every);  // admissions ask too
}

TEST_CASE(
    "replay: with a shared prefix cached each prompt computes past it and holds only its own "
    "tokens") {
  // Two offline 10-token prompts, 6 of them a cached prefix (one-token blocks, allocated as
  // sequences grow), 2-token answers, a 10-token cache beside the prefix: each request holds
  // 10 − 6 = 4 at admission and 5 after its first token, so both run at once; each computes 4
  // prompt tokens after the 6 cached.
  Workload w;
  w.isl = 10;
  w.osl = 2;
  w.requests = 2;
  ReplayLimits limits;
  limits.max_batch = 2;
  limits.kv_tokens = 10;
  limits.cache_tokens = [](int64_t tokens) { return tokens; };
  limits.prefix_reused_tokens = 6;
  limits.prefix_shared_tokens = 6;
  std::vector<PrefillChunk> chunks;
  const ReplayResult r = replay_requests(w, limits, [&](const StepBatch& b) {
    chunks.insert(chunks.end(), b.chunks.begin(), b.chunks.end());
    return 1.0;
  });
  REQUIRE(chunks.size() == 2);
  for (const PrefillChunk& c : chunks) {
    CHECK(c.tokens == 4);
    CHECK(c.context_before == 6);
  }
  CHECK(r.preemptions == 0);
  CHECK(r.requests[1].first_token_s == 1.0);
  CHECK(r.requests[1].finish_s == 2.0);
  // Without the prefix each request holds its whole 10 + 1 of a 16-token cache (the 10 above
  // and the 6 the prefix took): the second prompt waits for the first to finish.
  limits.prefix_reused_tokens = limits.prefix_shared_tokens = 0;
  limits.kv_tokens = 16;
  const ReplayResult alone = replay_requests(w, limits, constant_step);
  CHECK(alone.requests[1].first_token_s == 3.0);
}

TEST_CASE("replay: TTFT splits into the time queued and the steps from the prompt's first") {
  // One sequence at a time, one-token prompts, two-token answers, 1 s steps: request k starts
  // its prompt at 2k s, when the one before it finishes, and has its first token a step later.
  ReplayLimits limits = roomy(1);
  const ReplayResult r = replay_requests(offline(1, 2, 3), limits, constant_step);
  CHECK(r.requests[0].scheduled_s == 0.0);
  CHECK(r.requests[1].scheduled_s == 2.0);
  CHECK(r.requests[2].scheduled_s == 4.0);
  CHECK(r.queue_s.mean == 2.0);
  CHECK(r.queue_s.p99 == 4.0);
  CHECK(r.ttft_s.mean == 3.0);
}

TEST_CASE("replay: the front end adds to every TTFT and leaves queue, TPOT and throughput") {
  // As above (TTFT 1, 3, 5 s; queued 0, 2, 4 s), then 8 ms of front end per request.
  ReplayResult r = replay_requests(offline(1, 2, 3), roomy(1), constant_step);
  const ReplayResult engine_only = r;
  add_front_end(r, 0.008);
  CHECK(r.front_end_s == 0.008);
  CHECK(r.ttft_s.mean == doctest::Approx(3.008));
  CHECK(r.ttft_s.p50 == doctest::Approx(3.008));
  CHECK(r.ttft_s.p99 == doctest::Approx(5.008));
  CHECK(r.requests[2].arrival_s == -0.008);  // the client sent it before the engine saw it
  CHECK(r.requests[2].first_token_s - r.requests[2].arrival_s == doctest::Approx(5.008));
  CHECK(r.queue_s.mean == engine_only.queue_s.mean);
  CHECK(r.tpot_s.mean == engine_only.tpot_s.mean);
  CHECK(r.output_tokens_per_s == engine_only.output_tokens_per_s);
  CHECK(r.duration_s == engine_only.duration_s);
}

TEST_CASE(
    "replay: in a closed loop each successor reaches the engine the front end's time after the "
    "request it follows finished") {
  // As the closed loop of 4 above (prompt step, two decode steps, 1 s each: the first wave
  // finishes at 3 s), with 0.5 s of front end: the successors arrive at 3.5 s, not 3 s, and the
  // engine idles between.
  const Workload w = closed_loop(1, 3, 4, 8);
  ReplayLimits limits = roomy(8);
  limits.front_end_s = 0.5;
  ReplayResult r = replay_requests(w, limits, constant_step);
  CHECK(r.steps == 6);
  CHECK(r.requests[4].arrival_s == 3.5);
  CHECK(r.requests[4].first_token_s == 4.5);
  CHECK(r.requests[7].finish_s == 6.5);
  CHECK(r.duration_s == 6.5);
  CHECK(r.ttft_s.mean == 1.0);  // the engine's part
  add_front_end(r, limits.front_end_s);
  CHECK(r.ttft_s.mean == 1.5);
  CHECK(r.requests[4].first_token_s - r.requests[4].arrival_s == 1.5);
}

TEST_CASE("replay: a front end leaves the TTFT of a replay with no measured request at zero") {
  ReplayResult r;  // nothing replayed: every statistic 0
  add_front_end(r, 0.008);
  CHECK(r.ttft_s.mean == 0.0);
  CHECK(r.ttft_s.p99 == 0.0);
  CHECK(r.front_end_s == 0.008);
}

TEST_CASE("replay: max batch caps the sequences in a step") {
  Workload w;
  w.isl = 1;
  w.osl = 5;
  w.requests = 10;
  int64_t widest = 0;
  replay_requests(w, roomy(3), [&](const StepBatch& b) {
    widest = std::max(widest, b.tokens());
    return 1.0;
  });
  CHECK(widest == 3);
}

TEST_CASE("replay: Poisson arrivals with deterministic service reproduce M/D/1 waiting") {
  // One request per step (max batch 1, one-token prompt and answer) of D = 1 ms: an M/D/1
  // queue. Mean wait ρ·D / (2(1 − ρ)); TTFT = wait + D.
  const double d = 1e-3;
  for (double rho : {0.3, 0.5, 0.8}) {
    Workload w;
    w.isl = 1;
    w.osl = 1;
    w.load = LoadKind::request_rate;
    w.request_rate_per_s = rho / d;
    w.requests = 200000;
    w.seed = 7;
    const ReplayResult r = replay_requests(w, roomy(1), [&](const StepBatch&) { return d; });
    const double wait = rho * d / (2 * (1 - rho));
    INFO("rho = " << rho);
    CHECK(r.ttft_s.mean == doctest::Approx(wait + d).epsilon(0.03));
    CHECK(r.queue_s.mean == doctest::Approx(wait).epsilon(0.03));
  }
}

TEST_CASE("replay: the same seed gives the same arrivals, another seed others") {
  Workload w;
  w.load = LoadKind::request_rate;
  w.request_rate_per_s = 10;
  w.seed = 3;
  const std::vector<double> a = initial_arrivals(w, 100), b = initial_arrivals(w, 100);
  CHECK(a == b);
  w.seed = 4;
  CHECK(initial_arrivals(w, 100) != a);
  CHECK(a.back() == doctest::Approx(10.0).epsilon(0.3));  // 100 arrivals at 10/s
}

TEST_CASE("replay: nearest-rank percentiles") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const LatencyStats s = latency_stats(v);
  CHECK(s.mean == 50.5);
  CHECK(s.p50 == 50);
  CHECK(s.p90 == 90);
  CHECK(s.p99 == 99);
}

TEST_CASE("replay: recorded steps, and their trace through the simulator's engine") {
  Workload w;
  w.isl = 1;
  w.osl = 3;
  w.load = LoadKind::request_rate;
  w.request_rate_per_s = 0.001;  // one request, a long idle gap (mean 1000 s), the next
  w.requests = 2;
  w.seed = 1;
  ReplayLimits limits = roomy(8);
  limits.record_steps = true;
  const ReplayResult r = replay_requests(w, limits, constant_step);
  REQUIRE(r.recorded.size() == 6);  // three steps per request (1 prompt, 2 decodes)
  CHECK(r.steps == 6);
  CHECK(r.recorded[0].prefill_tokens == 1);
  CHECK(r.recorded[0].decodes == 0);
  CHECK(r.recorded[1].decodes == 1);
  CHECK(r.recorded[0].start_s == r.requests[0].arrival_s);
  meshplan::Result<std::string> trace = replay_trace_json(r);
  REQUIRE(trace.ok());
  CHECK(trace->find("\"1 decodes + 0 prompt tokens (0 chunks)\"") != std::string::npos);
  CHECK(trace->find("\"idle\"") != std::string::npos);
}
