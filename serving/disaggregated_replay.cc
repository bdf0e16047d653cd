#include "serving/disaggregated_replay.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "serving/local_keys.h"

namespace meshplan::serving {
namespace {

struct PrefillWorker {
  double busy_until = 0;
  bool busy = false;
  std::vector<std::pair<int64_t, int64_t>> chunks;  // request, prompt tokens this step
};

// A sequence's finishing step on a decode worker: its `steps` count once the step giving its
// last token ends; `order` its place in admission order (ties finish in it).
struct DueFinish {
  int64_t step = 0, order = 0, request = 0;
  bool operator>(const DueFinish& o) const {
    return step != o.step ? step > o.step : order > o.order;
  }
};

// A sequence filed to cross into a new page at `step` (valid while it still runs there, as
// admitted `order`, and has not been filed again).
struct PageCrossing {
  int64_t request = 0, order = 0, step = 0;
};

// A page taken for a later step of a decode worker's run (`run_step` ≥ 1 of it, the worker's
// step steps + run_step, where the sequence was filed to cross): the sequence crossing there and
// the cache it held before.
struct PageTake {
  size_t run_step = 0;
  int64_t request = 0, held = 0, held_until = 0;
  int64_t tokens = 0;  // the cache taken
};

// One decode worker. Every step adds a token to each of its sequences, so their answers are
// kept lazily: a running sequence's `generated` is exact at the step it was last synced
// (DisaggregatedScheduler::synced_) and grows by one per step since, and what a step needs is
// kept in sums and queues updated where something happens: the decodes' summed context, the
// sequences finishing at each step, the sequences crossing into a new cache page at each step.
struct DecodeWorker {
  double busy_until = 0;
  bool busy = false;
  std::vector<int64_t> running;  // in admission order; finished ones stay until compacted
  std::vector<int64_t> joining;
  int64_t free_kv = 0;
  int64_t steps = 0;     // steps ended
  int64_t finished = 0;  // finished, still in `running`
  int64_t decodes = 0;   // running past their prompt
  // Σ (isl + generated − synced step) over the decodes: their summed context at step s is
  // context_base + decodes × s.
  int64_t context_base = 0;
  std::vector<int64_t> recomputing;  // joined with a prompt to recompute (one step), in order
  std::vector<DueFinish> finishes;   // min-heap
  // The running sequences by the step they next cross into a page, mod the page size.
  std::vector<std::vector<PageCrossing>> pages;
  // The steps of the run under way (DisaggregatedScheduler::start_decodes), from `run_start_s`:
  // their times in order; the run ends at busy_until, the sum of them from run_start_s.
  double run_start_s = 0;
  std::vector<double> run_steps_s;
  // The pages its later steps take (each at its step's start, taken when the run starts), in
  // step order: a cut gives back those of the steps it drops.
  std::vector<PageTake> run_takes;
  double last_step_s = 0;  // its last step's time: how far ahead a run takes pages (run_steps)
  // Its steps' times summed in step order, whatever the runs that ran them: the same bits for
  // the same steps (the pool's busy time adds these in worker order).
  double busy_s = 0;
  int64_t live() const { return static_cast<int64_t>(running.size()) - finished; }
  int64_t sequences() const { return live() + static_cast<int64_t>(joining.size()); }
};

// Busy workers by the time their step ends, then index: the first to end on top.
using StepEnds = std::priority_queue<std::pair<double, int64_t>,
                                     std::vector<std::pair<double, int64_t>>, std::greater<>>;

struct Transfer {
  int64_t request = 0;
  double ready_s = 0;
};

class DisaggregatedScheduler {
 public:
  DisaggregatedScheduler(const Workload& w, const DisaggregatedLimits& limits,
                         const DecodePriceFn& decode_price)
      : w_(w),
        limits_(limits),
        count_(replay_request_count(w)),
        closed_(w.load == LoadKind::concurrency),
        req_(initial_requests(w, count_)),
        prefill_(static_cast<size_t>(limits.prefill_workers)),
        decode_(static_cast<size_t>(limits.decode_workers)),
        decode_price_(decode_price) {
    first_pending_ = closed_ ? std::min(count_, requests_in_flight(w, count_)) : 0;
    for (int64_t i = 0; i < first_pending_; ++i) queue_.push_back(i);
    for (int64_t i = 0; i < limits.prefill_workers; ++i) idle_prefill_.push(i);
    for (DecodeWorker& d : decode_) {
      d.free_kv = limits.decode.kv_tokens;
      d.pages.resize(static_cast<size_t>(std::max<int64_t>(1, limits.decode.cache_block_tokens)));
    }
    const auto n = static_cast<size_t>(count_);
    worker_of_.assign(n, -1);
    synced_.assign(n, 0);
    cross_at_.assign(n, 0);
    order_.assign(n, 0);
  }

  bool done() const { return finished_ == count_; }

  // Everything that happens at `t`, in the header's order.
  void run_events(double t, const StepTimeFn& prefill_step_s, const StepTimeFn& decode_step_s) {
    now_ = t;
    finish_prefills(due(prefill_ends_, t));
    finish_decodes(due(decode_ends_, t));
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

  // The next time anything happens after the events at `t` ran (stale entries are dropped
  // before: start_decodes).
  double next_event() const {
    double next = INFINITY;
    if (!prefill_ends_.empty()) next = std::min(next, prefill_ends_.top().first);
    if (!decode_ends_.empty()) next = std::min(next, decode_ends_.top().first);
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
    out.prefill_busy_s = prefill_busy_s_;
    for (const DecodeWorker& d : decode_) out.decode_busy_s += d.busy_s;
    out.prefill_workers_used = prefill_used_;
    out.decode_workers_used = decode_used_;
    set_pool_busy(out, static_cast<int64_t>(prefill_.size()), static_cast<int64_t>(decode_.size()));
    return out;
  }

 private:
  ReplayRequest& at(int64_t i) { return req_[static_cast<size_t>(i)]; }
  const ReplayRequest& at(int64_t i) const { return req_[static_cast<size_t>(i)]; }

  // The workers of `ends` whose step ends by `t`, taken out of it, in index order (the order the
  // steps' ends take effect in).
  // A decode worker's entry whose run was cut short (cut_run) stays behind, stale: skipped.
  const std::vector<int64_t>& due(StepEnds& ends, double t) {
    due_.clear();
    while (!ends.empty() && ends.top().first <= t) {
      due_.push_back(ends.top().second);
      ends.pop();
    }
    std::sort(due_.begin(), due_.end());
    due_.erase(std::unique(due_.begin(), due_.end()), due_.end());
    return due_;
  }
  bool stale(const std::pair<double, int64_t>& end) const {
    const DecodeWorker& d = decode_[idx(end.second)];
    return !d.busy || d.busy_until != end.first;
  }
  void drop_stale() {
    while (!decode_ends_.empty() && stale(decode_ends_.top())) decode_ends_.pop();
  }

  void finish_prefills(const std::vector<int64_t>& ended) {
    for (const int64_t i : ended) {
      PrefillWorker& p = prefill_[idx(i)];
      p.busy = false;
      idle_prefill_.push(i);
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

  // A step ended: every sequence has one more token (kept lazily); a recomputed prompt is
  // rebuilt with its next token; the sequences whose answer is whole finish, in admission order.
  void finish_decodes(const std::vector<int64_t>& ended) {
    to_start_.clear();
    for (const int64_t i : ended) {
      DecodeWorker& d = decode_[idx(i)];
      if (!d.busy || d.busy_until > now_) continue;  // stale: its run was cut (cut_run)
      to_start_.push_back(i);                        // it may start its next step (start_decodes)
      end_run(d, d.run_steps_s.size());
      room_changed_ = true;
      for (const int64_t r : d.recomputing) {
        at(r).prefilled = at(r).prompt;
        add_decode(d, r);
      }
      d.recomputing.clear();
      while (!d.finishes.empty() && d.finishes.front().step <= d.steps) {
        std::pop_heap(d.finishes.begin(), d.finishes.end(), std::greater<>{});
        const DueFinish f = d.finishes.back();
        d.finishes.pop_back();
        if (!runs_on(d, f.request) || order_[idx(f.request)] != f.order) continue;  // preempted
        const int64_t r = f.request;
        sync(d, r);
        remove_decode(d, r);
        worker_of_[idx(r)] = -1;
        ++d.finished;
        finish(r, d.busy_until);
        d.free_kv += at(r).held;
        at(r).held = 0;
      }
      if (d.finished > d.live()) compact(d);
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

  // Admits the waiting sequences in order, each to the worker with room holding the fewest
  // (the first of them). A head that found no room is asked again only once room may have come
  // (a step ended: sequences finished or were preempted) or the head changed.
  void admit_decodes() {
    while (!decode_wait_.empty()) {
      const int64_t r = decode_wait_.front();
      if (r == blocked_head_ && !room_changed_) return;
      room_changed_ = false;
      const int64_t tokens = limits_.decode.admission_tokens(at(r).prompt, at(r).isl + at(r).osl);
      // In index order, each worker asked only where it would hold fewer than the best so far;
      // none holds fewer than none, so the first empty one with room ends the search.
      DecodeWorker* best = nullptr;
      for (DecodeWorker& d : decode_) {
        const int64_t held = d.sequences();
        if ((best != nullptr && held >= best->sequences()) || held >= limits_.decode.max_batch ||
            free_now(d) < tokens)
          continue;
        best = &d;
        if (held == 0) break;
      }
      if (best == nullptr) {
        blocked_head_ = r;
        return;
      }
      blocked_head_ = -1;
      decode_used_ = std::max(decode_used_, index_of(*best) + 1);
      if (best->busy) cut_run(*best, false);
      if (!best->busy) to_start_.push_back(index_of(*best));
      best->joining.push_back(r);
      best->free_kv -= tokens;
      at(r).held = tokens;
      at(r).held_until = limits_.decode.held_until(at(r).prompt);
      decode_wait_.pop_front();
    }
  }

  // On demand (request_replay.h OnDemandWorker), a preempted sequence waits for a decode worker
  // again at the head of the queue and, readmitted, recomputes its prompt and answer so far there
  // (vLLM's recompute preemption, run by the decode instance's own scheduler).
  // Before a step every decoding sequence takes the cache of the token it adds. Those crossing
  // into a new page take theirs at once when the free cache holds them all (then none is
  // preempted, whatever their order); else, and where the page size is not known, every
  // sequence is synced and asks in admission order, the last admitted preempted as needed.
  void grow(DecodeWorker& d) {
    if (!limits_.decode.cache_tokens) return;
    if (limits_.decode.cache_block_tokens > 0 && take_pages(d, d.steps, 0)) return;
    sync_all(d);
    compact(d);
    const int64_t before = preemptions_;
    OnDemandWorker{req_, d.running, d.free_kv, decode_wait_, preemptions_}.grow(limits_.decode);
    if (preemptions_ > before) {
      room_changed_ = true;  // the preempted wait at the head of decode_wait_
      for (const int64_t r : decode_wait_)
        if (runs_on(d, r)) worker_of_[idx(r)] = -1;  // preempted: out of this worker
      rebuild(d);
    } else if (limits_.decode.cache_block_tokens > 0) {
      rebuild(d);  // new pages taken: their next crossings
    }
  }

  size_t idx(int64_t r) const { return static_cast<size_t>(r); }
  int64_t index_of(const DecodeWorker& d) const { return &d - decode_.data(); }
  bool runs_on(const DecodeWorker& d, int64_t r) const { return worker_of_[idx(r)] == index_of(d); }

  // `r`'s answer tokens as of now on `d` (generated grows by one per step since synced), or as
  // of its step `step`.
  int64_t generated(const DecodeWorker& d, int64_t r) const { return generated_at(r, d.steps); }
  int64_t generated_at(int64_t r, int64_t step) const {
    return at(r).generated + step - synced_[idx(r)];
  }
  void sync(const DecodeWorker& d, int64_t r) {
    at(r).generated = generated(d, r);
    synced_[idx(r)] = d.steps;
  }
  void sync_all(const DecodeWorker& d) {
    for (const int64_t r : d.running)
      if (runs_on(d, r)) sync(d, r);
  }

  // The step at which `r` (decoding from its step after `step` at the latest) asks for a new
  // page: its sequence isl + generated passes what its held pages cover.
  int64_t next_crossing(int64_t r, int64_t step) const {
    const int64_t sequence_then = at(r).isl + generated_at(r, step);
    return step + std::max<int64_t>(at(r).held_until - sequence_then + 1, 0);
  }
  void file_page(DecodeWorker& d, int64_t r) { file_page_after(d, r, d.steps); }
  void file_page_after(DecodeWorker& d, int64_t r, int64_t step) {
    if (!limits_.decode.cache_tokens || limits_.decode.cache_block_tokens < 1) return;
    cross_at_[idx(r)] = next_crossing(r, step);
    d.pages[idx(cross_at_[idx(r)] % limits_.decode.cache_block_tokens)].push_back(
        {r, order_[idx(r)], cross_at_[idx(r)]});
  }
  bool filed_as(const DecodeWorker& d, const PageCrossing& c) const {
    return runs_on(d, c.request) && order_[idx(c.request)] == c.order &&
           cross_at_[idx(c.request)] == c.step;
  }

  // The sequences crossing into a new page at step `step` (the next, d.steps, or the step
  // `run_step` ≥ 1 of the run about to start, before it starts) take it if the free cache holds
  // them all; false (nothing taken) if not. A run's takes are kept (run_takes) for a cut to give
  // back (give_back_pages).
  bool take_pages(DecodeWorker& d, int64_t step, size_t run_step) {
    const int64_t page = limits_.decode.cache_block_tokens;
    std::vector<PageCrossing>& filed = d.pages[idx(step % page)];
    // One pass: the entries no longer filed (gone, or filed again) dropped, the crossing ones
    // noted by their place.
    crossing_.clear();
    held_.clear();
    int64_t need = 0;
    size_t kept = 0;
    for (const PageCrossing& c : filed) {
      if (!filed_as(d, c)) continue;
      filed[kept] = c;
      if (c.step == step) {
        crossing_.push_back(static_cast<int64_t>(kept));
        held_.push_back(
            limits_.decode.held_tokens(at(c.request).isl + generated_at(c.request, step)));
        need += held_.back() - at(c.request).held;
      }
      ++kept;
    }
    filed.resize(kept);
    if (need > d.free_kv) return false;
    d.free_kv -= need;
    // Each crossing sequence is filed again at its next crossing: in place where that falls in
    // this bucket (a page of steps on), else in its own bucket, the entry here left for good
    // (dropped at this bucket's next visit).
    for (size_t i = 0; i < crossing_.size(); ++i) {
      PageCrossing& c = filed[idx(crossing_[i])];
      const int64_t r = c.request;
      if (run_step > 0)
        d.run_takes.push_back({run_step, r, at(r).held, at(r).held_until, held_[i] - at(r).held});
      at(r).held = held_[i];
      at(r).held_until = limits_.decode.held_until(at(r).isl + generated_at(r, step));
      const int64_t next = next_crossing(r, step);
      cross_at_[idx(r)] = next;
      if (next % page == step % page) {
        c.step = next;
      } else {
        d.pages[idx(next % page)].push_back({r, c.order, next});
        c.order = -1;  // never filed again, even where a cut gives this step's page back
      }
    }
    return true;
  }

  // Gives back the pages the run's steps from `run_step` on took (a cut drops those steps): each
  // crossing sequence holds what it held before and is filed to cross there again.
  void give_back_pages(DecodeWorker& d, size_t run_step) {
    while (!d.run_takes.empty() && d.run_takes.back().run_step >= run_step) {
      const PageTake& g = d.run_takes.back();
      const int64_t r = g.request;
      const int64_t step = d.steps + static_cast<int64_t>(g.run_step);
      d.free_kv += g.tokens;
      at(r).held = g.held;
      at(r).held_until = g.held_until;
      cross_at_[idx(r)] = step;
      d.pages[idx(step % limits_.decode.cache_block_tokens)].push_back({r, order_[idx(r)], step});
      d.run_takes.pop_back();
    }
  }

  // The free cache of `d` as of now_: the pages of its run's steps that start at now_ or later
  // are not taken yet (a step that starts at now_ starts after this event's admissions).
  int64_t free_now(const DecodeWorker& d) const {
    if (d.run_takes.empty()) return d.free_kv;
    const size_t started = started_steps(d, false).steps;
    int64_t pending = 0;
    for (auto g = d.run_takes.rbegin(); g != d.run_takes.rend() && g->run_step >= started; ++g)
      pending += g->tokens;
    return d.free_kv + pending;
  }

  // The steps of `d`'s run started by now_ (a step starting at now_ counts with `counting_now`,
  // as a step's end at now_ would have started it), and when the last of them ends.
  struct Started {
    size_t steps = 0;
    double end_s = 0;
  };
  Started started_steps(const DecodeWorker& d, bool counting_now) const {
    Started s{0, d.run_start_s};
    while (s.steps < d.run_steps_s.size() && (s.end_s < now_ || (counting_now && s.end_s == now_)))
      s.end_s += d.run_steps_s[s.steps++];
    return s;
  }

  void add_decode(DecodeWorker& d, int64_t r) {
    ++d.decodes;
    d.context_base += at(r).isl + at(r).generated - synced_[idx(r)];
  }
  void remove_decode(DecodeWorker& d, int64_t r) {
    --d.decodes;
    d.context_base -= at(r).isl + at(r).generated - synced_[idx(r)];
  }

  // A sequence joins `d` at its next step: a decode, or a prompt to recompute first.
  void join(DecodeWorker& d, int64_t r) {
    worker_of_[idx(r)] = index_of(d);
    synced_[idx(r)] = d.steps;
    order_[idx(r)] = next_order_++;
    d.running.push_back(r);
    track(d, r);
    std::push_heap(d.finishes.begin(), d.finishes.end(), std::greater<>{});
  }

  // What `d` keeps of a running sequence (synced): its decode or its prompt to recompute, its
  // finishing step (pushed on `finishes`, the heap left to the caller) and its next page.
  void track(DecodeWorker& d, int64_t r) {
    if (at(r).prefilled < at(r).prompt)
      d.recomputing.push_back(r);
    else
      add_decode(d, r);
    d.finishes.push_back({d.steps + at(r).osl - at(r).generated, order_[idx(r)], r});
    file_page(d, r);
  }

  // Drops the finished from `running`, in order.
  void compact(DecodeWorker& d) {
    size_t kept = 0;
    for (const int64_t r : d.running)
      if (runs_on(d, r)) d.running[kept++] = r;
    d.running.resize(kept);
    d.finished = 0;
  }

  // Everything kept for `d`'s running sequences (all synced), anew.
  void rebuild(DecodeWorker& d) {
    compact(d);
    d.decodes = d.context_base = 0;
    d.recomputing.clear();
    d.finishes.clear();
    for (std::vector<PageCrossing>& b : d.pages) b.clear();
    for (const int64_t r : d.running) track(d, r);
    std::make_heap(d.finishes.begin(), d.finishes.end(), std::greater<>{});
  }

  // The step's batch: the recomputed prompts (whole, in order) and the decodes, whose context
  // is kept summed (under local attention start_run sums the keys a local layer reads).
  StepBatch decode_batch(const DecodeWorker& d) const {
    StepBatch batch;
    for (const int64_t r : d.recomputing)
      batch.chunks.push_back({at(r).prompt - at(r).prefilled, at(r).prefilled});
    batch.decodes = d.decodes;
    batch.decode_context_tokens = batch.decode_local_tokens =
        static_cast<double>(d.context_base + d.decodes * d.steps);
    batch.sampled = d.live();
    return batch;
  }

  // The idle prefill workers take prompts in index order while any has arrived.
  void start_prefills(double t, const StepTimeFn& step_s) {
    while (!idle_prefill_.empty() && !queue_.empty() && at(queue_.front()).arrival_s <= t) {
      const int64_t i = idle_prefill_.top();
      idle_prefill_.pop();
      prefill_used_ = std::max(prefill_used_, i + 1);
      PrefillWorker& p = prefill_[idx(i)];
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
      prefill_ends_.emplace(p.busy_until, i);
    }
  }

  // The decode workers that may start a step at `t` (those whose step ended, those given a
  // sequence while idle; any other idle worker holds none), in index order.
  void start_decodes(double t, const StepTimeFn& step_s) {
    std::sort(to_start_.begin(), to_start_.end());
    to_start_.erase(std::unique(to_start_.begin(), to_start_.end()), to_start_.end());
    for (const int64_t i : to_start_) {
      DecodeWorker& d = decode_[idx(i)];
      if (d.busy) continue;
      for (const int64_t r : d.joining) join(d, r);
      d.joining.clear();
      grow(d);
      if (d.live() == 0) continue;
      start_run(d, t, step_s);
      decode_ends_.emplace(d.busy_until, i);
    }
    to_start_.clear();
    // A preemption here left sequences waiting that the next event asks again for room (as it
    // would at any worker's step end): every run ends at its step under way.
    if (!decode_wait_.empty() && (decode_wait_.front() != blocked_head_ || room_changed_))
      for (DecodeWorker& d : decode_)
        if (d.busy) cut_run(d, true);
    drop_stale();
  }

  // Steps `d` may run from its next one as a run: while nothing but its own steps concerns it.
  // The next step always; past it, none where a step is not plain decodes (a prompt to
  // recompute, the cache grown token by token) and only up to the step at which the first of its
  // sequences finishes or, on demand, the first at which the free cache cannot hold the pages its
  // sequences cross into (there its own step asks, preempting). The pages of the steps between
  // are taken now, as each of those steps would take them at its start (nothing else takes or
  // frees this worker's cache before then: a sequence given to it meanwhile cuts the run short,
  // cut_run, and the steps that then do not run give theirs back).
  // Where a sequence may join `d` before a step crosses (estimated from its last step's time),
  // the run stops there instead, as pages taken for steps a cut drops are work spent twice.
  int64_t run_steps(DecodeWorker& d, double t) {
    if (!d.recomputing.empty()) return 1;
    const bool on_demand = static_cast<bool>(limits_.decode.cache_tokens);
    if (on_demand && limits_.decode.cache_block_tokens < 1) return 1;
    int64_t last = d.finishes.empty() ? d.steps + 1 : d.finishes.front().step;
    if (on_demand) {
      const int64_t page = limits_.decode.cache_block_tokens;
      last = std::min(last, d.steps + page + 1);
      const double join_s = earliest_join_s();
      for (int64_t step = d.steps + 1; step < last; ++step) {
        const double start_s = t + static_cast<double>(step - d.steps) * d.last_step_s;
        const bool stops = start_s < join_s
                               ? !take_pages(d, step, static_cast<size_t>(step - d.steps))
                               : crosses(d, step);
        if (stops) {
          last = step;
          break;
        }
      }
    }
    return std::max<int64_t>(1, last - d.steps);
  }
  bool crosses(const DecodeWorker& d, int64_t step) const {
    for (const PageCrossing& c : d.pages[idx(step % limits_.decode.cache_block_tokens)])
      if (c.step == step && filed_as(d, c)) return true;
    return false;
  }
  // The earliest a sequence may be given to a decode worker after now_: now_ while any waits
  // for room (any step's end may make it), else the next transfer's arrival, which comes no
  // earlier than the next prompt step's end or, for a prompt still to come, its arrival.
  double earliest_join_s() const {
    if (!decode_wait_.empty()) return now_;
    double t = INFINITY;
    if (!transfers_.empty()) t = transfers_.front().ready_s;
    if (!prefill_ends_.empty()) t = std::min(t, prefill_ends_.top().first);
    if (!queue_.empty()) t = std::min(t, std::max(now_, at(queue_.front()).arrival_s));
    if (!closed_ && first_pending_ < count_) t = std::min(t, at(first_pending_).arrival_s);
    return t;
  }

  // Runs `d`'s steps from `t` (run_steps of them): each step's batch is the decodes at their
  // context then; its end is the run's last step's.
  void start_run(DecodeWorker& d, double t, const StepTimeFn& step_s) {
    d.run_takes.clear();
    const int64_t n = run_steps(d, t);
    d.run_start_s = t;
    d.run_steps_s.clear();
    StepBatch batch = decode_batch(d);
    // Under local attention the keys each step reads, from one visit of the sequences per run.
    std::optional<LocalKeys> local;
    if (limits_.decode.window) {
      local.emplace(limits_.decode.window, n);
      for (const int64_t r : d.running)
        if (runs_on(d, r) && at(r).prefilled >= at(r).prompt)
          local->add(at(r).isl + generated(d, r));
      batch.decode_local_tokens = static_cast<double>(local->at(1));
    }
    // Only the context changes from step to step: the fixed terms priced once.
    std::optional<DecodeStepPrice> price;
    if (n > 1 && decode_price_ && batch.chunks.empty())
      price = decode_price_(batch.decodes, batch.sampled);
    for (int64_t j = 0; j < n; ++j) {
      if (j > 0) {
        batch.decode_context_tokens += static_cast<double>(batch.decodes);
        batch.decode_local_tokens =
            local ? static_cast<double>(local->at(j + 1)) : batch.decode_context_tokens;
      }
      const double dt = price
                            ? price->step_s(batch.decode_context_tokens, batch.decode_local_tokens)
                            : step_s(batch);
      d.run_steps_s.push_back(dt);
      t += dt;
    }
    d.busy = true;
    d.busy_until = t;
  }

  // `d`'s run ends after its first `n` steps (n ≥ 1): counted as the steps it ran.
  void end_run(DecodeWorker& d, size_t n) {
    d.busy = false;
    d.steps += static_cast<int64_t>(n);
    steps_ += static_cast<int64_t>(n);
    batch_sum_ += static_cast<double>(n) * static_cast<double>(d.decodes);
    for (size_t j = 0; j < n; ++j) d.busy_s += d.run_steps_s[j];
    if (n > 0) d.last_step_s = d.run_steps_s[n - 1];
    d.run_steps_s.clear();
    d.run_takes.clear();
  }

  // `d`'s run ends with its step under way at now_: where a sequence joined it (it joins at
  // that step's end; at once where a step of the run ends now, as that step's end would have
  // run first at this event), or where the next event must come at its next step end
  // (`after_now`: a step ending now has already started the next, as a step's end would).
  void cut_run(DecodeWorker& d, bool after_now) {
    const auto [n, end] = started_steps(d, after_now);
    if (n == d.run_steps_s.size()) return;  // in its last step
    give_back_pages(d, n);
    if (end == now_) {
      end_run(d, n);
      return;
    }
    d.run_steps_s.resize(n);
    d.busy_until = end;
    decode_ends_.emplace(end, index_of(d));
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
  // The busy workers by the time their step ends (then index), and the idle prefill workers: an
  // event visits only the workers it concerns.
  StepEnds prefill_ends_, decode_ends_;
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> idle_prefill_;
  std::vector<int64_t> due_;       // the workers whose step ends at this event (due)
  std::vector<int64_t> to_start_;  // decode workers start_decodes visits at this event
  int64_t blocked_head_ = -1;      // the head of decode_wait_ that found no room, or −1
  bool room_changed_ = false;      // a decode step ended (or preempted) since it did
  // Per request, on the decode side: its worker (−1: none), the worker step its `generated` is
  // exact at, the step it next crosses into a page, its place in admission order.
  std::vector<int64_t> worker_of_, synced_, cross_at_, order_;
  int64_t next_order_ = 0;
  std::vector<int64_t> crossing_, held_;  // take_pages: the crossing sequences, their new holds
  int64_t first_pending_ = 0;             // next request not yet issued
  int64_t finished_ = 0, steps_ = 0, preemptions_ = 0;
  double batch_sum_ = 0, prefill_busy_s_ = 0;
  int64_t prefill_used_ = 0, decode_used_ = 0;  // ReplayResult::prefill_workers_used, …
  double now_ = 0;                              // the time run_events ran last
  const DecodePriceFn& decode_price_;           // prices a run's steps where given
};

}  // namespace

void set_pool_busy(ReplayResult& r, int64_t prefill_workers, int64_t decode_workers) {
  if (r.duration_s <= 0) return;
  r.prefill_pool_busy = r.prefill_busy_s / (static_cast<double>(prefill_workers) * r.duration_s);
  r.decode_pool_busy = r.decode_busy_s / (static_cast<double>(decode_workers) * r.duration_s);
}

ReplayResult replay_disaggregated(const Workload& w, const DisaggregatedLimits& limits,
                                  const StepTimeFn& prefill_step_s, const StepTimeFn& decode_step_s,
                                  const DecodePriceFn& decode_price) {
  assert(limits.prefill_workers >= 1 && limits.decode_workers >= 1);
  assert(limits.prefill_step_tokens >= 1 && limits.decode.max_batch >= 1);
  DisaggregatedScheduler s(w, limits, decode_price);
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
