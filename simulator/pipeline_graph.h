// Turns a pipeline problem (per-chunk costs from the planner's cost model, a schedule) into the
// operation graph of one training step.
#pragma once

#include <vector>

#include "core/result.h"
#include "core/schedule.h"
#include "simulator/operation_graph.h"
#include "simulator/pipeline_schedule.h"

namespace meshplan::sim {

// Costs of one model chunk, per micro-batch unless stated. All in seconds, finite, >= 0; zero is
// allowed everywhere (an empty chunk, no communication).
struct ChunkCosts {
  double forward_s = 0;
  double backward_input_s = 0;   // activation gradient (B)
  double backward_weight_s = 0;  // weight gradient (W); runs right after B unless the schedule
                                 // splits the backward (zero-bubble, DualPipe)
  double recompute_s = 0;        // recomputed forward, on the compute stream before the backward
  double dp_grad_sync_s = 0;     // once per step: gradient reduction of this chunk's parameters,
                                 // issued on the stage's dp stream when the chunk's last backward
                                 // (or W) finishes, overlapping whatever follows
  double zero3_gather_s = 0;     // ZeRO-3 only: parameter all-gather before each forward and
                                 // each backward (before its recompute), on the stage's zero3
                                 // stream, prefetched one operation ahead
};

struct PipelineProblem {
  int pp = 1;
  int vpp = 1;  // model chunks per stage
  int micro_batches = 1;
  Schedule schedule = Schedule::one_f_one_b;
  // One entry per model chunk in model order (pp·vpp; pp for dualpipe); the schedule's
  // placement (core/pipeline_placement.h) says which stage runs each.
  std::vector<ChunkCosts> chunks;
  // Activation (forward) or activation-gradient (backward) transfer per micro-batch across one
  // stage boundary, each direction; asynchronous: the sender's compute stream does not wait,
  // the receiver's operation waits for the transfer. 0: no transfer operations at all.
  double p2p_s = 0;
  double optimizer_s = 0;  // per stage, after its last backward and its gradient reductions
};

// The streams of one stage, in the order of their ids: stream id = stage·kStreamsPerStage + kind.
enum class StageStream : int { compute, send_forward, send_backward, dp, zero3 };
inline constexpr int kStreamsPerStage = 5;
const char* to_string(StageStream s);
inline StreamId stream_id(int stage, StageStream s) {
  return stage * kStreamsPerStage + static_cast<int>(s);
}

struct PipelineGraph {
  PipelineOrder order;
  OperationGraph graph;
};

// Builds the graph of one step: the schedule's passes on each compute stream; sends on the
// send streams; gradient reductions on the dp stream; ZeRO-3 gathers on the zero3 stream; one
// optimizer operation per stage, after that stage's reductions. Every stage has all
// kStreamsPerStage streams, used or not.
// Errors: the schedule's (see make_pipeline_order); chunks.size() != pp·vpp; a cost that is
// negative or not finite.
Result<PipelineGraph> build_pipeline_graph(const PipelineProblem& problem);

}  // namespace meshplan::sim
