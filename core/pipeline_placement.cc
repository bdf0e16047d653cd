#include "core/pipeline_placement.h"

#include <algorithm>

namespace meshplan {

int64_t PipelinePlacement::holder(int64_t chunk, int64_t mb, int64_t micro_batches) const {
  const auto pp = static_cast<int64_t>(stage_chunks.size());
  if (kind == PlacementKind::mirrored) return 2 * mb < micro_batches ? chunk : pp - 1 - chunk;
  for (int64_t s = 0; s < pp; ++s) {
    const std::vector<int64_t>& held = stage_chunks[static_cast<size_t>(s)];
    if (std::find(held.begin(), held.end(), chunk) != held.end()) return s;
  }
  return -1;
}

double micro_batch_share(const Layout& l) {
  return placement_kind(l) == PlacementKind::mirrored ? 0.5 : 1.0;
}

bool holds_first_chunk(const Layout& l, int64_t stage) {
  const PlacementKind kind = placement_kind(l);
  return stage == 0 || (kind == PlacementKind::mirrored && stage == l.pp - 1);
}

bool holds_last_chunk(const Layout& l, int64_t stage) {
  switch (placement_kind(l)) {
    case PlacementKind::looped:
      return stage == l.pp - 1;
    case PlacementKind::v_shape:
      return stage == 0;
    case PlacementKind::mirrored:
      return stage == 0 || stage == l.pp - 1;
  }
  return false;
}

PlacementKind placement_kind(const Layout& l) {
  if (l.pp > 1 && l.schedule == Schedule::dualpipev) return PlacementKind::v_shape;
  if (l.pp > 1 && l.schedule == Schedule::dualpipe) return PlacementKind::mirrored;
  return PlacementKind::looped;
}

PipelinePlacement pipeline_placement(const Layout& l) {
  PipelinePlacement p;
  const auto pp = static_cast<size_t>(l.pp);
  p.stage_chunks.resize(pp);
  p.kind = placement_kind(l);
  if (p.kind == PlacementKind::v_shape) {
    p.chunks = 2 * l.pp;
    for (int64_t s = 0; s < l.pp; ++s)
      p.stage_chunks[static_cast<size_t>(s)] = {s, 2 * l.pp - 1 - s};
    return p;
  }
  if (p.kind == PlacementKind::mirrored) {
    p.chunks = l.pp;
    for (int64_t s = 0; s < l.pp; ++s) p.stage_chunks[static_cast<size_t>(s)] = {s, l.pp - 1 - s};
    return p;
  }
  p.chunks = l.pp * l.vpp;
  for (int64_t c = 0; c < p.chunks; ++c) p.stage_chunks[static_cast<size_t>(c % l.pp)].push_back(c);
  return p;
}

}  // namespace meshplan
