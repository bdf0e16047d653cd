// The disaggregated replays a search keeps across pool sizes: which sizes a kept replay is, and
// the pools' shares set for the size asked.
#include "serving/pool_replay_memo.h"

#include <doctest/doctest.h>

using namespace meshplan::serving;

namespace {

// A layout of `prefill` prefill workers and `decode` decode replicas (tp 1 each).
PoolReplayMemo::Shape shape(int64_t prefill, int64_t decode) {
  PoolReplayMemo::Shape s;
  s.layout.prefill_tp = 1;
  s.layout.prefill_replicas = prefill;
  s.layout.replicas = decode;
  s.load = LoadKind::request_rate;
  return s;
}

// A replay of 10 s in which the pools stepped 6 and 12 s and used `prefill` and `decode` workers,
// 90% of its requests within the SLO.
PoolReplayMemo::Outcome replay_using(int64_t prefill, int64_t decode) {
  PoolReplayMemo::Outcome o;
  o.slo_attainment = 0.9;
  o.slo_scale = 1.2;
  ReplayResult& r = o.replay;
  r.duration_s = 10;
  r.prefill_busy_s = 6;
  r.decode_busy_s = 12;
  r.prefill_workers_used = prefill;
  r.decode_workers_used = decode;
  return o;
}

}  // namespace

TEST_CASE("pool replay memo: a replay that left workers idle is every larger pool's") {
  PoolReplayMemo memo;
  // 4 prefill workers of which 2 took prompts, 8 decode workers of which 3 took sequences.
  memo.keep(shape(4, 8), replay_using(2, 3));
  // From 2 prefill and 3 decode workers on: the same replay, shares for the sizes asked.
  const std::optional<PoolReplayMemo::Outcome> big = memo.find(shape(16, 64));
  REQUIRE(big.has_value());
  CHECK(big->replay.prefill_pool_busy == 6.0 / (16 * 10));
  CHECK(big->replay.decode_pool_busy == 12.0 / (64 * 10));
  CHECK(big->slo_attainment == 0.9);
  CHECK(big->slo_scale == 1.2);
  CHECK(memo.find(shape(2, 3)).has_value());
  // Fewer than it used: not this replay.
  CHECK_FALSE(memo.find(shape(1, 8)).has_value());
  CHECK_FALSE(memo.find(shape(4, 2)).has_value());
  // Another layout, load or KV transfer: not this replay.
  PoolReplayMemo::Shape other = shape(4, 8);
  other.layout.tp = 2;
  CHECK_FALSE(memo.find(other).has_value());
  other = shape(4, 8);
  other.load = LoadKind::offline;
  CHECK_FALSE(memo.find(other).has_value());
  other = shape(4, 8);
  other.transfer_latency_s = 1e-6;
  CHECK_FALSE(memo.find(other).has_value());
  CHECK(memo.hits() == 2);
}

TEST_CASE("pool replay memo: a pool whose every worker took part is that size's alone") {
  PoolReplayMemo memo;
  // Every decode worker used, prefill workers idle: other prefill sizes from 1, decode 8 only.
  memo.keep(shape(4, 8), replay_using(1, 8));
  CHECK(memo.find(shape(1, 8)).has_value());
  CHECK(memo.find(shape(32, 8)).has_value());
  CHECK_FALSE(memo.find(shape(4, 16)).has_value());
  CHECK_FALSE(memo.find(shape(4, 4)).has_value());
  // Both pools used whole: not kept (no other size is that replay).
  PoolReplayMemo whole;
  whole.keep(shape(4, 8), replay_using(4, 8));
  CHECK_FALSE(whole.find(shape(4, 8)).has_value());
}
