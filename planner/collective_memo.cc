#include "planner/collective_memo.h"

namespace meshplan {
namespace {

bool same_group(const GroupShape& a, const GroupShape& b) {
  return a.dim_count == b.dim_count && a.dims[0].size == b.dims[0].size &&
         a.dims[0].stride == b.dims[0].stride && a.dims[1].size == b.dims[1].size &&
         a.dims[1].stride == b.dims[1].stride;
}

size_t slot_of(int64_t c, const GroupShape& g, size_t slots) {
  uint64_t h = static_cast<uint64_t>(c) * 0x9e3779b97f4a7c15ULL;
  h ^= static_cast<uint64_t>(g.dims[0].size) * 0xc2b2ae3d27d4eb4fULL;
  h ^= static_cast<uint64_t>(g.dims[0].stride) * 0x165667b19e3779f9ULL;
  h ^= static_cast<uint64_t>(g.dims[1].size) * 0xd6e8feb86659fd93ULL;
  h ^= static_cast<uint64_t>(g.dims[1].stride) * 0xff51afd7ed558ccdULL;
  h ^= static_cast<uint64_t>(g.dim_count);
  return static_cast<size_t>((h ^ (h >> 29)) & (slots - 1));
}

// The slot of `table` (`size` slots once the first is asked) that holds `group`'s terms for
// `collective`, made by `terms()` unless it holds them already (direct-mapped: a group whose
// slot another holds takes it over).
template <class SlotT, class Terms>
SlotT& slot_for(std::vector<SlotT>& table, size_t size, int64_t collective, const GroupShape& group,
                Terms terms) {
  if (table.empty()) table.resize(size);
  SlotT& s = table[slot_of(collective, group, size)];
  if (s.collective != collective || !same_group(s.group, group)) {
    s.collective = collective;
    s.group = group;
    s.terms = terms();
  }
  return s;
}

}  // namespace

double CollectiveMemo::time_s(Collective c, const GroupShape& group, double bytes) {
  if (group.size() <= 1 || bytes <= 0) return 0;  // time_s' own first answer
  const auto collective = static_cast<int64_t>(c);
  if (c == Collective::all_to_all)
    return slot_for(all_to_all_slots_, kAllToAllSlots, collective, group,
                    [&] { return model_->all_to_all_terms(group); })
        .terms.time_s(bytes);
  const auto& s =
      slot_for(slots_, kSlots, collective, group, [&] { return model_->ring_terms(c, group); });
  return s.terms ? s.terms->time_s(bytes) : model_->time_s(c, group, bytes);
}

}  // namespace meshplan
