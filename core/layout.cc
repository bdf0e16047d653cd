#include "core/layout.h"

#include <fmt/format.h>

namespace meshplan {

int64_t Layout::degree(Dim d) const {
  switch (d) {
    case Dim::tp:
      return tp;
    case Dim::cp:
      return cp;
    case Dim::dp:
      return dp;
    case Dim::pp:
      return pp;
  }
  return 1;
}

int64_t Layout::stride(Dim d) const {
  int64_t s = 1;
  for (Dim o : order) {
    if (o == d) return s;
    s *= degree(o);
  }
  return s;
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe:
      return "gpipe";
    case Schedule::one_f_one_b:
      return "1f1b";
    case Schedule::interleaved:
      return "interleaved";
    case Schedule::zb_h1:
      return "zb-h1";
  }
  return "?";
}

const char* to_string(Dim d) {
  switch (d) {
    case Dim::tp:
      return "tp";
    case Dim::cp:
      return "cp";
    case Dim::dp:
      return "dp";
    case Dim::pp:
      return "pp";
  }
  return "?";
}

static std::string order_string(const Layout& l) {
  return fmt::format("{}-{}-{}-{}", to_string(l.order[0]), to_string(l.order[1]),
                     to_string(l.order[2]), to_string(l.order[3]));
}

std::string to_string(const Layout& l) {
  return fmt::format(
      "tp={},pp={},dp={},cp={},ep={},zero={},mbs={},vpp={},recompute={},recompute_layers={},"
      "sp={},schedule={},tp_overlap={},uneven={},order={}",
      l.tp, l.pp, l.dp, l.cp, l.ep, l.zero, l.mbs, l.vpp, to_string(l.recompute),
      l.recompute_layers, l.sp, to_string(l.schedule), l.tp_overlap, l.uneven, order_string(l));
}

std::string short_label(const Layout& l) {
  std::string s = fmt::format("tp{} pp{} dp{}", l.tp, l.pp, l.dp);
  if (l.cp > 1) s += fmt::format(" cp{}", l.cp);
  if (l.ep > 1) s += fmt::format(" ep{}", l.ep);
  if (l.vpp > 1) s += fmt::format(" v{}", l.vpp);
  s += fmt::format(" z{} mbs{}", l.zero, l.mbs);
  const char* rc = l.recompute == Recompute::none        ? ""
                   : l.recompute == Recompute::selective ? " sel"
                                                         : " full";
  s += rc;
  if (l.recompute_layers > 0 && l.recompute != Recompute::full)
    s += fmt::format("+{}full", l.recompute_layers);
  if (l.tp > 1 && !l.sp) s += " nosp";
  if (l.pp > 1) s += fmt::format(" {}", to_string(l.schedule));
  return s;
}

std::vector<int64_t> chunk_layers(int64_t layers, int64_t pp, int64_t vpp) {
  const int64_t chunks = pp * vpp;
  const int64_t base = (layers + chunks - 1) / chunks;
  std::vector<int64_t> out(static_cast<size_t>(chunks), base);
  int64_t deficit = base * chunks - layers;
  // Take from the ends inward: last, first, second-to-last, second, ...
  for (int64_t i = 0; deficit > 0; ++i, --deficit) {
    int64_t k = i / 2;
    size_t at = static_cast<size_t>(i % 2 == 0 ? chunks - 1 - k : k);
    out[at] -= 1;
  }
  return out;
}

}  // namespace meshplan
