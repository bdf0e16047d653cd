#include "serving/request_replay.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <random>

#include "core/attention_span.h"
#include "serving/local_keys.h"

namespace meshplan::serving {
namespace {

// Uniform in [0, 1) from the top 53 bits of one draw: the same on every standard library.
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double percentile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  return sorted[std::min(n, std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

int64_t replay_request_count(const Workload& w) {
  if (w.trace) {
    const auto size = static_cast<int64_t>(w.trace->size());
    return w.requests > 0 ? std::min(w.requests, size) : size;
  }
  if (w.requests > 0) return w.requests;
  if (w.load == LoadKind::concurrency)
    return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(10 * w.concurrency)), 100,
                               kMaxRequests);
  return kDefaultRequests;
}

int64_t longest_replayed_sequence(const Workload& w) {
  return longest_sequence(request_lengths(w, replay_request_count(w)));
}

int64_t longest_replayed_prompt(const Workload& w) {
  return longest_prompt(request_lengths(w, replay_request_count(w)));
}

std::vector<double> initial_arrivals(const Workload& w, int64_t count) {
  std::vector<double> out(static_cast<size_t>(count), 0.0);
  if (w.load == LoadKind::trace) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = (*w.trace)[i].arrival_s;
    return out;
  }
  if (w.load != LoadKind::request_rate) return out;
  std::mt19937_64 rng(w.seed);
  double t = 0;
  for (double& a : out) {
    t += -std::log(1 - uniform(rng)) / w.request_rate_per_s;
    a = t;
  }
  return out;
}

std::vector<ReplayRequest> initial_requests(const Workload& w, int64_t count) {
  const std::vector<double> arrivals = initial_arrivals(w, count);
  const std::vector<RequestLength> lengths = request_lengths(w, count);
  std::vector<ReplayRequest> out(static_cast<size_t>(count));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].arrival_s = arrivals[i];
    out[i].isl = out[i].prompt = lengths[i].isl;
    out[i].osl = lengths[i].osl;
  }
  return out;
}

LatencyStats latency_stats(std::vector<double> values) {
  LatencyStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.p50 = percentile(values, 0.50);
  s.p90 = percentile(values, 0.90);
  s.p99 = percentile(values, 0.99);
  s.count = static_cast<int64_t>(values.size());
  return s;
}

namespace {

// One replica's continuous-batching scheduler over the requests of a workload (see the header).
class Scheduler {
 public:
  Scheduler(const Workload& w, const ReplayLimits& limits)
      : w_(w),
        limits_(limits),
        count_(replay_request_count(w)),
        closed_(w.load == LoadKind::concurrency),
        in_flight_(requests_in_flight(w, count_)),
        req_(initial_requests(w, count_)),
        free_kv_(limits.kv_tokens) {
    for (ReplayRequest& q : req_) q.prefilled = limits.prefix_reused_tokens;
    issued_ = std::min(count_, in_flight_);
    for (int64_t i = 0; i < issued_; ++i) waiting_.push_back(i);
  }

  bool done() const { return finished_ == count_; }

  bool decoding(int64_t r) const { return at(r).prefilled == at(r).prompt; }

  void grow() {
    const int64_t before = preemptions_;
    OnDemandWorker{req_, running_, free_kv_, waiting_, preemptions_}.grow(limits_);
    if (limits_.reserves_answers && preemptions_ > before) reestimate_ratio();
  }

  // SGLang's retract_decode: the ratio the sequences left running have shown so far.
  void reestimate_ratio() {
    double decoded = 0, answers = 0;
    for (int64_t r : running_) {
      decoded += static_cast<double>(at(r).generated);
      answers += static_cast<double>(at(r).osl);
    }
    const double n = static_cast<double>(running_.size());
    ratio_ = std::min(1.0, (decoded + AnswerReserve::kRetractSteps * n) / (answers + 1));
  }

  // Answer tokens a sequence has yet to produce, clipped as SGLang's estimate clips them.
  int64_t answer_left(int64_t r) const {
    return std::min(std::max<int64_t>(at(r).osl - at(r).generated, 0), AnswerReserve::kClipTokens);
  }

  // The cache SGLang's PrefillAdder counts free for new requests: free less the running
  // sequences' answers left × the ratio (and a mixed step's decodes).
  double reserve_room() const {
    double room = static_cast<double>(free_kv_);
    if (limits_.mixed_steps) room -= static_cast<double>(running_.size());
    for (int64_t r : running_) room -= static_cast<double>(answer_left(r)) * ratio_;
    return room;
  }

  // Queues the open-loop arrivals up to `t`, then admits what max_batch and the KV cache allow.
  void admit(double t) {
    if (!closed_)
      while (issued_ < count_ && at(issued_).arrival_s <= t) waiting_.push_back(issued_++);
    if (limits_.reserves_answers && running_.empty()) ratio_ = AnswerReserve::kInitRatio;
    double room = limits_.reserves_answers ? reserve_room() : 0;
    while (!waiting_.empty() && at(waiting_.front()).arrival_s <= t &&
           static_cast<int64_t>(running_.size()) < limits_.max_batch &&
           free_kv_ >= admission_tokens(waiting_.front())) {
      const int64_t r = waiting_.front();
      if (limits_.reserves_answers) {
        // The prompt tokens it computes (a cached prefix aside) and its answer.
        const double need =
            static_cast<double>(at(r).prompt - limits_.prefix_reused_tokens + answer_left(r));
        if (need >= room) break;
        room -= need;
      }
      running_.push_back(r);
      waiting_.pop_front();
      at(r).held = admission_tokens(r);
      at(r).held_until = limits_.held_until(at(r).prompt);
      free_kv_ -= at(r).held;
    }
  }

  // Decodes first, then prompt chunks in admission order within the step's token budget;
  // without mixed steps, prompt chunks alone while any admitted prompt is left.
  StepBatch form_batch() {
    StepBatch batch;
    chunks_.clear();
    int64_t budget = limits_.max_step_tokens;
    decoded_ = limits_.mixed_steps || std::all_of(running_.begin(), running_.end(),
                                                  [&](int64_t r) { return decoding(r); });
    for (int64_t r : running_)
      if (decoded_ && decoding(r)) {
        batch.add_decode(limits_.window, at(r).isl + at(r).generated);
        --budget;
      }
    int64_t prompt_room = limits_.max_prefill_tokens > 0
                              ? limits_.max_prefill_tokens - batch.decodes
                              : std::numeric_limits<int64_t>::max();
    for (int64_t r : running_) {
      const ReplayRequest& q = at(r);
      if (decoding(r) || budget <= 0) continue;
      const int64_t left = q.prompt - q.prefilled;
      if (!limits_.chunked_prefill && left > budget && left <= limits_.max_step_tokens) break;
      if (!chunks_.empty() && left > prompt_room) break;
      const int64_t c = std::min(left, budget);
      batch.chunks.push_back({c, q.prefilled});
      chunks_.push_back({r, c});
      budget -= c;
      prompt_room -= c;
      if (q.prefilled + c == q.prompt) ++batch.sampled;
    }
    batch.sampled += batch.decodes;
    last_decodes_ = batch.decodes;
    return batch;
  }

  // The next arrival after `t` (nothing can run until then).
  double next_arrival() const {
    double next = INFINITY;
    if (!waiting_.empty()) next = at(waiting_.front()).arrival_s;
    if (!closed_ && issued_ < count_) next = std::min(next, at(issued_).arrival_s);
    return next;
  }

  // The step formed last ended at `t`: tokens generated, prompts advanced, finished requests
  // released (a closed loop issues a new one for each).
  void finish_step(double start_s, double t) {
    int64_t prefill = 0;
    for (const auto& chunk : chunks_) prefill += chunk.second;
    record_step(start_s, t, last_decodes_, prefill, static_cast<int64_t>(chunks_.size()));
    ++steps_;
    batch_sum_ += static_cast<double>(running_.size());
    if (limits_.reserves_answers && decoded_ && last_decodes_ > 0)
      ratio_ = std::max(AnswerReserve::kMinRatio, ratio_ - AnswerReserve::kDecayPerStep);
    for (int64_t r : running_)
      if (decoded_ && decoding(r)) ++at(r).generated;
    for (const auto& [r, c] : chunks_) {
      ReplayRequest& q = at(r);
      if (q.scheduled_s < 0) q.scheduled_s = start_s;
      q.prefilled += c;
      if (q.prefilled < q.prompt) continue;
      if (q.generated == 0) q.first_token_s = t;  // else a preempted sequence's prompt again
      ++q.generated;
    }
    size_t kept = 0;  // running_ keeps the unfinished in order, in place
    for (const int64_t r : running_) {
      if (at(r).generated < at(r).osl) {
        running_[kept++] = r;
        continue;
      }
      at(r).finish_s = t;
      ++finished_;
      free_kv_ += at(r).held;
      at(r).held = 0;
      if (closed_ && issued_ < count_) {
        at(issued_).arrival_s = t + limits_.front_end_s;
        waiting_.push_back(issued_++);
      }
    }
    running_.resize(kept);
  }

  // The steps from `t` on that only decode, run without visiting every sequence each step;
  // returns the time after them. Such a step (every running sequence past its prompt, none
  // finishing, nothing to admit, no cache to preempt for) is one the general path would run
  // alike: its batch is the running sequences' decodes, whose summed context grows by their
  // count each step, and a sequence takes cache only where it crosses into a new page. Nothing
  // is admitted while no request is due, or while the batch is full or the request at the head
  // of the queue waits for cache, which decode steps only fill (a head the cache would admit
  // leaves the step to the general path, even where SGLang's answer reserve, whose room grows as
  // answers shorten, holds it back). Under local attention a decode reads its window's keys
  // (core/attention_span.h local_keys), summed the same way (LocalKeys). Left to the general
  // path: a cache whose page size is not known.
  double run_decodes(double t, const StepTimeFn& step_time_s, const DecodePriceFn& decode_price) {
    const int64_t steps = decode_only_steps(t);
    if (steps < 1) return t;
    const double stop_s = arrival_stop(t);
    const int64_t n = static_cast<int64_t>(running_.size());
    int64_t context = 0;
    LocalKeys local(limits_.window, steps);
    for (const int64_t r : running_) {
      context += at(r).isl + at(r).generated;
      local.add(at(r).isl + at(r).generated);
    }
    bucket_pages();
    std::optional<DecodeStepPrice> price;  // the run's fixed terms, priced at its first step
    int64_t ran = 0;
    while (ran < steps && t < stop_s && take_pages(ran + 1)) {
      const double context_tokens = static_cast<double>(context + ran * n);
      const double local_tokens =
          limits_.window ? static_cast<double>(local.at(ran + 1)) : context_tokens;
      const double start_s = t;
      if (decode_price && !price) price = decode_price(n, n);
      if (price) {
        t += price->step_s(context_tokens, local_tokens);
      } else {
        StepBatch batch;
        batch.decodes = batch.sampled = n;
        batch.decode_context_tokens = context_tokens;
        batch.decode_local_tokens = local_tokens;
        t += step_time_s(batch);
      }
      record_step(start_s, t, n, 0, 0);
      if (limits_.reserves_answers)
        ratio_ = std::max(AnswerReserve::kMinRatio, ratio_ - AnswerReserve::kDecayPerStep);
      ++steps_;
      batch_sum_ += static_cast<double>(n);
      ++ran;
    }
    for (const int64_t r : running_) at(r).generated += ran;
    return t;
  }

  ReplayResult result() const;

 private:
  // Steps run_decodes may run from `t` before the first of the running sequences finishes
  // (0: the general path runs the next step).
  int64_t decode_only_steps(double t) const {
    if (running_.empty() || (limits_.cache_tokens && limits_.cache_block_tokens < 1)) return 0;
    int64_t first_finish = std::numeric_limits<int64_t>::max();
    for (const int64_t r : running_) {
      if (!decoding(r)) return 0;
      first_finish = std::min(first_finish, at(r).osl - at(r).generated);
    }
    const bool admits_now = static_cast<int64_t>(running_.size()) < limits_.max_batch &&
                            !waiting_.empty() && at(waiting_.front()).arrival_s <= t &&
                            free_kv_ >= admission_tokens(waiting_.front());
    return admits_now ? 0 : first_finish - 1;  // the finishing step is the general path's
  }

  // The first step start at which a request could be admitted during decode-only steps:
  // never while the batch is full or the arrived head of the queue waits for cache (arrivals
  // behind it queue when the general path next runs, in the same order; decode_only_steps runs
  // none when the cache would admit it, whatever SGLang's reserve says); else the next arrival.
  double arrival_stop(double t) const {
    if (static_cast<int64_t>(running_.size()) >= limits_.max_batch) return INFINITY;
    if (!waiting_.empty() && at(waiting_.front()).arrival_s <= t) return INFINITY;
    return next_arrival();
  }

  // On demand, the running sequences by the first decode-only step at which each crosses into a
  // new page: pages_[k] those crossing at steps k + 1, k + 1 + page, …. That step is 1 to page,
  // or page + 1 for a sequence whose cache was taken for a step that then ran no decode (SGLang's
  // prompt-only steps): it is asked at step 1 too, for the page it holds, and takes nothing.
  void bucket_pages() {
    if (!limits_.cache_tokens) return;
    const int64_t page = limits_.cache_block_tokens;
    pages_.resize(static_cast<size_t>(page));
    for (std::vector<int64_t>& b : pages_) b.clear();
    for (const int64_t r : running_) {
      // Step j asks for the cache of isl + generated + j − 1 tokens (generated as of now).
      const int64_t first = at(r).held_until - (at(r).isl + at(r).generated) + 2;
      assert(first >= 1 && first <= page + 1);
      pages_[static_cast<size_t>((first - 1) % page)].push_back(r);
    }
  }

  // The cache the sequences crossing into a new page at decode-only step `j` take, if it has
  // room for all of them (then no sequence is preempted, whatever their order); false, taking
  // nothing, if not.
  bool take_pages(int64_t j) {
    if (!limits_.cache_tokens) return true;
    const std::vector<int64_t>& crossing =
        pages_[static_cast<size_t>((j - 1) % limits_.cache_block_tokens)];
    held_.clear();
    int64_t need = 0;
    for (const int64_t r : crossing) {
      held_.push_back(limits_.held_tokens(at(r).isl + at(r).generated + j - 1));
      need += held_.back() - at(r).held;
    }
    if (need > free_kv_) return false;
    free_kv_ -= need;
    for (size_t i = 0; i < crossing.size(); ++i) {
      ReplayRequest& q = at(crossing[i]);
      q.held = held_[i];
      q.held_until = limits_.held_until(q.isl + q.generated + j - 1);
    }
    return true;
  }

  void record_step(double start_s, double end_s, int64_t decodes, int64_t prefill, int64_t chunks) {
    if (limits_.record_steps && steps_ < kMaxRecordedSteps)
      recorded_.push_back({start_s, end_s - start_s, decodes, prefill, chunks});
  }

  ReplayRequest& at(int64_t i) { return req_[static_cast<size_t>(i)]; }
  const ReplayRequest& at(int64_t i) const { return req_[static_cast<size_t>(i)]; }
  int64_t admission_tokens(int64_t r) const {
    return limits_.admission_tokens(at(r).prompt, at(r).isl + at(r).osl);
  }

  Workload w_;
  ReplayLimits limits_;
  int64_t count_ = 0;
  bool closed_ = false;
  int64_t in_flight_ = 0;
  std::vector<ReplayRequest> req_;
  std::deque<int64_t> waiting_;
  std::vector<int64_t> running_;
  std::vector<std::pair<int64_t, int64_t>> chunks_;  // request, prompt tokens this step
  std::vector<std::vector<int64_t>> pages_;          // run_decodes: bucket_pages
  std::vector<int64_t> held_;                        // take_pages: the crossing's new holds
  int64_t issued_ = 0, finished_ = 0, free_kv_ = 0, steps_ = 0, last_decodes_ = 0;
  int64_t preemptions_ = 0;
  bool decoded_ = true;                       // the step formed last carries the decodes
  double ratio_ = AnswerReserve::kInitRatio;  // SGLang's new_token_ratio (reserves_answers)
  double batch_sum_ = 0;
  std::vector<ReplayStep> recorded_;
};

ReplayResult Scheduler::result() const {
  ReplayResult out = summarize_replay(req_, w_);
  out.steps = steps_;
  out.preemptions = preemptions_;
  out.recorded = recorded_;
  out.mean_batch = steps_ > 0 ? batch_sum_ / static_cast<double>(steps_) : 0;
  return out;
}

}  // namespace

void OnDemandWorker::grow(const ReplayLimits& limits) {
  if (!limits.cache_tokens) return;
  for (size_t i = 0; i < running.size(); ++i) {
    const int64_t r = running[i];
    ReplayRequest& q = requests[static_cast<size_t>(r)];
    if (q.prefilled < q.prompt) continue;  // prompt still to compute: its cache taken at admission
    const int64_t sequence = q.isl + q.generated;
    if (sequence <= q.held_until) continue;  // within the pages it holds
    const int64_t need = limits.held_tokens(sequence) - q.held;
    while (free_kv < need && running.back() != r) preempt_last(limits);
    if (free_kv < need) {
      preempt_last(limits);
      return;
    }
    free_kv -= need;
    q.held += need;
    q.held_until = limits.held_until(sequence);
  }
}

void OnDemandWorker::preempt_last(const ReplayLimits& limits) {
  const int64_t r = running.back();
  running.pop_back();
  ReplayRequest& q = requests[static_cast<size_t>(r)];
  free_kv += q.held;
  q.held = q.held_until = 0;
  q.prompt = q.isl + q.generated;
  q.prefilled = limits.prefix_reused_tokens;
  ++preemptions;
  waiting.push_front(r);
}

int64_t requests_in_flight(const Workload& w, int64_t count) {
  return w.load == LoadKind::concurrency ? std::max<int64_t>(1, std::llround(w.concurrency))
                                         : count;
}

int64_t warmup_requests(const Workload& w, int64_t count) {
  if (w.load != LoadKind::concurrency || w.first_wave_measured) return 0;
  const int64_t in_flight = requests_in_flight(w, count);
  return count >= 2 * in_flight ? in_flight : 0;
}

ReplayResult summarize_replay(const std::vector<ReplayRequest>& requests, const Workload& w) {
  std::vector<RequestTimes> times;
  for (const ReplayRequest& q : requests)
    times.push_back({q.arrival_s, q.first_token_s, q.finish_s, q.scheduled_s, q.osl});
  return summarize_requests(std::move(times),
                            warmup_requests(w, static_cast<int64_t>(requests.size())));
}

ReplayResult summarize_requests(std::vector<RequestTimes> requests, int64_t measured_from) {
  ReplayResult out;
  out.measured_from = measured_from;
  std::vector<double> ttft, tpot, queue;
  double first = INFINITY, last = 0, output_tokens = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const RequestTimes& q = requests[i];
    if (static_cast<int64_t>(i) >= measured_from) {
      ttft.push_back(q.first_token_s - q.arrival_s);
      queue.push_back(q.scheduled_s - q.arrival_s);
      if (q.output_tokens > 1) tpot.push_back(q.tpot_s());
    }
    output_tokens += static_cast<double>(q.output_tokens);
    first = std::min(first, q.arrival_s);
    last = std::max(last, q.finish_s);
  }
  out.duration_s = last - first;
  out.output_tokens_per_s = out.duration_s > 0 ? output_tokens / out.duration_s : 0;
  out.ttft_s = latency_stats(std::move(ttft));
  out.tpot_s = latency_stats(std::move(tpot));
  out.queue_s = latency_stats(std::move(queue));
  out.requests_replayed = static_cast<int64_t>(requests.size());
  out.requests = std::move(requests);
  set_arrival_span(out);
  return out;
}

void set_arrival_span(ReplayResult& r) {
  r.arrival_span_s =
      r.requests.size() < 2 ? 0 : r.requests.back().arrival_s - r.requests.front().arrival_s;
}

void add_front_end(ReplayResult& r, double front_end_s) {
  r.front_end_s += front_end_s;
  for (RequestTimes& q : r.requests) q.arrival_s -= front_end_s;
  set_arrival_span(r);
  if (static_cast<int64_t>(r.requests.size()) <= r.measured_from) return;  // no TTFT measured
  for (double* v : {&r.ttft_s.mean, &r.ttft_s.p50, &r.ttft_s.p90, &r.ttft_s.p99}) *v += front_end_s;
}

ReplayResult replay_requests(const Workload& w, const ReplayLimits& limits,
                             const StepTimeFn& step_time_s, const DecodePriceFn& decode_price) {
  assert(limits.max_batch >= 1);
  Scheduler s(w, limits);
  double t = 0;
  while (!s.done()) {
    s.grow();
    s.admit(t);
    const StepBatch batch = s.form_batch();
    if (batch.tokens() == 0) {
      const double next = s.next_arrival();
      assert(std::isfinite(next) && next > t);
      t = next;
      continue;
    }
    const double start_s = t;
    t += step_time_s(batch);
    s.finish_step(start_s, t);
    t = s.run_decodes(t, step_time_s, decode_price);
  }
  return s.result();
}

}  // namespace meshplan::serving
