#include "serving/disaggregated_replay.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <vector>

namespace meshplan::serving {
namespace {

struct PrefillWorker {
  double busy_until = 0;
  bool busy = false;
  std::vector<std::pair<int64_t, int64_t>> chunks;  // request, prompt tokens this step
};

struct DecodeWorker {
  double busy_until = 0;
  bool busy = false;
  std::vector<int64_t> running, joining;
  int64_t free_kv = 0;
  int64_t sequences() const { return static_cast<int64_t>(running.size() + joining.size()); }
};

struct Transfer {
  int64_t request = 0;
  double ready_s = 0;
};

class DisaggregatedScheduler {
 public:
  DisaggregatedScheduler(const Workload& w, const DisaggregatedLimits& limits)
      : w_(w),
        limits_(limits),
        count_(replay_request_count(w)),
        closed_(w.load == LoadKind::concurrency),
        req_(initial_requests(w, count_)),
        prefill_(static_cast<size_t>(limits.prefill_workers)),
        decode_(static_cast<size_t>(limits.decode_workers)) {
    first_pending_ = closed_ ? std::min(count_, requests_in_flight(w, count_)) : 0;
    for (int64_t i = 0; i < first_pending_; ++i) queue_.push_back(i);
    for (DecodeWorker& d : decode_) d.free_kv = limits.decode.kv_tokens;
  }

  bool done() const { return finished_ == count_; }

  // Everything that happens at `t`, in the header's order.
  void run_events(double t, const StepTimeFn& prefill_step_s, const StepTimeFn& decode_step_s) {
    now_ = t;
    finish_prefills(t);
    finish_decodes(t);
    if (!closed_)
      while (first_pending_ < count_ && at(first_pending_).arrival_s <= t)
        queue_.push_back(first_pending_++);
    while (!transfers_.empty() && transfers_.front().ready_s <= t) {
      arrive_at_decode(transfers_.front().request, transfers_.front().ready_s);
      transfers_.pop_front();
    }
    admit_decodes();
    start_prefills(t, prefill_step_s);
    start_decodes(t, decode_step_s);
  }

  // The next time anything happens after the events at `t` ran.
  double next_event() const {
    double next = INFINITY;
    for (const PrefillWorker& p : prefill_)
      if (p.busy) next = std::min(next, p.busy_until);
    for (const DecodeWorker& d : decode_)
      if (d.busy) next = std::min(next, d.busy_until);
    if (!transfers_.empty()) next = std::min(next, transfers_.front().ready_s);
    if (!closed_ && first_pending_ < count_) next = std::min(next, at(first_pending_).arrival_s);
    // A closed loop's successor still on its way through the front end (ReplayLimits::front_end_s).
    if (!queue_.empty() && at(queue_.front()).arrival_s > now_)
      next = std::min(next, at(queue_.front()).arrival_s);
    return next;
  }

  ReplayResult result() const {
    ReplayResult out = summarize_replay(req_, w_);
    out.steps = steps_;
    out.preemptions = preemptions_;
    out.mean_batch = steps_ > 0 ? batch_sum_ / static_cast<double>(steps_) : 0;
    if (out.duration_s > 0) {
      out.prefill_pool_busy =
          prefill_busy_s_ / (static_cast<double>(prefill_.size()) * out.duration_s);
      out.decode_pool_busy =
          decode_busy_s_ / (static_cast<double>(decode_.size()) * out.duration_s);
    }
    return out;
  }

 private:
  ReplayRequest& at(int64_t i) { return req_[static_cast<size_t>(i)]; }
  const ReplayRequest& at(int64_t i) const { return req_[static_cast<size_t>(i)]; }

  void finish_prefills(double t) {
    for (PrefillWorker& p : prefill_) {
      if (!p.busy || p.busy_until > t) continue;
      p.busy = false;
      for (const auto& [r, c] : p.chunks) {
        at(r).prefilled += c;
        if (at(r).prefilled < at(r).isl) {
          queue_.push_front(r);  // a long prompt's next chunk runs before the prompts behind it
          continue;
        }
        transfers_.push_back({r, p.busy_until + limits_.transfer_s(at(r).isl)});
      }
      p.chunks.clear();
    }
  }

  void finish_decodes(double t) {
    for (DecodeWorker& d : decode_) {
      if (!d.busy || d.busy_until > t) continue;
      d.busy = false;
      size_t kept = 0;  // d.running keeps the unfinished in order, in place
      for (const int64_t r : d.running) {
        ReplayRequest& q = at(r);
        q.prefilled = q.prompt;  // a recomputed sequence's prompt is rebuilt with its next token
        if (++q.generated < q.osl) {
          d.running[kept++] = r;
          continue;
        }
        finish(r, d.busy_until);
        d.free_kv += q.held;
        q.held = 0;
      }
      d.running.resize(kept);
    }
  }

  void finish(int64_t r, double t) {
    at(r).finish_s = t;
    ++finished_;
    if (closed_ && first_pending_ < count_) {
      at(first_pending_).arrival_s = t + limits_.decode.front_end_s;
      queue_.push_back(first_pending_++);
    }
  }

  // The transfer ended: the client has the first token; the answer's others need decode steps.
  void arrive_at_decode(int64_t r, double ready_s) {
    at(r).first_token_s = ready_s;
    at(r).generated = 1;
    at(r).prompt = at(r).prefilled = at(r).isl;  // its cache arrived whole
    if (at(r).osl <= 1) {
      finish(r, ready_s);
      return;
    }
    decode_wait_.push_back(r);
  }

  void admit_decodes() {
    while (!decode_wait_.empty()) {
      const int64_t r = decode_wait_.front();
      const int64_t tokens = limits_.decode.admission_tokens(at(r).prompt, at(r).isl + at(r).osl);
      DecodeWorker* best = nullptr;
      for (DecodeWorker& d : decode_) {
        if (d.sequences() >= limits_.decode.max_batch || d.free_kv < tokens) continue;
        if (best == nullptr || d.sequences() < best->sequences()) best = &d;
      }
      if (best == nullptr) return;
      best->joining.push_back(r);
      best->free_kv -= tokens;
      at(r).held = tokens;
      at(r).held_until = limits_.decode.cache_tokens ? limits_.decode.held_until(at(r).prompt) : 0;
      decode_wait_.pop_front();
    }
  }

  // On demand (request_replay.h OnDemandWorker), a preempted sequence waits for a decode worker
  // again at the head of the queue and, readmitted, recomputes its prompt and answer so far there
  // (vLLM's recompute preemption, run by the decode instance's own scheduler).
  void grow(DecodeWorker& d) {
    OnDemandWorker{req_, d.running, d.free_kv, decode_wait_, preemptions_}.grow(limits_.decode);
  }

  void start_prefills(double t, const StepTimeFn& step_s) {
    for (PrefillWorker& p : prefill_) {
      if (p.busy || queue_.empty() || at(queue_.front()).arrival_s > t) continue;
      StepBatch batch;
      int64_t budget = limits_.prefill_step_tokens;
      while (!queue_.empty() && at(queue_.front()).arrival_s <= t && budget > 0) {
        const int64_t r = queue_.front();
        const int64_t left = at(r).isl - at(r).prefilled;
        if (left > budget && !p.chunks.empty()) break;  // whole prompts, or one chunked alone
        const int64_t c = std::min(left, budget);
        batch.chunks.push_back({c, at(r).prefilled});
        if (at(r).scheduled_s < 0) at(r).scheduled_s = t;
        if (c == left) ++batch.sampled;
        p.chunks.push_back({r, c});
        budget -= c;
        queue_.pop_front();
      }
      const double dt = step_s(batch);
      prefill_busy_s_ += dt;
      p.busy = true;
      p.busy_until = t + dt;
    }
  }

  void start_decodes(double t, const StepTimeFn& step_s) {
    for (DecodeWorker& d : decode_) {
      if (d.busy) continue;
      d.running.insert(d.running.end(), d.joining.begin(), d.joining.end());
      d.joining.clear();
      grow(d);
      if (d.running.empty()) continue;
      StepBatch batch;
      for (int64_t r : d.running) {
        const ReplayRequest& q = at(r);
        if (q.prefilled < q.prompt)
          batch.chunks.push_back({q.prompt - q.prefilled, q.prefilled});
        else
          batch.add_decode(limits_.decode.window, q.isl + q.generated);
      }
      batch.sampled = static_cast<int64_t>(d.running.size());
      ++steps_;
      batch_sum_ += static_cast<double>(batch.decodes);
      const double dt = step_s(batch);
      decode_busy_s_ += dt;
      d.busy = true;
      d.busy_until = t + dt;
    }
  }

  Workload w_;
  DisaggregatedLimits limits_;
  int64_t count_ = 0;
  bool closed_ = false;
  std::vector<ReplayRequest> req_;
  std::vector<PrefillWorker> prefill_;
  std::vector<DecodeWorker> decode_;
  std::deque<int64_t> queue_;        // prompts waiting for a prefill worker
  std::deque<Transfer> transfers_;   // in flight to the decode pool, by ready time
  std::deque<int64_t> decode_wait_;  // transferred, waiting for decode room
  int64_t first_pending_ = 0;        // next request not yet issued
  int64_t finished_ = 0, steps_ = 0, preemptions_ = 0;
  double batch_sum_ = 0, prefill_busy_s_ = 0, decode_busy_s_ = 0;
  double now_ = 0;  // the time run_events ran last
};

}  // namespace

ReplayResult replay_disaggregated(const Workload& w, const DisaggregatedLimits& limits,
                                  const StepTimeFn& prefill_step_s,
                                  const StepTimeFn& decode_step_s) {
  assert(limits.prefill_workers >= 1 && limits.decode_workers >= 1);
  assert(limits.prefill_step_tokens >= 1 && limits.decode.max_batch >= 1);
  DisaggregatedScheduler s(w, limits);
  double t = 0;
  while (!s.done()) {
    s.run_events(t, prefill_step_s, decode_step_s);
    if (s.done()) break;
    const double next = s.next_event();
    assert(std::isfinite(next) && next >= t);
    t = next;
  }
  return s.result();
}

}  // namespace meshplan::serving
