#include "simulator/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>

#include "core/schedule.h"

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

// ZB-H2 (Qi et al. 2023 §2.2, Fig. 3): more warm-up forwards than 1F1B, 2(pp − s) − 1 on
// stage s (peak memory (2p − 1)·M_B on the first), so the first backward arrives just as the
// warm-up ends; then one backward and one forward at a time, with W placed as in ZB-H1 (W_j
// after B_{j+s}): the deferred weight gradients fill the tail while the last backwards walk
// back to stage 0.
Passes zb_h2_stage(int pp, int /*vpp*/, int m, int stage) {
  const int warmup = std::min(2 * (pp - stage) - 1, m);
  Passes out;
  int next_w = 0;
  auto backward = [&](int mb) {
    out.push_back(bwd(mb));
    if (mb - stage >= 0) out.push_back(wgt(next_w++));
  };
  for (int i = 0; i < warmup; ++i) out.push_back(fwd(i));
  for (int i = 0; i < m - warmup; ++i) {
    backward(i);
    out.push_back(fwd(warmup + i));
  }
  for (int i = m - warmup; i < m; ++i) backward(i);
  while (next_w < m) out.push_back(wgt(next_w++));
  return out;
}

// DualPipe and DualPipeV share one order (the DualPipe repository, dualpipe/dualpipe.py and
// dualpipev.py, DualPipe(V).step): on rank r of a V of n ranks, with mp micro-batches per
// phase (phase 0: the rank's chunk on the way down the V, phase 1: on the way back),
//   1. 2(n − r − 1) F0;  2. r + 1 × (F0 F1);  3. n − r − 1 × (B1 W1 F1), W deferred;
//   4. mp − 2n + r + 1 × (F0&B1 F1&B0);  5. n − r − 1 × (B1 F1&B0);
//   6. r + 1 × (B1 B0), W deferred from the middle on;  7. n − r − 1 × (W B0), W deferred;
//   8. r + 1 × W.
// F&B is a forward and a backward of two micro-batches overlapped (their communication hidden
// behind each other's compute); here they run back to back on the compute stream and the
// overlap is priced in the layer costs (Layout::ep_overlap). A deferred W is queued and run, first
// in first out, at the next W; any other backward runs its W right after its B.
class DualOrder {
 public:
  // phase_slot[p]: the slot of phase p on this rank; phase_offset[p]: the micro-batch id of
  // the phase's first micro-batch.
  DualOrder(std::array<int, 2> phase_slot, std::array<int, 2> phase_offset)
      : slot_(phase_slot), offset_(phase_offset) {}

  Passes build(int n, int r, int mp) {
    for (int i = 0; i < 2 * (n - r - 1); ++i) f(0);
    for (int i = 0; i < r + 1; ++i) f(0), f(1);
    for (int i = 0; i < n - r - 1; ++i) b(1, true), w(), f(1);
    for (int i = 0; i < mp - 2 * n + r + 1; ++i) f(0), b(1, false), f(1), b(0, false);
    for (int i = 0; i < n - r - 1; ++i) b(1, false), f(1), b(0, false);
    bool zb = false;
    for (int i = 0; i < r + 1; ++i) {
      if (i == (r + 1) / 2 && r % 2 == 1) zb = true;
      b(1, zb);
      if (i == (r + 1) / 2 && r % 2 == 0) zb = true;
      b(0, zb);
    }
    for (int i = 0; i < n - r - 1; ++i) w(), b(0, true);
    for (int i = 0; i < r + 1; ++i) w();
    return out_;
  }

 private:
  void f(int phase) { out_.push_back(fwd(offset_[phase] + forwards_[phase]++, slot_[phase])); }
  void b(int phase, bool defer_weight) {
    const Pass done = bwd(offset_[phase] + backwards_[phase]++, slot_[phase]);
    out_.push_back(done);
    const Pass weight{PassKind::weight, done.virtual_chunk, done.micro_batch};
    if (defer_weight)
      deferred_.push_back(weight);
    else
      out_.push_back(weight);
  }
  void w() { out_.push_back(deferred_[next_deferred_++]); }

  std::array<int, 2> slot_, offset_;
  std::array<int, 2> forwards_{}, backwards_{};
  std::vector<Pass> deferred_;
  size_t next_deferred_ = 0;
  Passes out_;
};

// DualPipeV: the V over all pp ranks; phase 0 is slot 0 (chunk r), phase 1 slot 1 (chunk
// 2pp − 1 − r); every micro-batch passes both.
Passes dualpipev_stage(int pp, int /*vpp*/, int m, int stage) {
  return DualOrder({0, 1}, {0, 0}).build(pp, stage, m);
}

// DualPipe: ranks r and pp − 1 − r run the same order on a V of pp/2 "half ranks"; micro-batches
// 0 … m/2 − 1 enter at rank 0 (slot 0, chunk r), m/2 … m − 1 at rank pp − 1 (slot 1, the copy
// of chunk pp − 1 − r). On the first half of the ranks phase 0 is the forward direction, on the
// second half the reverse one.
Passes dualpipe_stage(int pp, int /*vpp*/, int m, int stage) {
  const int half = pp / 2, r = std::min(stage, pp - 1 - stage);
  const bool first_half = stage < half;
  return DualOrder(first_half ? std::array<int, 2>{0, 1} : std::array<int, 2>{1, 0},
                   first_half ? std::array<int, 2>{0, m / 2} : std::array<int, 2>{m / 2, 0})
      .build(half, r, m / 2);
}

// ZB-V (Qi et al. 2023, arXiv 2401.10241 §6; the order of torch.distributed.pipelining's
// ScheduleZBVZeroBubble._calculate_single_rank_operations): rank r of a V of p ranks holds
// chunk r (slot 0, going down) and chunk 2p − 1 − r (slot 1, coming back). With n = max(m,
// 2p − 1) micro-batches:
//   1. 2(p − r) − 1 × F0;  2. r × (F1 F0);  3. p − r × (F1 B1 W1);
//   4. while a chunk-0 forward remains or chunk 1 lags chunk 0: [F0] B0 W0 F1 B1 W1;
//   5. r × (B0 B1), W deferred;  6. p − r × (B0 W0), the W0 of the oldest deferred B0;
//   7. the deferred W1, then the deferred W0.
// Passes of micro-batches m … n − 1 are dropped (torch pads short batches to 2p − 1 the same
// way); each micro-batch keeps or loses all its passes together, so the order never deadlocks.
// At its peak every rank holds 2p chunk activations (steps 1-2 leave 2p − 1, the first F1 of
// step 3 adds one before B1 frees one): p micro-batches of half a stage, 1F1B's first stage.
Passes zb_v_stage(int pp, int /*vpp*/, int m, int r) {
  const int n = std::max(m, 2 * pp - 1);
  std::array<int, 2> f{}, b{}, w{};
  Passes out;
  auto emit = [&](PassKind kind, int slot, int& counter) {
    const int mb = counter++;
    if (mb < m) out.push_back(Pass{kind, slot, mb});
  };
  for (int i = 0; i < 2 * (pp - r) - 1; ++i) emit(PassKind::forward, 0, f[0]);
  for (int i = 0; i < r; ++i) emit(PassKind::forward, 1, f[1]), emit(PassKind::forward, 0, f[0]);
  for (int i = 0; i < pp - r; ++i)
    emit(PassKind::forward, 1, f[1]), emit(PassKind::backward, 1, b[1]),
        emit(PassKind::weight, 1, w[1]);
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n) emit(PassKind::forward, 0, f[0]);
    emit(PassKind::backward, 0, b[0]), emit(PassKind::weight, 0, w[0]);
    emit(PassKind::forward, 1, f[1]), emit(PassKind::backward, 1, b[1]);
    emit(PassKind::weight, 1, w[1]);
  }
  for (int i = 0; i < r; ++i) emit(PassKind::backward, 0, b[0]), emit(PassKind::backward, 1, b[1]);
  for (int i = 0; i < pp - r; ++i)
    emit(PassKind::backward, 0, b[0]), emit(PassKind::weight, 0, w[0]);
  while (w[1] < b[1]) emit(PassKind::weight, 1, w[1]);
  while (w[0] < b[0]) emit(PassKind::weight, 0, w[0]);
  return out;
}

// Interleaved zero bubble (torch.distributed.pipelining ScheduleInterleavedZeroBubble, "the
// ZB1P schedule" of Qi et al. 2023 on interleaved chunks; _get_1f1b_rank_ops with
// enable_zero_bubble): interleaved 1F1B's chunk order (groups of pp micro-batches per chunk,
// backwards through the chunks in reverse) with a warm-up of (v − 1)·pp + (pp − s − 1)
// forwards, one per hop fewer than interleaved 1F1B's 2 because the input-gradient chain no
// longer waits for W; then F B pairs, and from the (s + 1)-th backward on each B is followed
// by the W of the oldest backward still without one (W_j after B_{j+s}, as ZB-H1); the cool-
// down's backwards likewise, then the remaining W. With m a multiple of pp (one round of pp
// micro-batches per chunk) torch's round size is pp, as Megatron-LM's interleaving.
Passes zb_interleaved_stage(int pp, int vpp, int m, int stage) {
  const int total = m * vpp;
  const int warmup = std::min((vpp - 1) * pp + pp - stage - 1, total);
  Passes out, pending;
  size_t next_w = 0;
  auto backward = [&](int j) {
    const Pass done = interleaved_pass(PassKind::backward, j, pp, vpp);
    out.push_back(done);
    pending.push_back(Pass{PassKind::weight, done.virtual_chunk, done.micro_batch});
    if (j >= stage) out.push_back(pending[next_w++]);
  };
  for (int k = 0; k < warmup; ++k) out.push_back(interleaved_pass(PassKind::forward, k, pp, vpp));
  for (int k = warmup; k < total; ++k) {
    out.push_back(interleaved_pass(PassKind::forward, k, pp, vpp));
    backward(k - warmup);
  }
  for (int j = total - warmup; j < total; ++j) backward(j);
  while (next_w < pending.size()) out.push_back(pending[next_w++]);
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
// ZB-H2: 2(pp − s) − 1 forwards before the first backward (Qi et al. 2023 §2.2).
double zb_h2_in_flight(int64_t pp, int64_t /*vpp*/, int64_t m, int64_t stage) {
  return static_cast<double>(std::min(m, 2 * (pp - stage) - 1));
}
// DualPipe and DualPipeV: every rank peaks at 2n + 1 chunk activations (steps 1-2 leave 2n in
// flight, the F of step 4 adds one before its B frees one; the repository's table: "PP + 1"
// stages' worth); a rank's micro-batch spans two chunks, so (2n + 1)/2 of them. DualPipeV's V
// has n = pp ranks, DualPipe's n = pp/2.
double dualpipev_in_flight(int64_t pp, int64_t /*vpp*/, int64_t m, int64_t /*stage*/) {
  return std::min(static_cast<double>(m), (2.0 * static_cast<double>(pp) + 1) / 2);
}
double dualpipe_in_flight(int64_t pp, int64_t /*vpp*/, int64_t m, int64_t /*stage*/) {
  return std::min(static_cast<double>(m) / 2, (static_cast<double>(pp) + 1) / 2);
}
// Interleaved: 2(pp − s − 1) + (vpp − 1)·pp + 1 chunk forwards before the first backward
// (Megatron-LM's warm-up count), vpp chunks to a micro-batch.
double interleaved_in_flight(int64_t pp, int64_t vpp, int64_t m, int64_t stage) {
  int64_t chunks = std::min(m * vpp, 2 * (pp - stage - 1) + (vpp - 1) * pp + 1);
  return static_cast<double>(chunks) / static_cast<double>(vpp);
}

// ZB-V: min(m, 2p − r − 1) chunk-0 and min(m, r + 1) chunk-1 activations before the first
// backward (steps 1-3 of zb_v_stage), two chunks to a micro-batch: p at every rank once
// m ≥ 2p − 1, the same pp·M_B as 1F1B's first stage (Qi et al. 2023 §6: ZB-V's peak memory
// equals 1F1B's; M_B of a chunk is half a stage's).
double zb_v_in_flight(int64_t pp, int64_t /*vpp*/, int64_t m, int64_t stage) {
  return static_cast<double>(std::min(m, 2 * pp - stage - 1) + std::min(m, stage + 1)) / 2;
}
// Interleaved zero bubble: (v − 1)·pp + (pp − s − 1) warm-up forwards and the first 1F1B
// forward before the first backward: v·pp − s chunks, capped at m·v; pp micro-batches on the
// first stage, as 1F1B (torch's ZB1P keeps 1F1B's memory).
double zb_interleaved_in_flight(int64_t pp, int64_t vpp, int64_t m, int64_t stage) {
  return static_cast<double>(std::min(m * vpp, vpp * pp - stage)) / static_cast<double>(vpp);
}

// GPipe and 1F1B: the slowest stage runs every micro-batch, and the fill and drain pass once
// through every other stage.
double fill_drain_time(const PipelineTimes& t) { return (t.m - 1) * t.t_max + t.t_sum; }
// Interleaved: fill and drain shrink by vpp (Narayanan et al. 2021 §2.2).
double interleaved_time(const PipelineTimes& t) {
  return t.m * t.t_max + (t.t_sum - t.t_max) / t.vpp;
}
// ZB-H1: W passes fill the bubble; what they cannot fill remains, once per extra stage. ZB-H2
// too: the paper's smaller (p − 1)(T_F + T_B − 2T_W) needs its optimizer post-validation, which
// lets a step's tail run under the next step's warm-up; in one synchronous step (each stage's
// optimizer after its last W) the replayed ZB-H2 order idles exactly as ZB-H1 does (tests pin
// it), holding more activations.
double zb_h1_time(const PipelineTimes& t) {
  return t.m * t.t_max + (t.pp - 1) * std::max(0.0, t.zb_bubble);
}

// DualPipe(V) (the repository's table): bubble (PP/2 − 1)(F&B + B − 3W) over PP stages of chunk
// times F, B (full backward) and W, F&B ≈ F + B once the overlap has hidden the communication;
// dual_bubble is the worst rank's (F + 2B − 3W) of one micro-batch over its two chunks, halved,
// and never less than a chunk's forward: the first forward reaches the far end of the V only
// after one forward per rank, whatever W fills (the table omits this lower bound, which large
// W passes expose). Replaying the repository's order (simulate) never idles more than this in
// the shapes the tests try, and less where F = B = W ((p − 1)·F of a chunk against (p − 1)·2F).
// DualPipeV: PP = 2pp stages, each rank runs all m micro-batches through its two chunks.
// DualPipe: PP = pp, each rank runs m/2 micro-batches through its two chunks.
double dualpipev_time(const PipelineTimes& t) {
  return t.m * t.t_max + (t.pp - 1) * std::max(0.0, t.dual_bubble);
}
double dualpipe_time(const PipelineTimes& t) {
  return t.m / 2 * t.t_max + (t.pp / 2 - 1) * std::max(0.0, t.dual_bubble);
}

// ZB-V: Qi et al. 2023 §6 (and the zero-bubble repository's table) give its bubble only for
// T_F = T_B = T_W: zero, once the optimizer post-validation lets a step's tail run under the
// next one's warm-up. Replayed in one synchronous step (as zb-h2), torch's order idles
// (p − 1)·F of a chunk: the V's far end first runs after one chunk forward per rank. For
// unequal times no source gives a closed form; meshplan bounds the replay by
// (p − 1)·max(3F − 2B, 3B − 2F, 2F + B − 2W, W) of a chunk (half a stage: zb_v_bubble / 2),
// exact at F = B = W and checked against the replay over random F, B, W, p and m ≥ 2p − 1
// (tests; mean slack 4% of the step). Fewer micro-batches are priced as torch's padding to
// 2p − 1 (an upper bound: the dropped passes only shorten the replay).
double zb_v_time(const PipelineTimes& t) {
  return std::max(t.m, 2 * t.pp - 1) * t.t_max + (t.pp - 1) * std::max(0.0, t.zb_v_bubble) / 2;
}
// Interleaved zero bubble: ZB-H1's bubble (p − 1)(F + B − W) on chunks of 1/v of a stage, so
// divided by v as interleaving divides 1F1B's; when W exceeds F or B it no longer hides the
// other, and the bubble is (p − 1)·max(F, B)/v (the replay, tests).
double zb_interleaved_time(const PipelineTimes& t) {
  return t.m * t.t_max + (t.pp - 1) * std::max({0.0, t.zb_bubble, t.zb_floor}) / t.vpp;
}

struct ScheduleEntry {
  ScheduleInfo info;
  StageBuilder build;
};

const std::vector<ScheduleEntry>& entries() {
  static const std::vector<ScheduleEntry> kEntries = {
      {{Schedule::gpipe, false, false, "Huang et al. 2019, arXiv 1811.06965", all_in_flight,
        fill_drain_time},
       gpipe_stage},
      {{Schedule::one_f_one_b, false, false, "Narayanan et al. 2021, arXiv 2104.04473",
        warmup_in_flight, fill_drain_time},
       one_f_one_b_stage},
      {{Schedule::interleaved, false, true,
        "Narayanan et al. 2021 §2.2; Megatron-LM interleaved ordering", interleaved_in_flight,
        interleaved_time},
       interleaved_stage},
      {{Schedule::zb_h1, true, false, "Qi et al. 2023, arXiv 2401.10241 (ZB-H1)", warmup_in_flight,
        zb_h1_time},
       zb_h1_stage},
      {{Schedule::zb_h2, true, false, "Qi et al. 2023, arXiv 2401.10241 (ZB-H2)", zb_h2_in_flight,
        zb_h1_time},
       zb_h2_stage},
      {{Schedule::dualpipe, true, false,
        "DeepSeek-V3 report §3.2.1, arXiv 2412.19437; github.com/deepseek-ai/DualPipe "
        "dualpipe.py",
        dualpipe_in_flight, dualpipe_time},
       dualpipe_stage},
      {{Schedule::dualpipev, true, true,
        "github.com/deepseek-ai/DualPipe dualpipev.py (Sea AI Lab's cut-in-half)",
        dualpipev_in_flight, dualpipev_time},
       dualpipev_stage},
      {{Schedule::zb_v, true, true,
        "Qi et al. 2023, arXiv 2401.10241 §6 (ZB-V); torch.distributed.pipelining "
        "ScheduleZBVZeroBubble",
        zb_v_in_flight, zb_v_time},
       zb_v_stage},
      {{Schedule::zb_interleaved, true, true,
        "Qi et al. 2023, arXiv 2401.10241 (ZB-H1 on interleaved chunks); "
        "torch.distributed.pipelining ScheduleInterleavedZeroBubble",
        zb_interleaved_in_flight, zb_interleaved_time},
       zb_interleaved_stage},
  };
  return kEntries;
}

Diagnostic order_error(Schedule s, const std::string& value, const std::string& rule) {
  return Diagnostic{
      {"--layout", 0, 0, ""}, "schedule", std::string(to_string(s)) + ": " + value, rule};
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
  const PipelineShape shape_of_pipeline{pp, vpp, schedule};
  if (!schedule_takes_vpp(schedule, vpp))
    return order_error(schedule, shape,
                       schedule == Schedule::interleaved      ? "interleaved needs vpp >= 2"
                       : schedule == Schedule::zb_interleaved ? "needs vpp >= 2"
                       : schedule == Schedule::dualpipev || schedule == Schedule::zb_v
                           ? "needs vpp = 2"
                           : "needs vpp = 1 (use schedule=interleaved for vpp > 1)");
  if (schedule == Schedule::interleaved && m % pp != 0)
    return order_error(schedule, shape,
                       "interleaved needs micro_batches to be a multiple of pp (Megatron-LM)");
  if (schedule == Schedule::zb_interleaved && m % pp != 0)
    return order_error(schedule, shape,
                       "needs micro_batches to be a multiple of pp (one round of pp "
                       "micro-batches per chunk)");
  if (!dual_pipe_runs(schedule, pp, m))
    return order_error(schedule, shape,
                       "needs micro_batches >= 2·pp (dualpipe: both even; the DualPipe "
                       "repository's asserts)");
  PipelineOrder order{schedule, pp, vpp, m, entry->info.splits_backward, {}, {}};
  order.placement = pipeline_placement(shape_of_pipeline);
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
