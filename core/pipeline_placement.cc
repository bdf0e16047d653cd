#include "core/pipeline_placement.h"

namespace meshplan {

int64_t chunk_deficit(int64_t layers, int64_t chunks) {
  return (layers + chunks - 1) / chunks * chunks - layers;
}

std::vector<int64_t> chunk_layers(int64_t layers, int64_t pp, int64_t vpp) {
  const int64_t chunks = pp * vpp;
  const int64_t base = (layers + chunks - 1) / chunks;
  std::vector<int64_t> out(static_cast<size_t>(chunks), base);
  int64_t deficit = chunk_deficit(layers, chunks);
  // Take from the ends inward: last, first, second-to-last, second, ...
  for (int64_t i = 0; deficit > 0; ++i, --deficit) {
    int64_t k = i / 2;
    size_t at = static_cast<size_t>(i % 2 == 0 ? chunks - 1 - k : k);
    out[at] -= 1;
  }
  return out;
}

int64_t PipelinePlacement::holder(int64_t chunk, int64_t mb, int64_t micro_batches) const {
  const int64_t first = chunk_stage[static_cast<size_t>(chunk)];
  const auto pp = static_cast<int64_t>(stage_chunks.size());
  return kind == PlacementKind::mirrored && 2 * mb >= micro_batches ? pp - 1 - first : first;
}

double micro_batch_share(const PipelineShape& pipeline) {
  return placement_kind(pipeline) == PlacementKind::mirrored ? 0.5 : 1.0;
}

bool holds_first_chunk(const PipelineShape& pipeline, int64_t stage) {
  const PlacementKind kind = placement_kind(pipeline);
  return stage == 0 || (kind == PlacementKind::mirrored && stage == pipeline.pp - 1);
}

bool holds_last_chunk(const PipelineShape& pipeline, int64_t stage) {
  switch (placement_kind(pipeline)) {
    case PlacementKind::looped:
      return stage == pipeline.pp - 1;
    case PlacementKind::v_shape:
      return stage == 0;
    case PlacementKind::mirrored:
      return stage == 0 || stage == pipeline.pp - 1;
  }
  return false;
}

PlacementKind placement_kind(const PipelineShape& pipeline) {
  if (pipeline.pp > 1 &&
      (pipeline.schedule == Schedule::dualpipev || pipeline.schedule == Schedule::zb_v))
    return PlacementKind::v_shape;
  if (pipeline.pp > 1 && pipeline.schedule == Schedule::dualpipe) return PlacementKind::mirrored;
  return PlacementKind::looped;
}

PipelinePlacement pipeline_placement(const PipelineShape& pipeline) {
  PipelinePlacement p;
  const auto pp = static_cast<size_t>(pipeline.pp);
  p.stage_chunks.resize(pp);
  p.kind = placement_kind(pipeline);
  if (p.kind == PlacementKind::v_shape) {
    p.chunks = 2 * pipeline.pp;
    for (int64_t s = 0; s < pipeline.pp; ++s)
      p.stage_chunks[static_cast<size_t>(s)] = {s, 2 * pipeline.pp - 1 - s};
  } else if (p.kind == PlacementKind::mirrored) {
    p.chunks = pipeline.pp;
    for (int64_t s = 0; s < pipeline.pp; ++s)
      p.stage_chunks[static_cast<size_t>(s)] = {s, pipeline.pp - 1 - s};
  } else {
    p.chunks = pipeline.pp * pipeline.vpp;
    for (int64_t c = 0; c < p.chunks; ++c)
      p.stage_chunks[static_cast<size_t>(c % pipeline.pp)].push_back(c);
  }
  // Each chunk's holder; a mirrored rank's own stage is its first slot, the copy its second.
  p.chunk_stage.assign(static_cast<size_t>(p.chunks), 0);
  for (size_t s = 0; s < pp; ++s) {
    const std::vector<int64_t>& held = p.stage_chunks[s];
    for (size_t slot = 0; slot < (p.kind == PlacementKind::mirrored ? 1 : held.size()); ++slot)
      p.chunk_stage[static_cast<size_t>(held[slot])] = static_cast<int64_t>(s);
  }
  return p;
}

}  // namespace meshplan
