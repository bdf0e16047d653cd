// The disaggregated replay against hand-traced cases: prompts on prefill workers, the KV
// transfer, decode-only continuous batching on decode workers.
#include "serving/disaggregated_replay.h"

#include <doctest/doctest.h>

#include <vector>

using namespace meshplan::serving;

namespace {

DisaggregatedLimits one_each(double transfer_s) {
  DisaggregatedLimits l;
  l.prefill_workers = 1;
  l.prefill_step_tokens = 150;
  l.decode_workers = 1;
  l.decode.max_batch = 8;
  l.decode.max_step_tokens = 8192;
  l.decode.kv_tokens = 1'000'000;
  l.decode.tokens_per_request = 103;
  l.kv_transfer_latency_s = transfer_s;
  return l;
}

double prefill_1s(const StepBatch&) { return 1.0; }
double decode_100ms(const StepBatch&) { return 0.1; }

Workload offline(int64_t requests, int64_t isl, int64_t osl) {
  Workload w;
  w.isl = isl;
  w.osl = osl;
  w.requests = requests;
  return w;
}

// `requests` of `isl` + `osl` tokens in a closed loop, one in flight.
Workload one_in_flight(int64_t requests, int64_t isl, int64_t osl) {
  Workload w = offline(requests, isl, osl);
  w.load = LoadKind::concurrency;
  w.concurrency = 1;
  return w;
}

}  // namespace

TEST_CASE("disaggregated: a request's KV transfer takes the latency plus its prompt's tokens") {
  // A 50-token prompt: prefill [0, 1], transfer 0.5 + 50 × 0.01 = 1.0 s, first token at 2.0.
  DisaggregatedLimits l = one_each(0.5);
  l.kv_transfer_s_per_token = 0.01;
  CHECK(l.transfer_s(50) == doctest::Approx(1.0));
  const ReplayResult r = replay_disaggregated(offline(1, 50, 1), l, prefill_1s, decode_100ms);
  REQUIRE(r.requests.size() == 1);
  CHECK(r.requests[0].first_token_s == doctest::Approx(2.0));
}

TEST_CASE(
    "disaggregated: prompts run whole one step each, the first token lands after the transfer") {
  // Two 100-token prompts, 150 tokens a prefill step: the second does not fit beside the first.
  // Prefill [0, 1] and [1, 2]; transfers end at 1.5 and 2.5; two decode steps of 0.1 s each
  // finish the 3-token answers at 1.7 and 2.7.
  const ReplayResult r =
      replay_disaggregated(offline(2, 100, 3), one_each(0.5), prefill_1s, decode_100ms);
  REQUIRE(r.requests.size() == 2);
  CHECK(r.requests[0].first_token_s == doctest::Approx(1.5));
  CHECK(r.requests[0].finish_s == doctest::Approx(1.7));
  CHECK(r.requests[1].first_token_s == doctest::Approx(2.5));
  CHECK(r.requests[1].finish_s == doctest::Approx(2.7));
  CHECK(r.ttft_s.mean == doctest::Approx(2.0));
  CHECK(r.requests[1].scheduled_s == doctest::Approx(1.0));  // queued behind the first prompt
  CHECK(r.queue_s.mean == doctest::Approx(0.5));
  CHECK(r.tpot_s.mean == doctest::Approx(0.1));
  CHECK(r.steps == 4);
  CHECK(r.mean_batch == doctest::Approx(1.0));
  CHECK(r.output_tokens_per_s == doctest::Approx(6 / 2.7));
  // Rate matching: the prefill worker steps 2 s of the 2.7, the decode worker 0.4 s.
  CHECK(r.prefill_pool_busy == doctest::Approx(2 / 2.7));
  CHECK(r.decode_pool_busy == doctest::Approx(0.4 / 2.7));
}

TEST_CASE("disaggregated: a request that arrives during a decode step joins at the next step") {
  // Three 50-token prompts, 100 tokens a prefill step: two prefill in [0, 1], the third in
  // [1, 2]. No transfer time. 6-token answers need 5 decode steps of 0.4 s: the first two decode
  // together from 1.0 (steps at 1.0, 1.4, 1.8, 2.2, 2.6, done at 3.0); the third reaches the
  // decode pool at 2.0, during the step at 1.8, and joins the one at 2.2: batches 2, 2, 2, 3, 3,
  // then alone at 3.0, 3.4 and 3.8, done at 4.2. (The decode worker runs its steps as runs, so
  // the step function is also asked for the steps after 2.2 that the third's joining cut off:
  // the steps run are counted in the result.)
  DisaggregatedLimits l = one_each(0.0);
  l.prefill_step_tokens = 100;
  const ReplayResult r = replay_disaggregated(
      offline(3, 50, 6), l,
      [](const StepBatch& b) {
        CHECK(b.decodes == 0);
        return 1.0;
      },
      [&](const StepBatch& b) {
        CHECK(b.sampled == b.decodes);
        return 0.4;
      });
  CHECK(r.steps == 8);
  CHECK(r.mean_batch == doctest::Approx((2 + 2 + 2 + 3 + 3 + 1 + 1 + 1) / 8.0));
  CHECK(r.requests[1].finish_s == doctest::Approx(3.0));
  CHECK(r.requests[2].first_token_s == doctest::Approx(2.0));
  CHECK(r.requests[2].finish_s == doctest::Approx(4.2));
}

TEST_CASE("disaggregated: two prefill workers run prompts side by side, decode picks the emptier") {
  DisaggregatedLimits l = one_each(0.25);
  l.prefill_workers = 2;
  l.decode_workers = 2;
  l.prefill_step_tokens = 100;
  const ReplayResult r = replay_disaggregated(offline(2, 100, 2), l, prefill_1s, decode_100ms);
  // Both prompts prefill over [0, 1], transfer to 1.25 and land on different decode workers.
  CHECK(r.requests[0].first_token_s == doctest::Approx(1.25));
  CHECK(r.requests[1].first_token_s == doctest::Approx(1.25));
  CHECK(r.mean_batch == doctest::Approx(1.0));
  CHECK(r.steps == 2);
  CHECK(r.requests[1].finish_s == doctest::Approx(1.35));
}

TEST_CASE("disaggregated: a prompt longer than the step budget runs alone in chunks") {
  std::vector<int64_t> chunks;
  DisaggregatedLimits l = one_each(0.0);
  l.prefill_step_tokens = 40;
  replay_disaggregated(
      offline(1, 100, 1), l,
      [&](const StepBatch& b) {
        for (const PrefillChunk& c : b.chunks) chunks.push_back(c.tokens);
        return 1.0;
      },
      decode_100ms);
  CHECK(chunks == std::vector<int64_t>{40, 40, 20});
}

TEST_CASE("disaggregated: a closed loop issues the next request when one finishes") {
  const Workload w = one_in_flight(3, 10, 2);
  const ReplayResult r = replay_disaggregated(w, one_each(0.5), prefill_1s, decode_100ms);
  // Each request: prefill 1 s, transfer 0.5 s, one decode step 0.1 s: 1.6 s apart.
  CHECK(r.requests[1].arrival_s == doctest::Approx(1.6));
  CHECK(r.requests[2].arrival_s == doctest::Approx(3.2));
  CHECK(r.requests[2].finish_s == doctest::Approx(4.8));
}

TEST_CASE(
    "disaggregated: a closed loop's next request reaches the prefill pool the front end's time "
    "after one finishes") {
  const Workload w = one_in_flight(3, 10, 2);
  DisaggregatedLimits l = one_each(0.5);
  l.decode.front_end_s = 0.2;
  const ReplayResult r = replay_disaggregated(w, l, prefill_1s, decode_100ms);
  // As above, each request 1.6 s in the engine, then 0.2 s through the front end: 1.8 s apart.
  CHECK(r.requests[1].arrival_s == doctest::Approx(1.8));
  CHECK(r.requests[1].scheduled_s == doctest::Approx(1.8));
  CHECK(r.requests[2].arrival_s == doctest::Approx(3.6));
  CHECK(r.requests[2].finish_s == doctest::Approx(5.2));
}

TEST_CASE("disaggregated: decode admission waits for KV room, first come first served") {
  DisaggregatedLimits l = one_each(0.0);
  l.prefill_step_tokens = 1000;
  l.decode.kv_tokens = 103;  // one request at a time
  const ReplayResult r = replay_disaggregated(offline(2, 100, 3), l, prefill_1s, decode_100ms);
  // Both prompts prefill in [0, 1]; the second waits for the first's finish at 1.2.
  CHECK(r.requests[0].finish_s == doctest::Approx(1.2));
  CHECK(r.requests[1].first_token_s == doctest::Approx(1.0));
  CHECK(r.requests[1].finish_s == doctest::Approx(1.4));
}

TEST_CASE(
    "disaggregated: an on-demand decode worker preempts its last sequence and recomputes it") {
  // Two 4-token prompts prefill together in [0, 1] and arrive at once; answers of 4 tokens; the
  // decode worker's cache holds 9 tokens, one per token (cache_tokens(n) = n). Admitted with
  // their prompts (4 + 4), the first step needs a fifth token each: the first takes the last
  // free one, the second is itself preempted (back to the queue, its 4 freed). The first decodes
  // alone at 1.0, 1.1 and 1.2 (cache 5, 6, 7) and finishes at 1.3; the second, readmitted with
  // its prompt and first token (5), recomputes them in the step at 1.3 and decodes at 1.4 and
  // 1.5, finishing at 1.6.
  DisaggregatedLimits l = one_each(0.0);
  l.prefill_step_tokens = 8;
  l.decode.kv_tokens = 9;
  l.decode.tokens_per_request = 8;
  l.decode.cache_tokens = [](int64_t tokens) { return tokens; };
  std::vector<std::pair<int64_t, int64_t>> steps;  // (decodes, recomputed tokens)
  const ReplayResult r =
      replay_disaggregated(offline(2, 4, 4), l, prefill_1s, [&](const StepBatch& b) {
        int64_t recomputed = 0;
        for (const PrefillChunk& c : b.chunks) recomputed += c.tokens;
        steps.push_back({b.decodes, recomputed});
        return 0.1;
      });
  REQUIRE(r.requests.size() == 2);
  CHECK(r.preemptions == 1);
  CHECK(r.requests[0].first_token_s == doctest::Approx(1.0));
  CHECK(r.requests[0].finish_s == doctest::Approx(1.3));
  CHECK(r.requests[1].first_token_s == doctest::Approx(1.0));
  CHECK(r.requests[1].finish_s == doctest::Approx(1.6));
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 0}, {1, 0}, {1, 0},
                                                             {0, 5}, {1, 0}, {1, 0}};
  CHECK(steps == expected);
}

TEST_CASE(
    "disaggregated: knowing the page size, a decode worker takes pages and preempts as asking "
    "every token") {
  // The case above, the cache's page size known (one-token pages) or not: the same steps, and
  // the decodes' summed context is each sequence's isl + answer so far (5, 6, 7 for the first;
  // 6, 7 for the second after its recomputed 5).
  for (const int64_t page : {0, 1}) {
    CAPTURE(page);
    DisaggregatedLimits l = one_each(0.0);
    l.prefill_step_tokens = 8;
    l.decode.kv_tokens = 9;
    l.decode.tokens_per_request = 8;
    l.decode.cache_tokens = [](int64_t tokens) { return tokens; };
    l.decode.cache_block_tokens = page;
    std::vector<std::pair<int64_t, double>> steps;  // (decodes, their summed context)
    const ReplayResult r =
        replay_disaggregated(offline(2, 4, 4), l, prefill_1s, [&](const StepBatch& b) {
          steps.push_back({b.decodes, b.decode_context_tokens});
          return 0.1;
        });
    CHECK(r.preemptions == 1);
    CHECK(r.requests[0].finish_s == doctest::Approx(1.3));
    CHECK(r.requests[1].finish_s == doctest::Approx(1.6));
    const std::vector<std::pair<int64_t, double>> expected = {{1, 5}, {1, 6}, {1, 7},
                                                              {0, 0}, {1, 6}, {1, 7}};
    CHECK(steps == expected);
  }
}

TEST_CASE("disaggregated: sequences crossing into new pages together take them in one step") {
  // Three 3-token prompts with 5-token answers in 2-token pages on one decode worker: each holds
  // 4 when admitted and crosses into a new page at its second and fourth decode steps (sequences
  // 5 and 7: 6, then 8 tokens). A 24-token cache holds all three throughout: four steps of 3
  // decodes, all done at 1.4. A 14-token cache has 2 free for the 6 the second step asks: the
  // first takes 2, the third (admitted last) is preempted for the second; at the fourth step the
  // second preempts itself. Knowing the page size or asking every token, the same replay.
  for (const int64_t kv : {14, 24}) {
    CAPTURE(kv);
    std::vector<std::vector<int64_t>> decodes(2);
    std::vector<ReplayResult> results;
    for (const int64_t page : {0, 2}) {
      DisaggregatedLimits l = one_each(0.0);
      l.prefill_step_tokens = 9;
      l.decode.kv_tokens = kv;
      l.decode.cache_tokens = [](int64_t tokens) { return (tokens + 1) / 2 * 2; };
      l.decode.cache_block_tokens = page;
      std::vector<int64_t>& seen = decodes[page / 2];
      results.push_back(
          replay_disaggregated(offline(3, 3, 5), l, prefill_1s, [&](const StepBatch& b) {
            seen.push_back(b.decodes);
            return 0.1;
          }));
    }
    // (The step function is also asked for the steps of runs a preemption cut short: the steps
    // run are the results'.)
    CHECK(results[0].steps == results[1].steps);
    CHECK(results[0].mean_batch == results[1].mean_batch);
    CHECK(results[0].preemptions == results[1].preemptions);
    for (size_t i = 0; i < 3; ++i)
      CHECK(results[0].requests[i].finish_s == results[1].requests[i].finish_s);
    if (kv == 24) {
      CHECK(results[1].preemptions == 0);
      CHECK(decodes[1] == std::vector<int64_t>{3, 3, 3, 3});
      for (const RequestTimes& q : results[1].requests) CHECK(q.finish_s == doctest::Approx(1.4));
    } else {
      CHECK(results[1].preemptions == 2);
      REQUIRE(decodes[1].size() >= 2);
      CHECK(decodes[1][0] == 3);
      CHECK(decodes[1][1] == 2);
    }
  }
}

TEST_CASE("disaggregated: without on-demand allocation a decode worker admits whole requests") {
  // The same case reserving isl + osl = 8 tokens a request: one request at a time, no
  // preemption; the second waits for the first's cache and starts at 1.3.
  DisaggregatedLimits l = one_each(0.0);
  l.prefill_step_tokens = 8;
  l.decode.kv_tokens = 9;
  l.decode.tokens_per_request = 8;
  const ReplayResult r = replay_disaggregated(offline(2, 4, 4), l, prefill_1s, decode_100ms);
  REQUIRE(r.requests.size() == 2);
  CHECK(r.preemptions == 0);
  CHECK(r.requests[0].finish_s == doctest::Approx(1.3));
  CHECK(r.requests[1].finish_s == doctest::Approx(1.6));
  CHECK(r.steps == 6);
}

TEST_CASE(
    "disaggregated: a request reaching a decode worker as its step ends joins the next step") {
  // Two 50-token prompts, 50 tokens a prefill step: the first prefills in [0, 1], the second in
  // [1, 2]. The first decodes alone from 1.0 in 0.5 s steps (its run: 1.0, 1.5, 2.0, …); the
  // second reaches the decode worker at 2.0, as a step ends, and joins the step starting then:
  // steps at 1.0 and 1.5 the first alone, 2.0, 2.5 and 3.0 together (the first done at 3.5),
  // 3.5 and 4.0 the second alone (done at 4.5).
  DisaggregatedLimits l = one_each(0.0);
  l.prefill_step_tokens = 50;
  const ReplayResult r =
      replay_disaggregated(offline(2, 50, 6), l, prefill_1s, [](const StepBatch&) { return 0.5; });
  CHECK(r.requests[1].first_token_s == 2.0);
  CHECK(r.requests[0].finish_s == 3.5);
  CHECK(r.requests[1].finish_s == 4.5);
  CHECK(r.steps == 7);
  CHECK(r.mean_batch == doctest::Approx(10.0 / 7));
}

TEST_CASE("disaggregated: the workers a replay gives work to, and the same replay with more") {
  // One request in flight at a time (a closed loop of concurrency 1): prefill worker 0 and decode
  // worker 0 take every request (the idle or emptiest of lowest index), whatever the pools' sizes.
  DisaggregatedLimits l = one_each(0.5);
  l.prefill_workers = 3;
  l.decode_workers = 4;
  const ReplayResult r =
      replay_disaggregated(one_in_flight(5, 100, 4), l, prefill_1s, decode_100ms);
  CHECK(r.prefill_workers_used == 1);
  CHECK(r.decode_workers_used == 1);
  // Five prompts of 1 s and answers of 3 steps, one after another: 5 s of prefill, 1.5 s of
  // decode, shared by the pools' workers.
  CHECK(r.prefill_busy_s == doctest::Approx(5.0));
  CHECK(r.decode_busy_s == doctest::Approx(1.5));
  CHECK(r.prefill_pool_busy == doctest::Approx(5.0 / (3 * r.duration_s)));
  CHECK(r.decode_pool_busy == doctest::Approx(1.5 / (4 * r.duration_s)));
  l.prefill_workers = 1;
  l.decode_workers = 1;
  const ReplayResult one =
      replay_disaggregated(one_in_flight(5, 100, 4), l, prefill_1s, decode_100ms);
  REQUIRE(one.requests.size() == r.requests.size());
  for (size_t i = 0; i < r.requests.size(); ++i) {
    CHECK(one.requests[i].first_token_s == r.requests[i].first_token_s);
    CHECK(one.requests[i].finish_s == r.requests[i].finish_s);
  }
  CHECK(one.decode_busy_s == r.decode_busy_s);
  // Offline, two 100-token prompts fill both of two prefill workers at once (150 tokens a step
  // holds one), and their answers go to both decode workers (each the emptiest in turn).
  l.prefill_workers = 2;
  l.decode_workers = 2;
  const ReplayResult both = replay_disaggregated(offline(2, 100, 4), l, prefill_1s, decode_100ms);
  CHECK(both.prefill_workers_used == 2);
  CHECK(both.decode_workers_used == 2);
}
