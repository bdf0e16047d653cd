#include "simulator/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

namespace meshplan::sim {
namespace {

using Passes = std::vector<Pass>;

Pass fwd(int mb, int chunk = 0) { return Pass{PassKind::forward, chunk, mb}; }
Pass bwd(int mb, int chunk = 0) { return Pass{PassKind::backward, chunk, mb}; }
Pass wgt(int mb, int chunk = 0) { return Pass{PassKind::weight, chunk, mb}; }

// GPipe (Huang et al. 2019, arXiv 1811.06965): all forwards, then all backwards, in
// micro-batch order (as Megatron-LM's non-interleaved loop with every micro-batch in warm-up).
Passes gpipe_stage(int /*pp*/, int /*vpp*/, int m, int /*stage*/) {
  Passes out;
  for (int i = 0; i < m; ++i) out.push_back(fwd(i));
  for (int i = 0; i < m; ++i) out.push_back(bwd(i));
  return out;
}

// 1F1B (PipeDream-Flush; Narayanan et al. 2021, arXiv 2104.04473, Megatron-LM's
// forward_backward_pipelining_without_interleaving): pp-stage-1 warm-up forwards, then
// alternate one forward and one backward, then drain the remaining backwards.
Passes one_f_one_b_stage(int pp, int /*vpp*/, int m, int stage) {
  const int warmup = std::min(pp - stage - 1, m);
  Passes out;
  for (int i = 0; i < warmup; ++i) out.push_back(fwd(i));
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back(fwd(warmup + i));
    out.push_back(bwd(i));
  }
  for (int i = m - warmup; i < m; ++i) out.push_back(bwd(i));
  return out;
}

// Interleaved 1F1B (Narayanan et al. 2021 §2.2; Megatron-LM's
// forward_backward_pipelining_with_interleaving). The k-th forward of a stage runs virtual
// chunk (k mod pp·v) / pp on micro-batch (k / (pp·v))·pp + k mod pp: groups of pp micro-batches
// per chunk; backwards walk the chunks in reverse. Warm-up: (pp-stage-1)·2 + (v-1)·pp
// forwards, capped at m·v.
Pass interleaved_pass(PassKind kind, int k, int pp, int vpp) {
  const int in_group = k % (pp * vpp);
  int chunk = in_group / pp;
  if (kind == PassKind::backward) chunk = vpp - 1 - chunk;
  return Pass{kind, chunk, (k / (pp * vpp)) * pp + k % pp};
}

Passes interleaved_stage(int pp, int vpp, int m, int stage) {
  const int total = m * vpp;
  const int warmup = std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  Passes out;
  for (int k = 0; k < warmup; ++k) out.push_back(interleaved_pass(PassKind::forward, k, pp, vpp));
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(interleaved_pass(PassKind::forward, warmup + k, pp, vpp));
    out.push_back(interleaved_pass(PassKind::backward, k, pp, vpp));
  }
  for (int k = total - warmup; k < total; ++k)
    out.push_back(interleaved_pass(PassKind::backward, k, pp, vpp));
  return out;
}

// ZB-H1 (Qi et al. 2023, arXiv 2401.10241, §3.1 and Fig. 3): 1F1B's order of F and B (so the
// same warm-up and the same peak number of micro-batches in flight), with the weight gradient
// W split off the backward. Stage s defers its W passes by s backwards: W_j follows B_{j+s},
// and the last s+1 W passes fill the tail. The input-gradient chain B thus reaches stage 0
// without waiting for W, which cuts the bubble to (pp-1)·(T_F + T_B - T_W).
Passes zb_h1_stage(int pp, int vpp, int m, int stage) {
  const Passes base = one_f_one_b_stage(pp, vpp, m, stage);
  Passes out;
  int next_w = 0;
  for (const Pass& p : base) {
    out.push_back(p);
    if (p.kind == PassKind::backward && p.micro_batch - stage >= 0) out.push_back(wgt(next_w++));
  }
  while (next_w < m) out.push_back(wgt(next_w++));
  return out;
}

using StageBuilder = Passes (*)(int pp, int vpp, int m, int stage);

// GPipe keeps every micro-batch's activations until its backward.
double all_in_flight(int64_t /*pp*/, int64_t /*vpp*/, int64_t m, int64_t /*stage*/) {
  return static_cast<double>(m);
}
// 1F1B and ZB-H1: stage s runs pp − s forwards before its first backward.
double warmup_in_flight(int64_t pp, int64_t /*vpp*/, int64_t m, int64_t stage) {
  return static_cast<double>(std::min(m, pp - stage));
}
// Interleaved: 2(pp − s − 1) + (vpp − 1)·pp + 1 chunk forwards before the first backward
// (Megatron-LM's warm-up count), vpp chunks to a micro-batch.
double interleaved_in_flight(int64_t pp, int64_t vpp, int64_t m, int64_t stage) {
  int64_t chunks = std::min(m * vpp, 2 * (pp - stage - 1) + (vpp - 1) * pp + 1);
  return static_cast<double>(chunks) / static_cast<double>(vpp);
}

// GPipe and 1F1B: the slowest stage runs every micro-batch, and the fill and drain pass once
// through every other stage.
double fill_drain_time(const PipelineTimes& t) { return (t.m - 1) * t.t_max + t.t_sum; }
// Interleaved: fill and drain shrink by vpp (Narayanan et al. 2021 §2.2).
double interleaved_time(const PipelineTimes& t) {
  return t.m * t.t_max + (t.t_sum - t.t_max) / t.vpp;
}
// ZB-H1: W passes fill the bubble; what they cannot fill remains, once per extra stage.
double zb_h1_time(const PipelineTimes& t) {
  return t.m * t.t_max + (t.pp - 1) * std::max(0.0, t.zb_bubble);
}

struct ScheduleEntry {
  ScheduleInfo info;
  StageBuilder build;
};

const std::vector<ScheduleEntry>& entries() {
  static const std::vector<ScheduleEntry> kEntries = {
      {{Schedule::gpipe, "gpipe", false, false, "Huang et al. 2019, arXiv 1811.06965",
        all_in_flight, fill_drain_time},
       gpipe_stage},
      {{Schedule::one_f_one_b, "1f1b", false, false, "Narayanan et al. 2021, arXiv 2104.04473",
        warmup_in_flight, fill_drain_time},
       one_f_one_b_stage},
      {{Schedule::interleaved, "interleaved", false, true,
        "Narayanan et al. 2021 §2.2; Megatron-LM interleaved ordering", interleaved_in_flight,
        interleaved_time},
       interleaved_stage},
      {{Schedule::zb_h1, "zb-h1", true, false, "Qi et al. 2023, arXiv 2401.10241 (ZB-H1)",
        warmup_in_flight, zb_h1_time},
       zb_h1_stage},
  };
  return kEntries;
}

Diagnostic order_error(Schedule s, const std::string& value, const std::string& rule) {
  return Diagnostic{
      {"--layout", 0, 0, ""}, "schedule", std::string(schedule_info(s).name) + ": " + value, rule};
}

}  // namespace

const std::vector<ScheduleInfo>& schedule_table() {
  static const std::vector<ScheduleInfo> kTable = [] {
    std::vector<ScheduleInfo> t;
    for (const ScheduleEntry& e : entries()) t.push_back(e.info);
    return t;
  }();
  return kTable;
}

const ScheduleInfo& schedule_info(Schedule s) {
  // The table is in enum order (entries() lists every Schedule once), so the enum indexes it:
  // the search looks a schedule up for every layout it evaluates.
  const std::vector<ScheduleInfo>& table = schedule_table();
  const auto index = static_cast<size_t>(s);
  assert(index < table.size() && table[index].schedule == s);
  return table[index];
}

Result<PipelineOrder> make_pipeline_order(Schedule schedule, int pp, int vpp, int m) {
  const std::string shape = "pp=" + std::to_string(pp) + ", vpp=" + std::to_string(vpp) +
                            ", micro_batches=" + std::to_string(m);
  if (pp < 1 || vpp < 1 || m < 1)
    return order_error(schedule, shape, "pp, vpp and micro_batches must be at least 1");
  const ScheduleEntry* entry = nullptr;
  for (const ScheduleEntry& e : entries())
    if (e.info.schedule == schedule) entry = &e;
  assert(entry != nullptr && "schedule missing from the table");
  const int64_t passes = int64_t{pp} * vpp * m * (entry->info.splits_backward ? 3 : 2);
  if (passes > kMaxPipelinePasses)
    return order_error(schedule, shape,
                       fmt::format("the simulation would run {} passes; at most {} are simulated "
                                   "(raise mbs or dp for fewer micro-batches, or use estimate)",
                                   passes, kMaxPipelinePasses));
  if (!entry->info.allows_vpp && vpp != 1)
    return order_error(schedule, shape, "needs vpp = 1 (use schedule=interleaved for vpp > 1)");
  if (schedule == Schedule::interleaved && vpp < 2)
    return order_error(schedule, shape, "interleaved needs vpp >= 2");
  if (schedule == Schedule::interleaved && m % pp != 0)
    return order_error(schedule, shape,
                       "interleaved needs micro_batches to be a multiple of pp (Megatron-LM)");
  PipelineOrder order{schedule, pp, vpp, m, entry->info.splits_backward, {}};
  order.passes.reserve(pp);
  for (int s = 0; s < pp; ++s) order.passes.push_back(entry->build(pp, vpp, m, s));
  return order;
}

std::string format_stage_order(const PipelineOrder& order, int stage) {
  std::string out;
  for (const Pass& p : order.passes[stage]) {
    if (!out.empty()) out += ' ';
    out += p.kind == PassKind::forward ? 'F' : p.kind == PassKind::backward ? 'B' : 'W';
    out += std::to_string(p.micro_batch);
    if (order.vpp > 1) {
      out += '.';
      out += std::to_string(p.virtual_chunk);
    }
  }
  return out;
}

}  // namespace meshplan::sim
