// The searches on more GPUs where none on the GPUs given meets the SLO: when they run, and
// where they stop.
#include "serving/more_gpus.h"

#include <doctest/doctest.h>

#include <memory>

#include "serving/estimate_memo.h"
#include "tests/serving/serving_test_problem.h"

using namespace meshplan::serving;

namespace {

// llama3-8b on `gpus` of 512 H100s, one request at a time (a closed loop of concurrency 1) of
// 8,000 + 16 tokens, 20 of them, TTFT ≤ `ttft_s`.
ServingProblem one_at_a_time(int64_t gpus, double ttft_s) {
  ServingProblem p = meshplan::testing::shipped_serving_problem("llama3-8b", "dgx-h100-64n", gpus);
  p.workload.isl = 8000;
  p.workload.osl = 16;
  p.workload.load = LoadKind::concurrency;
  p.workload.concurrency = 1;
  p.workload.requests = 20;
  p.options.slo.ttft_s = ttft_s;
  return p;
}

}  // namespace

TEST_CASE("more GPUs: a prompt no tensor-parallel node prefills in time stops at no nearer") {
  // 8,000 prompt tokens of an 8B model are some 128 TFLOP: more than 10 ms on one node's 8 GPUs.
  // Past one node only replicas grow, and with one request at a time they do not help: the
  // nearest on 16 GPUs is as near as on 8.
  const ServingProblem p = one_at_a_time(8, 0.01);
  const ServingSearchResult first = search_serving(p);
  REQUIRE(wants_more_gpus(p, first));
  const MoreGpus more = search_more_gpus(p, first);
  CHECK(more.stop == MoreGpus::Stop::no_nearer);
  CHECK(more.gpus == 16);
  REQUIRE(more.best.has_value());
  CHECK(more.best->slo_scale == first.ranked.front().slo_scale);
  CHECK(std::string(to_string(more.stop)) == "no_nearer");
}

TEST_CASE("more GPUs: asked only under a load, with an SLO no layout meets, below the cluster") {
  ServingProblem p = one_at_a_time(8, 10.0);  // 10 s: met
  ServingSearchResult r = search_serving(p);
  CHECK_FALSE(wants_more_gpus(p, r));
  p.options.slo.ttft_s = 0.01;
  r = search_serving(p);
  CHECK(wants_more_gpus(p, r));
  p.workload.load = LoadKind::offline;  // the wait for one's turn: not a matter of GPUs
  CHECK_FALSE(wants_more_gpus(p, r));
  p = one_at_a_time(512, 0.01);  // the whole cluster already
  CHECK_FALSE(wants_more_gpus(p, r));
  p = one_at_a_time(8, 0);  // no SLO
  CHECK_FALSE(wants_more_gpus(p, search_serving(p)));
}

TEST_CASE("more GPUs: a larger search takes the smaller one's evaluations, the same answer") {
  // The 16-GPU search's candidates include every layout of the 8-GPU one; with the first
  // search's evaluations kept, those are found instead of replayed, and nothing changes.
  ServingProblem p = one_at_a_time(8, 0.01);
  CHECK(may_want_more_gpus(p));
  const MoreGpus fresh = search_more_gpus(p, search_serving(p));
  p.estimate_memo = std::make_shared<EstimateMemo>();
  const ServingSearchResult first = search_serving(p);
  CHECK(p.estimate_memo->hits() == 0);  // one search asks each layout once
  const MoreGpus kept = search_more_gpus(p, first);
  CHECK(p.estimate_memo->hits() >= static_cast<int64_t>(first.ranked.size()));
  CHECK(kept.stop == fresh.stop);
  CHECK(kept.gpus == fresh.gpus);
  REQUIRE(kept.best.has_value());
  REQUIRE(fresh.best.has_value());
  CHECK(short_text(kept.best->layout) == short_text(fresh.best->layout));
  CHECK(kept.best->output_tokens_per_s == fresh.best->output_tokens_per_s);
  CHECK(kept.best->replay.ttft_s.p99 == fresh.best->replay.ttft_s.p99);
  p.workload.load = LoadKind::offline;  // offline: no larger search to keep them for
  CHECK_FALSE(may_want_more_gpus(p));
}
