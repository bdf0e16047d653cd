// One work item of the layout search: the outer part of a layout, fixed while the item's inner
// loops vary the ZeRO stage, recompute, schedule, shard group and offload. It holds the fields
// the enumeration sets (tp, cp, pp, dp, vpp, ep, etp, mbs, sp, the CP variant, the overlaps,
// uneven, the rank order, the dispatcher and activation offload) in 48 bytes, every other field
// of base() at Layout's default. A search holds tens of thousands of items, enumerated before it
// runs them: as whole Layouts (176 bytes) their list was most of the pages a search touched
// (page faults, llama3-405b on 16,384 GPUs: 60% of the process's).
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "core/cluster_spec.h"
#include "core/layout.h"
#include "core/model_limits.h"

namespace meshplan {

class WorkItem {
 public:
  // REQUIRES: `l`'s fields beyond those above at Layout's defaults (they are not kept).
  explicit WorkItem(const Layout& l)
      : tp_(narrow(l.tp)),
        cp_(narrow(l.cp)),
        pp_(narrow(l.pp)),
        dp_(narrow(l.dp)),
        vpp_(narrow(l.vpp)),
        ep_(narrow(l.ep)),
        etp_(narrow(l.etp)),
        mbs_(narrow(l.mbs)),
        cp_a2a_(narrow(l.cp_a2a)),
        act_offload_(narrow(l.act_offload)),
        cp_kind_(static_cast<uint8_t>(l.cp_kind)),
        dispatch_(static_cast<uint8_t>(l.dispatch)),
        flags_(static_cast<uint8_t>((l.sp ? kSp : 0) | (l.tp_overlap ? kTpOverlap : 0) |
                                    (l.ep_overlap ? kEpOverlap : 0) | (l.uneven ? kUneven : 0))),
        order_{static_cast<uint8_t>(l.order[0]), static_cast<uint8_t>(l.order[1]),
               static_cast<uint8_t>(l.order[2]), static_cast<uint8_t>(l.order[3])} {}

  Layout base() const {
    Layout l;
    l.tp = tp_, l.cp = cp_, l.pp = pp_, l.dp = dp_, l.vpp = vpp_, l.ep = ep_, l.etp = etp_;
    l.mbs = mbs_, l.cp_a2a = cp_a2a_, l.act_offload = act_offload_;
    l.cp_kind = static_cast<CpKind>(cp_kind_);
    l.dispatch = static_cast<Dispatch>(dispatch_);
    l.sp = (flags_ & kSp) != 0;
    l.tp_overlap = (flags_ & kTpOverlap) != 0;
    l.ep_overlap = (flags_ & kEpOverlap) != 0;
    l.uneven = (flags_ & kUneven) != 0;
    for (size_t i = 0; i < order_.size(); ++i) l.order[i] = static_cast<Dim>(order_[i]);
    return l;
  }
  int64_t cp() const { return cp_; }
  int64_t pp() const { return pp_; }
  int64_t vpp() const { return vpp_; }

 private:
  // Every field is a count of GPUs, layers, experts or sequences, all within the inputs' limits.
  static_assert(kMaxClusterGpus <= std::numeric_limits<int32_t>::max() &&
                    kMaxGlobalBatch <= std::numeric_limits<int32_t>::max() &&
                    kMaxLayers <= std::numeric_limits<int32_t>::max() &&
                    kMaxExperts <= std::numeric_limits<int32_t>::max(),
                "a work item keeps its counts in 32 bits");
  static int32_t narrow(int64_t v) { return static_cast<int32_t>(v); }
  static constexpr uint8_t kSp = 1, kTpOverlap = 2, kEpOverlap = 4, kUneven = 8;

  int32_t tp_, cp_, pp_, dp_, vpp_, ep_, etp_, mbs_, cp_a2a_, act_offload_;
  uint8_t cp_kind_, dispatch_, flags_;
  std::array<uint8_t, 4> order_;
};

static_assert(sizeof(WorkItem) <= 48, "a work item stays small: the search holds many");

}  // namespace meshplan
