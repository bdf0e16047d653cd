// Which pipeline rank holds which model chunk. The layers split into `chunks` pieces
// (chunk_layers below), and each rank runs its chunks in slot order:
//   looped (every schedule but the two below): chunk c on rank c mod pp, slot c / pp
//     (Megatron-LM's placement; pp·vpp chunks);
//   V-shape (dualpipev, zb-v): 2·pp chunks, rank s holds chunk s going down and chunk
//     2·pp − 1 − s coming back, so the first and last chunks share rank 0 (the DualPipe
//     repository's dualpipev.py; Sea AI Lab's "cut-in-half"; ZB-V, Qi et al. 2023 §6, and
//     torch.distributed.pipelining's "v" stage-to-rank style);
//   mirrored (dualpipe): pp chunks, rank s holds chunk s of the micro-batches entering at rank 0
//     and a second copy of chunk pp − 1 − s for those entering at rank pp − 1, which run the
//     pipeline in reverse (DeepSeek-V3 report §3.2.1, arXiv 2412.19437: two copies of the
//     parameters).
#pragma once

#include <cstdint>
#include <vector>

#include "core/schedule.h"

namespace meshplan {

// Layers an uneven split of `layers` over `chunks` ceil-sized chunks is short: ceil(layers /
// chunks) · chunks − layers (0 when they divide).
int64_t chunk_deficit(int64_t layers, int64_t chunks);

// Per-chunk layer counts for pp·vpp chunks in pipeline order (chunk c lives on rank c % pp).
// Even when divisible; otherwise ceil-sized chunks with the deficit taken from the last chunk,
// then the first, then the second-to-last, ... (Llama 3 405B: first and last stages hold fewer).
std::vector<int64_t> chunk_layers(int64_t layers, int64_t pp, int64_t vpp);

enum class PlacementKind { looped, v_shape, mirrored };
// The placement a pipeline's schedule uses (looped whenever pp = 1).
PlacementKind placement_kind(const PipelineShape& pipeline);

struct PipelinePlacement {
  int64_t chunks = 1;                              // model chunks the layers split into
  std::vector<std::vector<int64_t>> stage_chunks;  // [rank] → its chunks, in slot order
  // [chunk] → the rank holding it (mirrored: the copy the first half of the batch passes).
  std::vector<int64_t> chunk_stage;
  PlacementKind kind = PlacementKind::looped;

  // The rank that runs `chunk` for micro-batch `mb` of `micro_batches` (mirrored: the second
  // half runs in reverse).
  int64_t holder(int64_t chunk, int64_t mb, int64_t micro_batches) const;
};

// Share of the step's micro-batches each rank runs through each chunk it holds: 1, except
// mirrored (each copy sees the half that enters from its end).
double micro_batch_share(const PipelineShape& pipeline);
// Whether pipeline rank `stage` holds the first (embedding) or the last (LM head) chunk: looped
// rank 0 and pp − 1, V-shape rank 0 for both, mirrored ranks 0 and pp − 1 for both.
bool holds_first_chunk(const PipelineShape& pipeline, int64_t stage);
bool holds_last_chunk(const PipelineShape& pipeline, int64_t stage);

// REQUIRES: pipeline.pp ≥ 1, pipeline.vpp ≥ 1 (dualpipev, zb-v: vpp = 2).
PipelinePlacement pipeline_placement(const PipelineShape& pipeline);

}  // namespace meshplan
