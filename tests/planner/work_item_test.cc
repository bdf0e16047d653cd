// planner/work_item.h: the search's compact work items.
#include "planner/work_item.h"

#include <doctest/doctest.h>

using namespace meshplan;

namespace {

// Every field the search reads of a work item's layout, and those it sets later, compared.
void check_same(const Layout& a, const Layout& b) {
  CHECK(a.tp == b.tp);
  CHECK(a.cp == b.cp);
  CHECK(a.pp == b.pp);
  CHECK(a.dp == b.dp);
  CHECK(a.vpp == b.vpp);
  CHECK(a.ep == b.ep);
  CHECK(a.etp == b.etp);
  CHECK(a.mbs == b.mbs);
  CHECK(a.cp_a2a == b.cp_a2a);
  CHECK(a.act_offload == b.act_offload);
  CHECK(a.cp_kind == b.cp_kind);
  CHECK(a.dispatch == b.dispatch);
  CHECK(a.sp == b.sp);
  CHECK(a.tp_overlap == b.tp_overlap);
  CHECK(a.ep_overlap == b.ep_overlap);
  CHECK(a.uneven == b.uneven);
  CHECK(a.order == b.order);
  CHECK(a.zero == b.zero);
  CHECK(a.recompute == b.recompute);
  CHECK(a.recompute_layers == b.recompute_layers);
  CHECK(a.schedule == b.schedule);
  CHECK(a.shard == b.shard);
  CHECK(a.offload == b.offload);
}

}  // namespace

TEST_CASE("a work item gives back its layout's enumerated fields, the rest at their defaults") {
  Layout l;
  l.tp = 8, l.cp = 4, l.pp = 16, l.dp = 100'000'000 / 512, l.vpp = 7, l.ep = 64, l.etp = 1;
  l.mbs = 1'000'000'000, l.cp_a2a = 2, l.act_offload = 3;
  l.cp_kind = CpKind::hybrid, l.dispatch = Dispatch::deepep;
  l.sp = false, l.tp_overlap = true, l.ep_overlap = true, l.uneven = true;
  l.order = {Dim::pp, Dim::dp, Dim::cp, Dim::tp};
  const WorkItem item(l);
  check_same(item.base(), l);
  CHECK(item.cp() == 4);
  CHECK(item.pp() == 16);
  CHECK(item.vpp() == 7);
  // Each flag apart from the others.
  Layout flags;
  flags.sp = true;
  check_same(WorkItem(flags).base(), flags);
  flags.sp = false, flags.uneven = true;
  check_same(WorkItem(flags).base(), flags);
  // A default layout comes back as it went in.
  check_same(WorkItem(Layout{}).base(), Layout{});
  CHECK(sizeof(WorkItem) <= 48);
}
