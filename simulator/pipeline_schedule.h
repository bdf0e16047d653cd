// Pipeline schedules: for each stage (pipeline rank), the order in which it runs the forward
// (F), backward (B) and, for zero-bubble schedules, weight-gradient (W) passes of its model
// chunks and micro-batches. Each schedule is an entry of one table (STYLE.md rule 6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/pipeline_placement.h"
#include "core/result.h"
#include "core/schedule.h"

namespace meshplan::sim {

enum class PassKind : uint8_t {
  forward,   // F
  backward,  // B: the full backward, or only the input gradient when the schedule splits it
  weight,    // W: the weight gradient (only in schedules with splits_backward)
};

struct Pass {
  PassKind kind;
  int virtual_chunk;  // the slot on this stage: model chunk placement.stage_chunks[stage][slot]
  int micro_batch;    // 0 .. m-1
  bool operator==(const Pass&) const = default;
};

// passes[stage] is that stage's order; every (virtual chunk, micro-batch) appears once as F,
// once as B and, when splits_backward, once as W.
struct PipelineOrder {
  Schedule schedule;
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
  bool splits_backward = false;
  std::vector<std::vector<Pass>> passes;
  PipelinePlacement placement;  // which stage runs which model chunk (core/pipeline_placement.h)
};

// What the analytic model needs of a pipeline to price a schedule: m micro-batches over pp
// stages of vpp chunks each; t_max the slowest stage's time per micro-batch (forward, backward
// and communication), t_sum the sum over stages, zb_bubble the largest stage time less twice
// its weight-gradient time (ZB-H1 fills its bubble with W passes).
// dual_bubble is DualPipe's F&B + B − 3W per chunk, but at least a chunk's forward F: the
// largest max(F, t + B − 3W)/2 over the stages, B the full backward.
// With F a stage's forward, W its weight gradient and B the rest of its time (input gradient,
// exposed communication): zb_floor is the largest max(F, B) (interleaved zero bubble's bubble
// when W exceeds either), zb_v_bubble the largest max(3F − 2B, 3B − 2F, 2F + B − 2W, W) (ZB-V's
// bound; all four equal F when F = B = W).
struct PipelineTimes {
  double m = 1, pp = 1, vpp = 1;
  double t_max = 0, t_sum = 0, zb_bubble = 0;
  double dual_bubble = 0;
  double zb_floor = 0, zb_v_bubble = 0;
};

struct ScheduleInfo {
  Schedule schedule;
  bool splits_backward;  // B and W are separate passes
  bool chunked;          // each rank holds more than one chunk (interleaved, dualpipev)
  const char* source;    // where the ordering comes from
  // Micro-batches whose activations stage `stage` holds at its peak (a fraction with vpp > 1:
  // chunks in flight over vpp). REQUIRES: 0 ≤ stage < pp, m ≥ 1.
  double (*in_flight_micro_batches)(int64_t pp, int64_t vpp, int64_t m, int64_t stage);
  // Time of the pipeline's forward and backward passes for one step, pp > 1.
  double (*pipeline_time_s)(const PipelineTimes& t);
};
// The table of schedules, in enum order.
const std::vector<ScheduleInfo>& schedule_table();
const ScheduleInfo& schedule_info(Schedule s);

// The most passes (forward, backward and weight-gradient passes of every micro-batch on every
// chunk) one simulation runs: 4 million, ~1 GB of graph and a few seconds. Llama 3 405B's
// largest published layout (pp 16, vpp 8, 128 micro-batches) needs 49,152.
constexpr int64_t kMaxPipelinePasses = 4'000'000;

// The per-stage order of `schedule` for pp stages, vpp chunks per stage and m micro-batches.
// Errors (values, not asserts): pp, vpp or m < 1; more than kMaxPipelinePasses passes; a vpp
// the schedule does not take (schedule_takes_vpp); interleaved with m not a multiple of pp
// (Megatron-LM's requirement); dualpipe/dualpipev with m < 2·pp (dualpipe: odd pp or m).
Result<PipelineOrder> make_pipeline_order(Schedule schedule, int pp, int vpp, int micro_batches);

// "F0 F1 B0 W0 ..." for one stage; with vpp > 1 each pass carries its chunk: "F0.1" is
// micro-batch 0 of virtual chunk 1.
std::string format_stage_order(const PipelineOrder& order, int stage);

}  // namespace meshplan::sim
