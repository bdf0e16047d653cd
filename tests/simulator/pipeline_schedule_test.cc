// Per-stage pass orders of each schedule, pinned as text (p = 4, m = 8; interleaved v = 2).
#include "simulator/pipeline_schedule.h"

#include <doctest/doctest.h>

#include <set>
#include <tuple>

namespace meshplan::sim {
namespace {

std::vector<std::string> orders(Schedule s, int pp, int vpp, int m) {
  Result<PipelineOrder> o = make_pipeline_order(s, pp, vpp, m);
  REQUIRE(o.ok());
  std::vector<std::string> out;
  for (int i = 0; i < pp; ++i) out.push_back(format_stage_order(*o, i));
  return out;
}

TEST_CASE("gpipe runs every forward and then every backward in micro-batch order") {
  const auto o = orders(Schedule::gpipe, 4, 1, 8);
  for (const std::string& stage : o)
    CHECK(stage == "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7");
}

TEST_CASE("1f1b warms up with p-stage-1 forwards then alternates then drains") {
  const auto o = orders(Schedule::one_f_one_b, 4, 1, 8);
  CHECK(o[0] == "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  CHECK(o[1] == "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
  CHECK(o[2] == "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  CHECK(o[3] == "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST_CASE("zb-h1 keeps 1f1b's F/B order and defers W by the stage index") {
  const auto o = orders(Schedule::zb_h1, 4, 1, 8);
  CHECK(o[0] == "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7");
  CHECK(o[1] == "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7");
  CHECK(o[2] == "F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7");
  CHECK(o[3] == "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7");
}

TEST_CASE("interleaved follows Megatron-LM's chunk groups and warm-up counts") {
  const auto o = orders(Schedule::interleaved, 4, 2, 8);
  CHECK(o[0] ==
        "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 F4.0 F5.0 F6.0 B0.1 F7.0 B1.1 F4.1 B2.1 F5.1 "
        "B3.1 F6.1 B0.0 F7.1 B1.0 B2.0 B3.0 B4.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0");
  CHECK(o[1] ==
        "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 F4.0 B0.1 F5.0 B1.1 F6.0 B2.1 F7.0 B3.1 F4.1 "
        "B0.0 F5.1 B1.0 F6.1 B2.0 F7.1 B3.0 B4.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0");
  CHECK(o[2] ==
        "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 B0.1 F3.1 B1.1 F4.0 B2.1 F5.0 B3.1 F6.0 B0.0 F7.0 "
        "B1.0 F4.1 B2.0 F5.1 B3.0 F6.1 B4.1 F7.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0");
  CHECK(o[3] ==
        "F0.0 F1.0 F2.0 F3.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 F4.0 B0.0 F5.0 B1.0 F6.0 "
        "B2.0 F7.0 B3.0 F4.1 B4.1 F5.1 B5.1 F6.1 B6.1 F7.1 B7.1 B4.0 B5.0 B6.0 B7.0");
}

TEST_CASE("every schedule runs each chunk and micro-batch exactly once per pass kind") {
  for (const ScheduleInfo& info : schedule_table()) {
    for (int m : {1, 3, 4, 8, 9, 12}) {
      CAPTURE(to_string(info.schedule));
      CAPTURE(m);
      const bool v_shape = info.schedule == Schedule::dualpipev || info.schedule == Schedule::zb_v;
      const bool interleaved =
          info.schedule == Schedule::interleaved || info.schedule == Schedule::zb_interleaved;
      const int vpp = interleaved ? 3 : v_shape ? 2 : 1;
      Result<PipelineOrder> o = make_pipeline_order(info.schedule, 4, vpp, m);
      const bool dual = info.schedule == Schedule::dualpipe || info.schedule == Schedule::dualpipev;
      if ((interleaved && m % 4 != 0) || (dual && m < 8) ||
          (info.schedule == Schedule::dualpipe && m % 2 != 0)) {
        CHECK_FALSE(o.ok());
        continue;
      }
      REQUIRE(o.ok());
      // Every (pass kind, chunk, micro-batch) once over the whole pipeline: each stage's slots
      // hold its chunks, and DualPipe's two copies of a chunk split the micro-batches.
      std::set<std::tuple<int, int64_t, int>> seen;
      size_t passes = 0;
      for (int stage = 0; stage < 4; ++stage) {
        for (const Pass& p : o->passes[stage]) {
          const int64_t chunk = o->placement.stage_chunks[stage][p.virtual_chunk];
          CHECK(o->placement.holder(chunk, p.micro_batch, m) == stage);
          seen.insert({static_cast<int>(p.kind), chunk, p.micro_batch});
          ++passes;
        }
      }
      const size_t kinds = info.splits_backward ? 3 : 2;
      CHECK(seen.size() == passes);
      CHECK(passes == kinds * static_cast<size_t>(o->placement.chunks) * m);
    }
  }
}

TEST_CASE("dualpipev follows the DualPipe repository's eight steps on each rank") {
  // pp = 2 ranks (a V of 4 chunks), 4 micro-batches; slot 0 is chunk r going down, slot 1
  // chunk 3 − r coming back. Rank 0: 2 F0 | F0 F1 | B1 W1 F1 | F0 B1 F1 B0 | B1 F1 B0 |
  // B1 B0(W deferred) | W B0(deferred) | W.
  const auto o = orders(Schedule::dualpipev, 2, 2, 4);
  CHECK(o[0] ==
        "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 F3.0 B1.1 W1.1 F2.1 B0.0 W0.0 B2.1 W2.1 F3.1 B1.0 "
        "W1.0 B3.1 W3.1 B2.0 W2.0 B3.0 W3.0");
  // Rank 1 (the V's turn): F0 F1 twice | 2 × (F0 B1 F1 B0) | B1 B0, then B1 B0 with W
  // deferred | W W.
  CHECK(o[1] ==
        "F0.0 F0.1 F1.0 F1.1 F2.0 B0.1 W0.1 F2.1 B0.0 W0.0 F3.0 B1.1 W1.1 F3.1 B1.0 W1.0 B2.1 "
        "W2.1 B2.0 W2.0 B3.1 B3.0 W3.1 W3.0");
}

TEST_CASE("dualpipe runs the dualpipev order on half ranks, half the batch from each end") {
  // pp = 4: ranks 0 and 3 run the V's rank 0, ranks 1 and 2 its rank 1, with m/2 = 4
  // micro-batches per direction. On rank 0 phase 0 is slot 0 (micro-batches 0-3 entering
  // here); on rank 3 phase 0 is slot 1 (micro-batches 4-7 entering at rank 3).
  const auto o = orders(Schedule::dualpipe, 4, 1, 8);
  CHECK(o[0] == "F0 F1 F2 F4 B4 W4 F5 F3 B5 W5 F6 B0 W0 B6 W6 F7 B1 W1 B7 W7 B2 W2 B3 W3");
  CHECK(o[3] == "F4 F5 F6 F0 B0 W0 F1 F7 B1 W1 F2 B4 W4 B2 W2 F3 B5 W5 B3 W3 B6 W6 B7 W7");
}

TEST_CASE("zb-h2 warms up with 2(p - s) - 1 forwards, then alternates, W_j after B_{j+s}") {
  const auto o = orders(Schedule::zb_h2, 4, 1, 8);
  CHECK(o[0] == "F0 F1 F2 F3 F4 F5 F6 B0 W0 F7 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7");
  CHECK(o[3] == "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7");
}

// ZB-V, hand-run of torch.distributed.pipelining's ScheduleZBVZeroBubble order (p = 4, m = 8;
// ".0" is the rank's chunk going down the V, ".1" the one coming back). Rank 0: 2p − 1 = 7 F0;
// no (F1 F0); p = 4 × (F1 B1 W1); the steady [F0] B0 W0 F1 B1 W1 until both chunks have run
// every forward; no (B0 B1); 4 × (B0 W0).
TEST_CASE("zb-v follows torch's ScheduleZBVZeroBubble on each rank of the V") {
  const auto o = orders(Schedule::zb_v, 4, 2, 8);
  CHECK(o[0] ==
        "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F2.1 B2.1 W2.1 F3.1 "
        "B3.1 W3.1 F7.0 B0.0 W0.0 F4.1 B4.1 W4.1 B1.0 W1.0 F5.1 B5.1 W5.1 B2.0 W2.0 F6.1 B6.1 "
        "W6.1 B3.0 W3.0 F7.1 B7.1 W7.1 B4.0 W4.0 B5.0 W5.0 B6.0 W6.0 B7.0 W7.0");
  // Rank 1: 5 F0; 1 × (F1 F0); 3 × (F1 B1 W1); steady; 1 × (B0 B1) with W deferred;
  // 3 × (B0 W0), the W0 of the oldest deferred B0; the deferred W1.
  CHECK(o[1] ==
        "F0.0 F1.0 F2.0 F3.0 F4.0 F0.1 F5.0 F1.1 B0.1 W0.1 F2.1 B1.1 W1.1 F3.1 B2.1 W2.1 F6.0 "
        "B0.0 W0.0 F4.1 B3.1 W3.1 F7.0 B1.0 W1.0 F5.1 B4.1 W4.1 B2.0 W2.0 F6.1 B5.1 W5.1 B3.0 "
        "W3.0 F7.1 B6.1 W6.1 B4.0 B7.1 B5.0 W4.0 B6.0 W5.0 B7.0 W6.0 W7.1 W7.0");
  // Rank 3, the V's turn: 1 F0; 3 × (F1 F0); 1 × (F1 B1 W1); steady; 3 × (B0 B1).
  CHECK(o[3] ==
        "F0.0 F0.1 F1.0 F1.1 F2.0 F2.1 F3.0 F3.1 B0.1 W0.1 F4.0 B0.0 W0.0 F4.1 B1.1 W1.1 F5.0 "
        "B1.0 W1.0 F5.1 B2.1 W2.1 F6.0 B2.0 W2.0 F6.1 B3.1 W3.1 F7.0 B3.0 W3.0 F7.1 B4.1 W4.1 "
        "B4.0 B5.1 B5.0 B6.1 B6.0 B7.1 B7.0 W4.0 W5.1 W6.1 W7.1 W5.0 W6.0 W7.0");
  // Fewer micro-batches than 2p − 1: torch pads to 2p − 1 and drops the extra passes.
  CHECK(orders(Schedule::zb_v, 2, 2, 1)[0] == "F0.0 F0.1 B0.1 W0.1 B0.0 W0.0");
}

// Interleaved zero bubble, hand-run of torch's ScheduleInterleavedZeroBubble (p = 4, v = 2,
// m = 8: rounds of 4 micro-batches per chunk). Rank s warms up with (v − 1)·p + p − s − 1
// forwards, then F B pairs; from its (s + 1)-th backward on, each B brings the W of the oldest
// backward without one.
TEST_CASE("zb-interleaved follows torch's ScheduleInterleavedZeroBubble") {
  const auto o = orders(Schedule::zb_interleaved, 4, 2, 8);
  CHECK(o[0] ==
        "F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 B0.1 W0.1 F4.0 B1.1 W1.1 F5.0 B2.1 W2.1 F6.0 "
        "B3.1 W3.1 F7.0 B0.0 W0.0 F4.1 B1.0 W1.0 F5.1 B2.0 W2.0 F6.1 B3.0 W3.0 F7.1 B4.1 W4.1 "
        "B5.1 W5.1 B6.1 W6.1 B7.1 W7.1 B4.0 W4.0 B5.0 W5.0 B6.0 W6.0 B7.0 W7.0");
  CHECK(o[3] ==
        "F0.0 F1.0 F2.0 F3.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 W0.1 F4.0 B0.0 W1.1 F5.0 "
        "B1.0 W2.1 F6.0 B2.0 W3.1 F7.0 B3.0 W0.0 F4.1 B4.1 W1.0 F5.1 B5.1 W2.0 F6.1 B6.1 W3.0 "
        "F7.1 B7.1 W4.1 B4.0 W5.1 B5.0 W6.1 B6.0 W7.1 B7.0 W4.0 W5.0 W6.0 W7.0");
}

TEST_CASE("1f1b and zb-h1 run fewer micro-batches than stages") {
  CHECK(orders(Schedule::one_f_one_b, 4, 1, 2)[0] == "F0 F1 B0 B1");
  CHECK(orders(Schedule::zb_h1, 4, 1, 2)[3] == "F0 B0 F1 B1 W0 W1");
}

TEST_CASE("a shape a schedule cannot run is an error value") {
  Result<PipelineOrder> bad_m = make_pipeline_order(Schedule::interleaved, 4, 2, 6);
  REQUIRE_FALSE(bad_m.ok());
  CHECK(bad_m.errors()[0].field == "schedule");
  CHECK(bad_m.errors()[0].value == "interleaved: pp=4, vpp=2, micro_batches=6");
  CHECK(bad_m.errors()[0].rule ==
        "interleaved needs micro_batches to be a multiple of pp (Megatron-LM)");
  CHECK_FALSE(make_pipeline_order(Schedule::interleaved, 4, 1, 8).ok());
  CHECK_FALSE(make_pipeline_order(Schedule::one_f_one_b, 4, 2, 8).ok());
  CHECK_FALSE(make_pipeline_order(Schedule::gpipe, 0, 1, 8).ok());
  CHECK_FALSE(make_pipeline_order(Schedule::zb_h1, 4, 1, 0).ok());
  Result<PipelineOrder> zbi = make_pipeline_order(Schedule::zb_interleaved, 4, 2, 6);
  REQUIRE_FALSE(zbi.ok());
  CHECK(zbi.errors()[0].value == "zb-interleaved: pp=4, vpp=2, micro_batches=6");
  CHECK(zbi.errors()[0].rule ==
        "needs micro_batches to be a multiple of pp (one round of pp micro-batches per chunk)");
  Result<PipelineOrder> zbv = make_pipeline_order(Schedule::zb_v, 4, 3, 8);
  REQUIRE_FALSE(zbv.ok());
  CHECK(zbv.errors()[0].rule == "needs vpp = 2");
  CHECK(make_pipeline_order(Schedule::zb_interleaved, 4, 1, 8).errors()[0].rule ==
        "needs vpp >= 2");
}

TEST_CASE("the schedule table lists every schedule in enum order") {
  const std::vector<ScheduleInfo>& t = schedule_table();
  REQUIRE(t.size() == 9);
  CHECK(t[0].schedule == Schedule::gpipe);
  CHECK(t[1].schedule == Schedule::one_f_one_b);
  CHECK(t[2].schedule == Schedule::interleaved);
  CHECK(t[3].schedule == Schedule::zb_h1);
  CHECK(t[4].schedule == Schedule::zb_h2);
  CHECK(t[5].schedule == Schedule::dualpipe);
  CHECK(t[6].schedule == Schedule::dualpipev);
  CHECK(std::string(to_string(Schedule::zb_h1)) == "zb-h1");
  CHECK(std::string(to_string(Schedule::dualpipev)) == "dualpipev");
  CHECK(t[7].schedule == Schedule::zb_v);
  CHECK(t[8].schedule == Schedule::zb_interleaved);
  CHECK(std::string(to_string(Schedule::zb_v)) == "zb-v");
  CHECK(std::string(to_string(Schedule::zb_interleaved)) == "zb-interleaved");
  CHECK(schedule_info(Schedule::zb_v).splits_backward);
  CHECK(schedule_info(Schedule::zb_interleaved).chunked);
}

TEST_CASE("in-flight micro-batches per stage: gpipe all, 1f1b/zb-h1 pp - stage, interleaved") {
  // pp=4, m=8: gpipe holds 8 everywhere; 1F1B stage 0 holds 4, stage 3 holds 1.
  CHECK(schedule_info(Schedule::gpipe).in_flight_micro_batches(4, 1, 8, 2) == 8.0);
  CHECK(schedule_info(Schedule::one_f_one_b).in_flight_micro_batches(4, 1, 8, 0) == 4.0);
  CHECK(schedule_info(Schedule::zb_h1).in_flight_micro_batches(4, 1, 8, 3) == 1.0);
  CHECK(schedule_info(Schedule::one_f_one_b).in_flight_micro_batches(4, 1, 2, 0) == 2.0);
  // Interleaved, pp=4, vpp=2, stage 0: 2·3 + 1·4 + 1 = 11 chunks over 2 = 5.5 micro-batches.
  CHECK(schedule_info(Schedule::interleaved).in_flight_micro_batches(4, 2, 8, 0) == 5.5);
}

TEST_CASE("in-flight micro-batches of zb-v and zb-interleaved: 1f1b's p on the first stage") {
  // ZB-V (Qi et al. 2023 §6): 2p chunk activations on every rank, p micro-batches of a stage,
  // once m ≥ 2p − 1; fewer micro-batches cap each chunk's count at m.
  const ScheduleInfo& v = schedule_info(Schedule::zb_v);
  for (int64_t s = 0; s < 4; ++s) CHECK(v.in_flight_micro_batches(4, 2, 8, s) == 4.0);
  CHECK(v.in_flight_micro_batches(4, 2, 7, 0) == 4.0);
  // m = 2: rank 0 holds min(2, 7) + min(2, 1) = 3 chunks, rank 3 min(2, 4) + min(2, 4) = 4.
  CHECK(v.in_flight_micro_batches(4, 2, 2, 0) == 1.5);
  CHECK(v.in_flight_micro_batches(4, 2, 2, 3) == 2.0);
  // Interleaved zero bubble: v·p − s chunks before the first backward, over v.
  const ScheduleInfo& i = schedule_info(Schedule::zb_interleaved);
  CHECK(i.in_flight_micro_batches(4, 2, 8, 0) == 4.0);
  CHECK(i.in_flight_micro_batches(4, 2, 8, 3) == 2.5);
  CHECK(i.in_flight_micro_batches(4, 4, 4, 1) == 3.75);
}

TEST_CASE("pipeline time: fill and drain, shrunk by vpp, or ZB-H1's unfilled bubble") {
  // m=8, pp=4, t_max=1, t_sum=4 (balanced): (8 − 1)·1 + 4 = 11.
  const PipelineTimes t{8, 4, 2, 1.0, 4.0, 0.5};
  CHECK(schedule_info(Schedule::gpipe).pipeline_time_s(t) == 11.0);
  CHECK(schedule_info(Schedule::one_f_one_b).pipeline_time_s(t) == 11.0);
  CHECK(schedule_info(Schedule::interleaved).pipeline_time_s(t) == 8.0 + 3.0 / 2);
  CHECK(schedule_info(Schedule::zb_h1).pipeline_time_s(t) == 8.0 + 3 * 0.5);
  const PipelineTimes filled{8, 4, 1, 1.0, 4.0, -0.25};  // W passes more than fill the bubble
  CHECK(schedule_info(Schedule::zb_h1).pipeline_time_s(filled) == 8.0);
}

}  // namespace
}  // namespace meshplan::sim

TEST_CASE("the schedule table is in enum order, so schedule_info indexes it by the enum") {
  const auto& table = meshplan::sim::schedule_table();
  REQUIRE(table.size() == 9);
  for (size_t i = 0; i < table.size(); ++i) {
    CHECK(static_cast<size_t>(table[i].schedule) == i);
    CHECK(&meshplan::sim::schedule_info(table[i].schedule) == &table[i]);
  }
}
