// The replays' shortcuts against their general paths on random small workloads: a sequence
// asking for cache only at page crossings, the runs of decode-only steps summed at once, and the
// disaggregated decode workers' lazily kept answers must replay exactly as asking every token of
// every sequence at every step (ReplayLimits::cache_block_tokens 0, which the shortcuts leave to
// the general path). Fixed seeds: the same cases every run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/profile_lookup.h"
#include "serving/disaggregated_replay.h"
#include "serving/request_replay.h"
#include "serving/step_time.h"
#include "tests/test_inputs.h"

using namespace meshplan::serving;
using meshplan::AttentionWindow;
using meshplan::WindowKind;
using meshplan::testing::shipped_cluster;
using meshplan::testing::shipped_model;

namespace {

// A step's time from what it carries, so any difference in a batch shows in the times.
double step_s(const StepBatch& b) {
  double prompt = 0;
  for (const PrefillChunk& c : b.chunks) prompt += static_cast<double>(c.tokens);
  return 0.01 + 1e-3 * static_cast<double>(b.decodes) + 1e-5 * b.decode_context_tokens +
         3e-6 * b.decode_local_tokens + 2e-3 * prompt +
         5e-4 * static_cast<double>(b.chunks.size() + b.sampled);
}

int64_t draw(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

bool coin(std::mt19937_64& rng) { return draw(rng, 0, 1) == 1; }

// A random small workload: lengths fixed or spread, offline, closed or open loop.
Workload random_workload(std::mt19937_64& rng) {
  Workload w;
  w.isl = draw(rng, 1, 40);
  w.osl = draw(rng, 1, 40);
  if (coin(rng)) {
    w.isl_stdev = static_cast<double>(draw(rng, 1, 15));
    w.osl_stdev = static_cast<double>(draw(rng, 1, 15));
  }
  w.requests = draw(rng, 5, 60);
  w.seed = static_cast<uint64_t>(draw(rng, 1, 1000));
  switch (draw(rng, 0, 2)) {
    case 0:
      break;
    case 1:
      w.load = LoadKind::concurrency;
      w.concurrency = static_cast<double>(draw(rng, 1, 20));
      w.first_wave_measured = coin(rng);
      break;
    default:
      w.load = LoadKind::request_rate;
      w.request_rate_per_s = static_cast<double>(draw(rng, 1, 40));
  }
  return w;
}

// The largest isl + osl the workload's requests have (the cache must hold one whole).
int64_t longest(const Workload& w) { return longest_sequence(request_lengths(w, w.requests)); }

int64_t paged(int64_t tokens, int64_t page) { return (tokens + page - 1) / page * page; }

// One replica's limits, allocating the cache on demand in pages of `page` tokens, from tight
// (preempting often) to roomy.
ReplayLimits random_limits(std::mt19937_64& rng, const Workload& w, int64_t page) {
  ReplayLimits l;
  l.max_batch = draw(rng, 1, 16);
  l.max_step_tokens = draw(rng, 8, 64);
  l.chunked_prefill = coin(rng);
  l.mixed_steps = coin(rng);
  if (coin(rng)) l.max_prefill_tokens = draw(rng, 1, 64);
  l.reserves_answers = coin(rng);
  l.kv_tokens = paged(longest(w) + 1, page) * draw(rng, 1, 6);
  l.tokens_per_request = paged(w.isl + w.osl, page);
  l.cache_tokens = [page](int64_t tokens) { return paged(tokens, page); };
  if (coin(rng)) l.front_end_s = 0.05;
  if (draw(rng, 0, 2) == 0)  // local attention: a sliding window or chunks, short enough to fill
    l.window =
        AttentionWindow{draw(rng, 1, 24), coin(rng) ? WindowKind::sliding : WindowKind::chunked, 0};
  l.record_steps = true;
  return l;
}

void check_same(const ReplayResult& a, const ReplayResult& b) {
  CHECK(a.steps == b.steps);
  CHECK(a.preemptions == b.preemptions);
  CHECK(a.mean_batch == b.mean_batch);
  REQUIRE(a.requests.size() == b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    CAPTURE(i);
    CHECK(a.requests[i].arrival_s == b.requests[i].arrival_s);
    CHECK(a.requests[i].scheduled_s == b.requests[i].scheduled_s);
    CHECK(a.requests[i].first_token_s == b.requests[i].first_token_s);
    CHECK(a.requests[i].finish_s == b.requests[i].finish_s);
  }
  REQUIRE(a.recorded.size() == b.recorded.size());
  for (size_t i = 0; i < a.recorded.size(); ++i) {
    CAPTURE(i);
    CHECK(a.recorded[i].start_s == b.recorded[i].start_s);
    CHECK(a.recorded[i].decodes == b.recorded[i].decodes);
    CHECK(a.recorded[i].prefill_tokens == b.recorded[i].prefill_tokens);
    CHECK(a.recorded[i].duration_s == b.recorded[i].duration_s);
  }
}

// Random disaggregated pools: 1 to `prefill_most` prefill workers, 1 to `decode_most` decode
// workers with random_limits, a transfer with or without a fixed latency.
DisaggregatedLimits random_pools(std::mt19937_64& rng, const Workload& w, int64_t page,
                                 int64_t prefill_most, int64_t decode_most) {
  DisaggregatedLimits d;
  d.prefill_workers = draw(rng, 1, prefill_most);
  d.prefill_step_tokens = draw(rng, 8, 64);
  d.decode_workers = draw(rng, 1, decode_most);
  d.decode = random_limits(rng, w, page);
  d.decode.record_steps = false;
  d.kv_transfer_latency_s = coin(rng) ? 0.0 : 0.003;
  d.kv_transfer_s_per_token = 1e-5;
  return d;
}

// Step models of three kinds on one DGX H100 (decode_price's fixed terms differ in each): dense
// llama3-8b at tp 2 / pp 2 with TensorRT-LLM's host costs, llama4-scout at tp 8 / ep 8 (MoE,
// local attention), deepseek-v3 under attention-DP (MLA).
std::vector<StepTimeModel> step_models() {
  const meshplan::ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const meshplan::Result<meshplan::CalibrationProfile> p =
      meshplan::resolve_profile(c, "", meshplan::ProfileSearchPath{});
  REQUIRE(p.ok());
  ServingLayout dense, moe, mla;
  dense.tp = dense.pp = 2;
  moe.tp = moe.ep = 8;
  mla = moe;
  mla.attention_dp = true;
  const HostOverhead host = engine_preset(Engine::trtllm).host;
  std::vector<StepTimeModel> models;
  models.emplace_back(shipped_model("llama3-8b"), c, p.value(), dense, ServingOptions{}, host);
  models.emplace_back(shipped_model("llama4-scout"), c, p.value(), moe, ServingOptions{}, host);
  models.emplace_back(shipped_model("deepseek-v3"), c, p.value(), mla, ServingOptions{}, host);
  return models;
}

}  // namespace

TEST_CASE("replay paths: knowing the page size replays random workloads as asking every token") {
  std::mt19937_64 rng(20261128);
  int64_t preempting = 0, shortcut_steps = 0;
  for (int c = 0; c < 300; ++c) {
    CAPTURE(c);
    const Workload w = random_workload(rng);
    const int64_t page = int64_t{1} << draw(rng, 0, 3);
    ReplayLimits l = random_limits(rng, w, page);
    const ReplayResult every = replay_requests(w, l, step_s);
    l.cache_block_tokens = page;
    const ReplayResult paged_result = replay_requests(w, l, step_s);
    check_same(every, paged_result);
    preempting += every.preemptions > 0;
    shortcut_steps += every.steps;
  }
  CHECK(preempting >= 30);  // the cases reach the preempting paths, not only roomy ones
  CHECK(shortcut_steps > 3000);
}

TEST_CASE("replay paths: a whole-request reservation replays a roomy cache as on demand does") {
  // With a cache no request ever waits for, reserving each request's whole isl + osl at
  // admission (TensorRT-LLM, through the decode-only runs) and allocating on demand while asking
  // every token (the general path) schedule alike.
  std::mt19937_64 rng(7);
  for (int c = 0; c < 200; ++c) {
    CAPTURE(c);
    const Workload w = random_workload(rng);
    ReplayLimits l = random_limits(rng, w, 1);
    l.reserves_answers = false;
    l.kv_tokens = 1'000'000;
    l.tokens_per_request = longest(w);
    const ReplayResult on_demand = replay_requests(w, l, step_s);
    l.cache_tokens = nullptr;
    const ReplayResult whole = replay_requests(w, l, step_s);
    check_same(on_demand, whole);
  }
}

TEST_CASE(
    "replay paths: disaggregated decode workers replay random workloads as asking every token") {
  std::mt19937_64 rng(42);
  int64_t preempting = 0;
  for (int c = 0; c < 200; ++c) {
    CAPTURE(c);
    const Workload w = random_workload(rng);
    const int64_t page = int64_t{1} << draw(rng, 0, 3);
    DisaggregatedLimits d = random_pools(rng, w, page, 3, 3);
    const ReplayResult every = replay_disaggregated(w, d, step_s, step_s);
    d.decode.cache_block_tokens = page;
    const ReplayResult paged_result = replay_disaggregated(w, d, step_s, step_s);
    check_same(every, paged_result);
    preempting += every.preemptions > 0;
  }
  CHECK(preempting >= 20);
}

TEST_CASE(
    "replay paths: disaggregated decode workers reserving whole requests replay a roomy cache as "
    "on demand does") {
  // A whole-request reservation runs each worker's steps as runs (until its first sequence
  // finishes, cut where a sequence joins it); on demand with the page size not known asks every
  // step. With a cache no sequence waits for, the two schedule alike.
  std::mt19937_64 rng(2026);
  int64_t runs = 0;
  for (int c = 0; c < 200; ++c) {
    CAPTURE(c);
    const Workload w = random_workload(rng);
    DisaggregatedLimits d = random_pools(rng, w, 1, 4, 6);
    d.decode.reserves_answers = false;
    d.decode.kv_tokens = 1'000'000;
    d.decode.tokens_per_request = longest(w);
    d.decode.cache_block_tokens = 0;
    const ReplayResult on_demand = replay_disaggregated(w, d, step_s, step_s);
    d.decode.cache_tokens = nullptr;
    const ReplayResult whole = replay_disaggregated(w, d, step_s, step_s);
    check_same(on_demand, whole);
    runs += on_demand.steps;
  }
  CHECK(runs > 3000);
}

TEST_CASE("replay paths: decode-only runs priced from their fixed terms replay as step by step") {
  // The serving search prices the steps of a decode-only run from StepTimeModel::decode_price;
  // a replay doing so must be exactly the replay asking the model each step, aggregated (on
  // demand in known pages, or whole requests) and disaggregated.
  const std::vector<StepTimeModel> models = step_models();
  std::mt19937_64 rng(1128);
  int64_t steps = 0;
  for (int c = 0; c < 150; ++c) {
    CAPTURE(c);
    const StepTimeModel& model = models[static_cast<size_t>(c) % models.size()];
    const StepTimeFn each = [&](const StepBatch& b) { return model.time(b).total_s(); };
    const DecodePriceFn price = [&](int64_t decodes, int64_t sampled) {
      return model.decode_price(decodes, sampled);
    };
    const Workload w = random_workload(rng);
    const int64_t page = int64_t{1} << draw(rng, 0, 3);
    ReplayLimits l = random_limits(rng, w, page);
    l.cache_block_tokens = page;
    if (coin(rng)) l.cache_tokens = nullptr;  // whole requests reserved at admission
    const ReplayResult asked = replay_requests(w, l, each);
    check_same(asked, replay_requests(w, l, each, price));
    DisaggregatedLimits d = random_pools(rng, w, page, 3, 3);
    d.decode.cache_block_tokens = page;
    const ReplayResult split = replay_disaggregated(w, d, each, each);
    check_same(split, replay_disaggregated(w, d, each, each, price));
    steps += asked.steps + split.steps;
  }
  CHECK(steps > 3000);
}

TEST_CASE(
    "replay paths: a disaggregated decode worker admits mid-run as if its later steps' pages were "
    "still free") {
  // A decode worker's run takes the pages its later steps cross into when it starts; a sequence
  // reaching it during the run must see the cache as the step under way left it (the pages of
  // the steps not yet started free) and cut the run, which gives those pages back. Long answers,
  // small pages and arrivals spread over the answers make sequences join during runs; the
  // replay must be the one asking every token.
  std::mt19937_64 rng(20261201);
  int64_t preempting = 0;
  for (int c = 0; c < 400; ++c) {
    CAPTURE(c);
    Workload w;
    w.isl = draw(rng, 4, 30);
    w.osl = draw(rng, 20, 80);
    if (coin(rng)) w.osl_stdev = static_cast<double>(draw(rng, 1, 20));
    w.requests = draw(rng, 10, 50);
    w.seed = static_cast<uint64_t>(draw(rng, 1, 1000));
    w.load = LoadKind::request_rate;
    w.request_rate_per_s = static_cast<double>(draw(rng, 2, 30));
    const int64_t page = int64_t{1} << draw(rng, 1, 3);
    DisaggregatedLimits d = random_pools(rng, w, page, 2, 2);
    d.decode.max_batch = draw(rng, 4, 16);
    d.decode.reserves_answers = false;
    d.decode.kv_tokens = paged(longest(w) + 1, page) * draw(rng, 1, 3);
    const ReplayResult every = replay_disaggregated(w, d, step_s, step_s);
    d.decode.cache_block_tokens = page;
    check_same(every, replay_disaggregated(w, d, step_s, step_s));
    preempting += every.preemptions > 0;
  }
  CHECK(preempting >= 20);
}

TEST_CASE(
    "replay paths: a sequence reaching a decode worker as a run's step starts sees that step's "
    "page free") {
  // Two 4-token prompts with 8-token answers prefill one after the other in 2 s steps ([0, 2],
  // [2, 4]) and reach the one decode worker, 4-token pages, at 2.0 and 4.0, whose steps take
  // 0.5 s. The first holds its prompt's page; its first step (2.0) takes a second page and its
  // fifth (4.0) a third, which its run took when it started at 2.0. The second arrives as that
  // step starts: the step starts after it is admitted, so the admission sees 4 more tokens free
  // than the run holds, as asking every token does. Caches of 12 to 20 tokens: at 12 and 13 the
  // second fits only with that page free.
  for (int64_t kv = 12; kv <= 20; ++kv) {
    CAPTURE(kv);
    DisaggregatedLimits d;
    d.prefill_step_tokens = 4;
    d.decode.max_batch = 4;
    d.decode.kv_tokens = kv;
    d.decode.tokens_per_request = 12;
    d.decode.cache_tokens = [](int64_t tokens) { return paged(tokens, 4); };
    Workload w;
    w.isl = 4;
    w.osl = 8;
    w.requests = 2;
    const StepTimeFn prefill = [](const StepBatch&) { return 2.0; };
    const StepTimeFn decode = [](const StepBatch&) { return 0.5; };
    const ReplayResult every = replay_disaggregated(w, d, prefill, decode);
    d.decode.cache_block_tokens = 4;
    const ReplayResult paged_result = replay_disaggregated(w, d, prefill, decode);
    check_same(every, paged_result);
    if (kv < 14) CHECK(paged_result.preemptions > 0);  // admitted, then short of a page
  }
}
