// The serving search: candidates, ranking by tokens/s per GPU within the SLO, Pareto front.
#include "serving/serving_search.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tests/serving/serving_test_problem.h"

using namespace meshplan;
using namespace meshplan::serving;

namespace {

// The ep of the candidates at tp 8, pp 1 and the engine's default batch, under `engine`.
std::vector<int64_t> candidate_eps_at_tp8(ServingProblem p, Engine engine) {
  p.options.engine = engine;
  std::vector<int64_t> eps;
  for (const ServingLayout& l : serving_candidates(p))
    if (l.tp == 8 && l.pp == 1 && l.max_batch == 0) eps.push_back(l.ep);
  return eps;
}

ServingProblem llama8b_problem() {
  ServingProblem p = meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 2);
  p.workload.isl = 256;
  p.workload.osl = 64;
  p.workload.load = LoadKind::concurrency;
  p.workload.concurrency = 16;
  p.workload.requests = 64;
  return p;
}

// llama3-8b on up to 8 H100s, 200 Poisson requests of 2,000 + 500 tokens at 14 per second.
ServingProblem rate14_problem() {
  return meshplan::testing::poisson_workload(
      meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 8), 2000, 500, 14,
      200);
}

// The same with --disaggregated and TTFT ≤ 0.5 s, TPOT ≤ 20 ms.
ServingProblem rate14_disaggregated_problem() {
  ServingProblem p = rate14_problem();
  p.options.search_disaggregated = true;
  p.options.slo = Slo{0.5, 0.02};
  return p;
}

// The estimate of the layout written `text` (short_text) among `r`'s, or nullptr.
const ServingEstimate* find_layout(const ServingSearchResult& r, const std::string& text) {
  for (const ServingEstimate& e : r.ranked)
    if (short_text(e.layout) == text) return &e;
  return nullptr;
}

ServingEstimate with(double per_gpu, double per_user) {
  ServingEstimate e;
  e.output_tokens_per_s_per_gpu = per_gpu;
  e.tokens_per_s_per_user = per_user;
  return e;
}

}  // namespace

TEST_CASE("serving search: candidates keep tp within a node, five batch caps each under vLLM") {
  ServingProblem p = llama8b_problem();  // vLLM
  // Closed loop: tp1 pp1 x1 and x2, tp1 pp2 x1, tp2 pp1 x1, each with the default, the engine's
  // own 1024 uncapped by the cache (vLLM preempts) and 256, 64, 16.
  std::vector<ServingLayout> c = serving_candidates(p);
  REQUIRE(c.size() == 20);
  CHECK(c[0].gpus() == 1);
  CHECK(c[1].max_batch == 1024);
  CHECK(c[5].gpus() == 2);
  // Offline: every GPU in use.
  p.workload.load = LoadKind::offline;
  c = serving_candidates(p);
  REQUIRE(c.size() == 15);
  for (const ServingLayout& l : c) CHECK(l.gpus() == 2);
  // TensorRT-LLM reserves whole requests: the default and three caps; under MAX_UTILIZATION it
  // preempts, and its own 2048 is tried uncapped as vLLM's 1024 is.
  p.options.engine = Engine::trtllm;
  c = serving_candidates(p);
  REQUIRE(c.size() == 12);
  CHECK(c[1].max_batch == 256);
  p.options.max_utilization = true;
  c = serving_candidates(p);
  REQUIRE(c.size() == 15);
  CHECK(c[1].max_batch == 2048);
}

TEST_CASE("serving search: vLLM splits experts 1 or tp ways, the other engines any divisor") {
  // Mixtral (8 experts) on 8 GPUs offline, tp 8 pp 1: ep 1, 2, 4, 8 for TensorRT-LLM; vLLM's
  // --enable-expert-parallel spreads the experts over every GPU of the engine: ep 1 or 8.
  ServingProblem p = meshplan::testing::shipped_serving_problem("mixtral-8x7b", "dgx-h100-1n", 8);
  p.workload.isl = 512;
  p.workload.osl = 128;
  p.workload.load = LoadKind::offline;
  auto eps_at_tp8 = [&](Engine e) { return candidate_eps_at_tp8(p, e); };
  CHECK(eps_at_tp8(Engine::trtllm) == std::vector<int64_t>{1, 2, 4, 8});
  CHECK(eps_at_tp8(Engine::sglang) == std::vector<int64_t>{1, 2, 4, 8});
  CHECK(eps_at_tp8(Engine::vllm) == std::vector<int64_t>{1, 8});
  // Asked for, vLLM's refusal names the field and the rule; a prefill worker wider than the
  // decode engine's expert split likewise.
  ServingLayout l{8, 1, 4, 1, 0, false};
  p.options.engine = Engine::vllm;
  std::vector<Diagnostic> d = check_serving_layout(p, l);
  REQUIRE(d.size() == 1);
  CHECK(d[0].field == "ep");
  CHECK(d[0].rule ==
        "must be 1 or tp (8) under vllm: its --enable-expert-parallel spreads the experts over "
        "every GPU of the engine");
  l = ServingLayout{2, 1, 2, 1, 0, false};
  l.prefill_tp = 4;
  l.prefill_replicas = 1;
  d = check_serving_layout(p, l);
  REQUIRE(d.size() == 1);
  CHECK(d[0].field == "prefill_tp");
  CHECK(d[0].rule ==
        "must be at most ep (2) under vllm: its expert parallelism spreads the experts over every "
        "GPU of a prefill worker");
  p.options.engine = Engine::trtllm;
  CHECK(check_serving_layout(p, l).empty());
}

TEST_CASE("serving search: tp gives every GPU whole attention heads, KV heads and FFN columns") {
  // Qwen2-7B: 28 heads, 4 KV heads. tp 8 would give each GPU 3.5 heads, which no engine runs
  // (vLLM: "Total number of attention heads (28) must be divisible by tensor parallel size (8)").
  ServingProblem p = meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 8);
  Result<ModelSpec> qwen2 = load_model(std::string(MESHPLAN_TEST_DATA) + "/hf/qwen2-7b.json");
  REQUIRE(qwen2.ok());
  p.model = qwen2.value();
  p.workload.isl = 512;
  p.workload.osl = 128;
  p.workload.load = LoadKind::offline;
  std::vector<int64_t> tps;
  for (const ServingLayout& l : serving_candidates(p))
    if (tps.empty() || tps.back() != l.tp) tps.push_back(l.tp);
  CHECK(tps == std::vector<int64_t>{1, 2, 4});
  std::vector<Diagnostic> d = check_serving_layout(p, ServingLayout{8, 1, 1, 1, 0, false});
  REQUIRE(d.size() == 1);
  CHECK(d[0].field == "tp");
  CHECK(d[0].rule ==
        "must divide the attention heads (28): tensor parallelism gives every GPU whole heads");
  // KV heads: with 32 heads and 3 KV heads, tp 2 splits them neither way.
  p.model.heads = 32;
  p.model.kv_heads = 3;
  d = check_serving_layout(p, ServingLayout{2, 1, 1, 1, 0, false});
  REQUIRE(d.size() == 1);
  CHECK(d[0].rule ==
        "must divide the KV heads (3) or be a multiple of them (each KV head then on tp / "
        "kv_heads GPUs)");
}

TEST_CASE("serving search: SGLang is offered no split its FP8 block checkpoint refuses") {
  // Qwen3-235B-A22B-FP8 (128 × 128 blocks) on 16 GPUs: its 1536-wide experts split 8 ways are
  // 192-wide shards, which SGLang refuses (fp8_block_split.h); ep 8 keeps them whole, ep 2 and 4
  // split them 4 and 2 ways (384, 768). vLLM and TensorRT-LLM load them; BF16 has no blocks.
  ServingProblem p =
      meshplan::testing::shipped_serving_problem("qwen3-235b-a22b", "dgx-h100-64n", 16);
  p.workload.isl = 512;
  p.workload.osl = 128;
  p.workload.load = LoadKind::offline;
  p.options.weights = WeightFormat::fp8;
  auto eps_at_tp8 = [&](Engine e) { return candidate_eps_at_tp8(p, e); };
  CHECK(eps_at_tp8(Engine::sglang) == std::vector<int64_t>{2, 4, 8});
  CHECK(eps_at_tp8(Engine::vllm) == std::vector<int64_t>{1, 8});
  CHECK(eps_at_tp8(Engine::trtllm) == std::vector<int64_t>{1, 2, 4, 8});
  p.options.weights = WeightFormat::bf16;
  CHECK(eps_at_tp8(Engine::sglang) == std::vector<int64_t>{1, 2, 4, 8});
  // Asked for, the refusal names tp; a prefill worker so split names prefill_tp.
  p.options.weights = WeightFormat::fp8;
  p.options.engine = Engine::sglang;
  std::vector<Diagnostic> d = check_serving_layout(p, ServingLayout{8, 1, 1, 1, 0, false});
  REQUIRE(d.size() == 1);
  CHECK(d[0].field == "tp");
  CHECK(d[0].rule ==
        "sglang refuses to load the model's FP8 checkpoint, quantized in 128 × 128 blocks "
        "(fp8_weight_block), split so: its experts' gate/up output shard is 1536 / 8 = 192, not a "
        "multiple of 128 (a larger ep splits each expert fewer ways)");
  ServingLayout l{4, 1, 4, 1, 0, false};
  l.prefill_tp = 8;
  l.prefill_replicas = 1;
  d = check_serving_layout(p, l);  // the prefill worker: tp 8, ep 4, each expert split 2 ways
  CHECK(d.empty());
  l = ServingLayout{4, 1, 1, 1, 0, false};
  l.prefill_tp = 8;
  l.prefill_replicas = 1;
  d = check_serving_layout(p, l);  // tp 8 with ep 1: 192-wide shards
  REQUIRE(d.size() == 1);
  CHECK(d[0].field == "prefill_tp");
}

TEST_CASE("serving search: disaggregated pools that outgrow the load replay once, the same") {
  // llama3-8b at 2 requests/s of 2,000 + 500 tokens on up to 8 H100s: a few sequences in flight,
  // so the larger pools leave workers idle and repeat a smaller pool's replay.
  ServingProblem p = rate14_disaggregated_problem();
  p.workload.request_rate_per_s = 2;
  p.workload.requests = 100;
  const ServingSearchResult kept = search_serving(p);
  p.reuse_pool_replays = false;
  const ServingSearchResult fresh = search_serving(p);
  CHECK(kept.replays_reused > 0);
  CHECK(fresh.replays_reused == 0);
  CHECK(kept.evaluated == fresh.evaluated);
  REQUIRE(kept.ranked.size() == fresh.ranked.size());
  for (size_t i = 0; i < kept.ranked.size(); ++i) {
    const ServingEstimate &a = kept.ranked[i], &b = fresh.ranked[i];
    CHECK(short_text(a.layout) == short_text(b.layout));
    CHECK(a.output_tokens_per_s == b.output_tokens_per_s);
    CHECK(a.replay.ttft_s.p99 == b.replay.ttft_s.p99);
    CHECK(a.replay.tpot_s.mean == b.replay.tpot_s.mean);
    CHECK(a.replay.steps == b.replay.steps);
    CHECK(a.replay.prefill_pool_busy == b.replay.prefill_pool_busy);
    CHECK(a.replay.decode_pool_busy == b.replay.decode_pool_busy);
    CHECK(a.saturation_requests_per_s == b.saturation_requests_per_s);
    CHECK(a.served_requests_per_s == b.served_requests_per_s);
    CHECK(a.slo_attainment == b.slo_attainment);
    CHECK(a.slo_scale == b.slo_scale);
    CHECK(a.replay.requests_replayed == b.replay.requests_replayed);
  }
  CHECK(kept.pareto == fresh.pareto);
}

TEST_CASE("serving search: a total concurrency of c is tried on at most c replicas") {
  // Two requests in flight on 8 GPUs: tp 1 on 1 or 2 replicas, not 4 or 8 (a replica's replay
  // keeps a request in flight, so 8 would count eight). A request rate splits any way.
  ServingProblem p = meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-1n", 8);
  p.workload.isl = 256;
  p.workload.osl = 64;
  p.workload.load = LoadKind::concurrency;
  p.workload.concurrency = 2;
  auto tp1_replicas = [&] {
    std::vector<int64_t> counts;
    for (const ServingLayout& l : serving_candidates(p))
      if (l.tp == 1 && l.pp == 1 && l.max_batch == 0) counts.push_back(l.replicas);
    return counts;
  };
  CHECK(tp1_replicas() == std::vector<int64_t>{1, 2});
  p.workload.concurrency = 0.5;  // under one: one replica
  CHECK(tp1_replicas() == std::vector<int64_t>{1});
  p.workload.load = LoadKind::request_rate;
  p.workload.request_rate_per_s = 2;
  CHECK(tp1_replicas() == std::vector<int64_t>{1, 2, 4, 8});
}

TEST_CASE("serving search: vLLM is offered no batch cap above --max-step-tokens") {
  // vLLM refuses --max-num-seqs above --max-num-batched-tokens: with 100 tokens a step, of the
  // caps 1024, 256, 64 and 16 only 64 and 16 stay, and the default batch is at most 100.
  ServingProblem p = llama8b_problem();
  p.options.max_step_tokens = 100;
  const std::vector<ServingLayout> c = serving_candidates(p);
  REQUIRE(c.size() == 12);  // 4 layouts × (default, 64, 16)
  CHECK(c[1].max_batch == 64);
  CHECK(c[2].max_batch == 16);
  ServingLayout by_default = c[0];
  REQUIRE(by_default.max_batch == 0);
  const std::optional<ServingEstimate> e = evaluate_serving(p, by_default);
  REQUIRE(e.has_value());
  CHECK(e->layout.max_batch == 100);
  // A layout asking for more is refused by name; SGLang takes it (its cap is the chunk size).
  ServingLayout asked;
  asked.max_batch = 101;
  REQUIRE(check_serving_layout(p, asked).size() == 1);
  CHECK(check_serving_layout(p, asked)[0].rule ==
        "must be at most the step's tokens (100): vllm refuses a --max-num-seqs above "
        "--max-num-batched-tokens");
  asked.max_batch = 100;
  CHECK(check_serving_layout(p, asked).empty());
  p.options.engine = Engine::sglang;
  asked.max_batch = 101;
  CHECK(check_serving_layout(p, asked).empty());
}

TEST_CASE("serving search: --disaggregated adds prefill/decode splits of the GPUs") {
  ServingProblem p = llama8b_problem();
  p.gpus = 4;
  const size_t aggregated = serving_candidates(p).size();
  p.options.search_disaggregated = true;
  std::vector<ServingLayout> c = serving_candidates(p);
  size_t split = 0;
  for (const ServingLayout& l : c) {
    if (!l.disaggregated()) continue;
    ++split;
    CHECK(l.gpus() <= 4);
    CHECK(l.max_batch == 0);
  }
  CHECK(c.size() == aggregated + split);
  // tp1 pp1 decode: prefill tp1 x1/x2/x3 with decode x1..x3 that fit, tp2 x1 with x1/x2, tp4
  // leaves none; the other decode layouts fewer.
  CHECK(split > 0);
}

TEST_CASE("serving search: a search past 3 billion engine steps is refused, naming --requests") {
  ServingProblem p = llama8b_problem();  // 2 GPUs: 20 candidates under vLLM, all fitting
  REQUIRE(serving_candidates(p).size() == 20);
  // 20 layouts × 200,000 requests × (64 answer steps + 1 prompt step) = 2.6e8: within.
  p.workload.requests = 200'000;
  CHECK(search_steps(p) == 20.0 * 200'000 * 65);
  CHECK(check_search_size(p).empty());
  // 8 GPUs (more layouts) of 2,000 + 2,000 tokens: 2,001 steps a request, past 1e10.
  p.gpus = 8;
  p.workload.isl = 2000;
  p.workload.osl = 2000;
  const double layouts = static_cast<double>(serving_candidates(p).size());
  REQUIRE(layouts * 200'000 * 2001 > 1e10);
  CHECK(search_steps(p) == layouts * 200'000 * 2001);
  const std::vector<Diagnostic> too_big = check_search_size(p);
  REQUIRE(too_big.size() == 1);
  CHECK(too_big[0].field == "requests");
  CHECK(too_big[0].value == "200000");
  CHECK(too_big[0].rule == fmt::format("the search would replay up to {:.3g} engine steps "
                                       "(layouts that fit × requests × their steps), beyond the "
                                       "10000000000 it handles; give --layout, fewer --gpus or "
                                       "fewer requests",
                                       layouts * 200'000 * 2001));
}

TEST_CASE("serving search: layouts whose weights do not fit count no steps") {
  // llama3-405b in BF16 (810 GB) fits on none of 2 H100s' layouts.
  ServingProblem p = meshplan::testing::shipped_serving_problem("llama3-405b", "dgx-h100-1n", 2);
  p.workload.isl = 2000;
  p.workload.osl = 500;
  REQUIRE(!serving_candidates(p).empty());
  CHECK(search_steps(p) == 0);
}

TEST_CASE(
    "serving: an open loop offered more requests/s than the layout sustains offline is "
    "overloaded and does not meet the load, whatever the SLO") {
  ServingProblem p = meshplan::testing::poisson_workload(llama8b_problem(), 2000, 500, 50, 200);
  p.gpus = 1;       // no SLO
  ServingLayout l;  // tp1 x1
  const std::optional<ServingEstimate> over = evaluate_serving(p, l);
  REQUIRE(over.has_value());
  // The same 200 requests all at once: the saturation rate.
  ServingProblem offline = p;
  offline.workload.load = LoadKind::offline;
  const std::optional<ServingEstimate> saturated = evaluate_serving(offline, l);
  REQUIRE(saturated.has_value());
  const double sustained = 200 / saturated->replay.duration_s;
  CHECK(over->saturation_requests_per_s == doctest::Approx(sustained));
  CHECK(over->offered_requests_per_s == 50);  // the rate asked
  CHECK(over->offered_requests_per_s > sustained);
  CHECK(over->overloaded);
  CHECK(over->slo_attainment == 1);  // no SLO to miss: the load alone is not met
  CHECK_FALSE(over->meets_slo);
  // Offered 5% more than it sustains: overloaded, however near the offered rate the replay's
  // served rate comes (it is checked at any shortfall).
  p.workload.request_rate_per_s = 1.05 * sustained;
  const std::optional<ServingEstimate> barely = evaluate_serving(p, l);
  REQUIRE(barely.has_value());
  CHECK(barely->saturation_requests_per_s == doctest::Approx(sustained));
  CHECK(barely->overloaded);
  CHECK_FALSE(barely->meets_slo);
  // A tenth of a request per second: far under what it sustains. The saturation rate is asked
  // exactly where the replay served less than offered.
  p.workload.request_rate_per_s = 0.1;
  const std::optional<ServingEstimate> under = evaluate_serving(p, l);
  REQUIRE(under.has_value());
  CHECK((under->served_requests_per_s < kOverloadCheckShare * under->offered_requests_per_s) ==
        (under->saturation_requests_per_s > 0));
  CHECK_FALSE(under->overloaded);
  CHECK(under->meets_slo);
  // A trace's arrivals, 50 per second: offered over its first to last arrival.
  auto trace = std::make_shared<std::vector<TracedRequest>>();
  for (int i = 0; i < 200; ++i) trace->push_back({0.02 * i, 2000, 500});
  ServingProblem traced = p;
  traced.workload.load = LoadKind::trace;
  traced.workload.trace = trace;
  traced.workload.requests = 0;
  const std::optional<ServingEstimate> from_trace = evaluate_serving(traced, l);
  REQUIRE(from_trace.has_value());
  CHECK(from_trace->offered_requests_per_s == doctest::Approx(50));
  CHECK(from_trace->overloaded);
  // A closed loop is never checked: it offers what it serves.
  p.workload.load = LoadKind::concurrency;
  const std::optional<ServingEstimate> closed = evaluate_serving(p, l);
  REQUIRE(closed.has_value());
  CHECK(closed->offered_requests_per_s == 0);
  CHECK_FALSE(closed->overloaded);
}

TEST_CASE("serving search: without an SLO a layout that keeps up ranks above an overloaded one") {
  // 2 GPUs, no SLO
  const ServingProblem p =
      meshplan::testing::poisson_workload(llama8b_problem(), 2000, 500, 8, 200);
  const ServingSearchResult r = search_serving(p);
  REQUIRE(!r.ranked.empty());
  bool seen_overloaded = false;
  for (const ServingEstimate& e : r.ranked) {
    if (e.overloaded) seen_overloaded = true;
    CHECK_FALSE((seen_overloaded && !e.overloaded));  // every overloaded one after the rest
  }
  CHECK(seen_overloaded);
  CHECK_FALSE(r.ranked.front().overloaded);
}

TEST_CASE(
    "serving search: under a request rate the fewest replicas that keep up are found between "
    "the powers of two") {
  // llama3-8b at 14 requests/s of 2,000 + 500 tokens on up to 8 H100s: one tp1 replica per GPU
  // sustains about 5 requests/s, so 2 are overloaded and 4 keep up; the bisection between them
  // finds 3, which serve the load with the most tokens/s per GPU.
  const ServingProblem p = rate14_problem();
  const ServingSearchResult r = search_serving(p);
  REQUIRE(!r.ranked.empty());
  const ServingEstimate& best = r.ranked.front();
  CHECK(short_text(best.layout) == "tp1 pp1 ep1 x3 b174");
  CHECK(best.meets_slo);
  ServingLayout fewer = best.layout;
  fewer.replicas = 2;
  const std::optional<ServingEstimate> two = evaluate_serving(p, fewer);
  REQUIRE(two.has_value());
  CHECK(two->overloaded);
  // The bisection replayed 3 beside the powers of two, and 2 was one of those.
  CHECK(find_layout(r, "tp1 pp1 ep1 x2 b174") != nullptr);
}

TEST_CASE("serving search: a disaggregated layout's decode replicas are bisected as well") {
  // The same load with --disaggregated and TTFT ≤ 0.5 s, TPOT ≤ 20 ms: tp1 decode replicas
  // behind one tp2 prefill worker fall short at 2 and meet at 4, and 3 meet.
  const ServingSearchResult r = search_serving(rate14_disaggregated_problem());
  const ServingEstimate* two = find_layout(r, "tp1 pp1 ep1 x2 b174 | prefill tp2 x1");
  const ServingEstimate* three = find_layout(r, "tp1 pp1 ep1 x3 b174 | prefill tp2 x1");
  const ServingEstimate* four = find_layout(r, "tp1 pp1 ep1 x4 b174 | prefill tp2 x1");
  REQUIRE(two != nullptr);
  REQUIRE(three != nullptr);
  REQUIRE(four != nullptr);
  CHECK_FALSE(two->meets_slo);
  CHECK(three->meets_slo);
  CHECK(four->meets_slo);
}

TEST_CASE("serving search: the same layouts in the same order on 1, 2 or 3 threads") {
  auto listing = [&](int threads) {
    ServingProblem q = rate14_disaggregated_problem();
    q.threads = threads;
    const ServingSearchResult r = search_serving(q);
    std::string text = fmt::format("{} evaluated, {} skipped\n", r.evaluated, r.skipped);
    for (const ServingEstimate& e : r.ranked)
      text += fmt::format("{} {} {}\n", short_text(e.layout), e.output_tokens_per_s,
                          e.replay.ttft_s.p99);
    for (size_t i : r.pareto) text += fmt::format("front {}\n", i);
    return text;
  };
  const std::string one = listing(1);
  CHECK(one.size() > 1000);  // some hundred layouts
  CHECK(listing(2) == one);
  CHECK(listing(3) == one);
}

TEST_CASE("serving: a disaggregated layout counts both pools' GPUs and moves each prompt's KV") {
  ServingProblem p = llama8b_problem();
  p.gpus = 4;
  ServingLayout l;
  l.tp = 2;
  l.prefill_tp = 1;
  l.prefill_replicas = 2;
  REQUIRE(check_serving_layout(p, l).empty());
  const std::optional<ServingEstimate> e = evaluate_serving(p, l);
  REQUIRE(e.has_value());
  CHECK(e->layout.gpus() == 4);
  REQUIRE(e->prefill_memory.has_value());
  // One node: over NVLink, 256 tokens × the decode layout's KV bytes per token and GPU.
  const NetworkLevel& nvlink = p.cluster.network.front();
  CHECK(e->kv_transfer_s ==
        doctest::Approx(nvlink.latency_s + 256 * e->memory.kv_bytes_per_token /
                                               nvlink.effective_bandwidth_bytes_per_s()));
  // The replay covers both pools: its throughput is the plan's.
  CHECK(e->output_tokens_per_s == e->replay.output_tokens_per_s);
  CHECK(e->output_tokens_per_s_per_gpu == doctest::Approx(e->output_tokens_per_s / 4));
  CHECK(e->replay.requests.size() == 64);
  // GPUs beyond those available are refused by name.
  l.prefill_replicas = 3;
  REQUIRE(check_serving_layout(p, l).size() == 1);
  CHECK(check_serving_layout(p, l)[0].rule ==
        "tp × pp × replicas + prefill_tp × prefill_replicas = 5 exceeds the 4 GPUs available");
}

TEST_CASE("serving search: ranked by tokens/s per GPU, layouts meeting the SLO first") {
  ServingProblem p = llama8b_problem();  // a closed loop: no layout falls behind the load
  const ServingSearchResult r = search_serving(p);  // no SLO: every layout meets it
  REQUIRE(r.ranked.size() >= 3);
  for (size_t i = 1; i < r.ranked.size(); ++i) {
    CHECK(r.ranked[i].meets_slo);
    CHECK(r.ranked[i - 1].output_tokens_per_s_per_gpu >= r.ranked[i].output_tokens_per_s_per_gpu);
  }
  // Nobody meets TPOT ≤ 1 µs: the nearest first, by the factor it would have to loosen by.
  p.options.slo.tpot_s = 1e-6;
  const ServingSearchResult missed = search_serving(p);
  REQUIRE(missed.ranked.size() == r.ranked.size());
  CHECK_FALSE(missed.ranked.front().meets_slo);
  for (size_t i = 1; i < missed.ranked.size(); ++i)
    CHECK(missed.ranked[i - 1].slo_scale <= missed.ranked[i].slo_scale);
  // The same inputs give the same ranking.
  const ServingSearchResult again = search_serving(p);
  CHECK(again.ranked.front().output_tokens_per_s == missed.ranked.front().output_tokens_per_s);
}

TEST_CASE("serving: slo_scale is the least factor on the objectives with which the layout meets") {
  // Poisson arrivals spread the requests' TTFT and TPOT; both objectives set, both binding.
  ServingProblem p = rate14_problem();
  ServingLayout l;
  l.tp = 4;
  l.pp = 2;
  p.options.slo = Slo{0.05, 0.005};
  const std::optional<ServingEstimate> e = evaluate_serving(p, l);
  REQUIRE(e.has_value());
  REQUIRE_FALSE(e->overloaded);
  REQUIRE_FALSE(e->meets_slo);
  const double k = e->slo_scale;
  REQUIRE(k > 1);
  // Scaled by k (a hair more, for the division's rounding) it meets; a hair less, it misses.
  for (const auto& [factor, meets] : {std::pair{k * (1 + 1e-12), true}, {k * (1 - 1e-9), false}}) {
    ServingProblem scaled = p;
    scaled.options.slo = Slo{0.05 * factor, 0.005 * factor};
    const std::optional<ServingEstimate> s = evaluate_serving(scaled, l);
    REQUIRE(s.has_value());
    CHECK(s->meets_slo == meets);
    CHECK(s->output_tokens_per_s == e->output_tokens_per_s);  // the SLO changes no replay
  }
  // Without an SLO there is nothing to loosen.
  p.options.slo = Slo{};
  CHECK(evaluate_serving(p, l)->slo_scale == 0);
}

TEST_CASE(
    "serving search: layouts missing the SLO follow, those keeping up first, then the nearest") {
  // (tokens/s per GPU, meets the SLO, the factor the SLO would have to loosen by, overloaded)
  auto estimate = [](double per_gpu, bool meets, double scale, bool overloaded) {
    ServingEstimate e = with(per_gpu, 10);
    e.meets_slo = meets;
    e.slo_scale = scale;
    e.overloaded = overloaded;
    return e;
  };
  ServingSearchResult r;
  r.ranked = {estimate(300, false, 1.60, false), estimate(100, true, 0.8, false),
              estimate(500, false, 1.02, true),  estimate(200, false, 1.05, false),
              estimate(250, false, 1.05, false), estimate(150, true, 0.99, false),
              estimate(400, false, 1.01, true)};
  rank_estimates(r);
  std::vector<double> order;
  for (const ServingEstimate& e : r.ranked) order.push_back(e.output_tokens_per_s_per_gpu);
  // Met: by tokens/s per GPU. Missed, keeping up: 5% over (250, then 200) before 60% over,
  // whatever their tokens/s per GPU. Falling behind the load last: 1% over before 2%.
  CHECK(order == std::vector<double>{150, 100, 250, 200, 300, 400, 500});
}

TEST_CASE("serving search: the Pareto front keeps what nothing beats on both axes") {
  const std::vector<ServingEstimate> e = {with(100, 10), with(50, 50), with(40, 40), with(10, 100),
                                          with(100, 10)};
  // (40, 40) is beaten by (50, 50); the second (100, 10) repeats the first.
  CHECK(pareto_front(e) == std::vector<size_t>{0, 1, 3});
}

TEST_CASE("serving search: overloaded layouts stay off the Pareto front unless all are") {
  std::vector<ServingEstimate> e = {with(100, 10), with(50, 50), with(10, 100)};
  e[0].overloaded = true;  // the most per GPU, at a latency that grows without bound
  CHECK(pareto_front(e) == std::vector<size_t>{1, 2});
  e[1].overloaded = e[2].overloaded = true;
  CHECK(pareto_front(e) == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("serving: an asked batch beyond the cache runs as asked where the engine preempts") {
  // Llama 3 70B in FP8 on one H200 leaves about 50 GiB for an FP8 cache: fewer than 64 requests
  // of 4,096 + 4,096 tokens at once. vLLM allocates as sequences grow: max_batch 64 stands, and
  // the replay preempts. TensorRT-LLM reserves whole requests: its batch is what the cache holds.
  ServingProblem p = meshplan::testing::shipped_serving_problem("llama3-70b", "dgx-h200-64n", 1);
  p.options.weights = WeightFormat::fp8;
  p.options.kv = KvFormat::fp8;
  p.workload.isl = 4096;
  p.workload.osl = 4096;
  p.workload.load = LoadKind::concurrency;
  p.workload.concurrency = 64;
  p.workload.requests = 128;
  ServingLayout l;
  l.max_batch = 64;
  p.options.engine = Engine::vllm;
  const std::optional<ServingEstimate> vllm = evaluate_serving(p, l);
  REQUIRE(vllm.has_value());
  REQUIRE(vllm->memory.max_concurrency < 64);
  CHECK(vllm->layout.max_batch == 64);
  CHECK(vllm->replay.preemptions > 0);
  p.options.engine = Engine::trtllm;
  const std::optional<ServingEstimate> trt = evaluate_serving(p, l);
  REQUIRE(trt.has_value());
  CHECK(trt->layout.max_batch == trt->memory.max_concurrency);
  CHECK(trt->replay.preemptions == 0);
  // Under its MAX_UTILIZATION policy TensorRT-LLM allocates and pauses as vLLM does.
  p.options.max_utilization = true;
  const std::optional<ServingEstimate> packed = evaluate_serving(p, l);
  REQUIRE(packed.has_value());
  CHECK(packed->layout.max_batch == 64);
  CHECK(packed->replay.preemptions > 0);
  p.options.max_utilization = false;
  // The search replays vLLM both ways: the batch the cache holds whole, and the engine's own
  // 1024 with preemption.
  p.options.engine = Engine::vllm;
  ServingSearchResult r;
  search_format(p, r);
  bool whole = false, preempting = false;
  for (const ServingEstimate& e : r.ranked) {
    if (e.layout.replicas != 1) continue;
    whole = whole || e.layout.max_batch == e.memory.max_concurrency;
    preempting = preempting || (e.layout.max_batch == 1024 && e.replay.preemptions > 0);
  }
  CHECK(whole);
  CHECK(preempting);
}

TEST_CASE(
    "serving search: --weights auto adds MXFP4 where the model's checkpoint holds its experts so") {
  ServingProblem p = meshplan::testing::shipped_serving_problem("mixtral-8x7b", "dgx-h100-1n", 8);
  p.options.weights_auto = true;
  CHECK(weight_formats(p) == std::vector<WeightFormat>{WeightFormat::bf16, WeightFormat::fp8});
  Result<ModelSpec> oss = load_model(std::string(MESHPLAN_TEST_DATA) + "/hf/gpt-oss-120b.json");
  REQUIRE(oss.ok());
  p.model = oss.value();
  CHECK(weight_formats(p) ==
        std::vector<WeightFormat>{WeightFormat::bf16, WeightFormat::fp8, WeightFormat::mxfp4});
  p.options.weights_auto = false;
  p.options.weights = WeightFormat::fp8;
  CHECK(weight_formats(p) == std::vector<WeightFormat>{WeightFormat::fp8});
}
