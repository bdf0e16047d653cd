#include "serving/request_replay.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <numeric>
#include <random>

namespace meshplan::serving {
namespace {

struct Request {
  double arrival_s = 0, first_token_s = 0, finish_s = 0;
  int64_t prefilled = 0, generated = 0;
};

// Uniform in [0, 1) from the top 53 bits of one draw: the same on every standard library.
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double percentile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  return sorted[std::min(n, std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

int64_t replay_request_count(const Workload& w) {
  if (w.requests > 0) return w.requests;
  if (w.load == LoadKind::concurrency)
    return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(10 * w.concurrency)), 100,
                               kMaxRequests);
  return kDefaultRequests;
}

std::vector<double> initial_arrivals(const Workload& w, int64_t count) {
  std::vector<double> out(static_cast<size_t>(count), 0.0);
  if (w.load != LoadKind::request_rate) return out;
  std::mt19937_64 rng(w.seed);
  double t = 0;
  for (double& a : out) {
    t += -std::log(1 - uniform(rng)) / w.request_rate_per_s;
    a = t;
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
  return s;
}

ReplayResult replay_requests(const Workload& w, const ReplayLimits& limits,
                             const StepTimeFn& step_time_s) {
  assert(limits.max_batch >= 1 && limits.kv_tokens >= limits.tokens_per_request);
  const int64_t count = replay_request_count(w);
  std::vector<Request> req(static_cast<size_t>(count));
  const std::vector<double> arrivals = initial_arrivals(w, count);
  const bool closed = w.load == LoadKind::concurrency;
  const int64_t in_flight =
      closed ? std::max<int64_t>(1, static_cast<int64_t>(std::llround(w.concurrency))) : count;
  int64_t issued = std::min(count, in_flight);
  for (int64_t i = 0; i < count; ++i) req[static_cast<size_t>(i)].arrival_s = arrivals[size_t(i)];

  std::deque<int64_t> waiting;
  for (int64_t i = 0; i < issued; ++i) waiting.push_back(i);
  int64_t next_open = issued;  // open loop / offline: next request not yet queued
  std::vector<int64_t> running;
  int64_t free_kv = limits.kv_tokens, finished = 0;
  double t = 0, batch_sum = 0;
  ReplayResult out;
  while (finished < count) {
    if (!closed)
      while (next_open < count && req[size_t(next_open)].arrival_s <= t)
        waiting.push_back(next_open++);
    while (!waiting.empty() && req[size_t(waiting.front())].arrival_s <= t &&
           static_cast<int64_t>(running.size()) < limits.max_batch &&
           free_kv >= limits.tokens_per_request) {
      running.push_back(waiting.front());
      waiting.pop_front();
      free_kv -= limits.tokens_per_request;
    }
    StepBatch batch;
    int64_t budget = limits.max_step_tokens;
    std::vector<std::pair<int64_t, int64_t>> chunks;  // request, tokens
    for (int64_t r : running) {
      const Request& q = req[size_t(r)];
      if (q.prefilled == w.isl) {
        ++batch.decodes;
        batch.decode_context_tokens += static_cast<double>(w.isl + q.generated);
        --budget;
      }
    }
    for (int64_t r : running) {
      const Request& q = req[size_t(r)];
      if (q.prefilled == w.isl || budget <= 0) continue;
      const int64_t c = std::min(w.isl - q.prefilled, budget);
      batch.chunks.push_back({c, q.prefilled});
      chunks.push_back({r, c});
      budget -= c;
      if (q.prefilled + c == w.isl) ++batch.sampled;
    }
    batch.sampled += batch.decodes;
    if (batch.tokens() == 0) {
      double next = INFINITY;
      if (!waiting.empty()) next = req[size_t(waiting.front())].arrival_s;
      if (!closed && next_open < count) next = std::min(next, req[size_t(next_open)].arrival_s);
      assert(std::isfinite(next) && next > t);
      t = next;
      continue;
    }
    t += step_time_s(batch);
    ++out.steps;
    batch_sum += static_cast<double>(running.size());
    for (int64_t r : running) {
      Request& q = req[size_t(r)];
      if (q.prefilled == w.isl) ++q.generated;
    }
    for (const auto& [r, c] : chunks) {
      Request& q = req[size_t(r)];
      q.prefilled += c;
      if (q.prefilled == w.isl) {
        q.first_token_s = t;
        q.generated = 1;
      }
    }
    std::vector<int64_t> still;
    for (int64_t r : running) {
      Request& q = req[size_t(r)];
      if (q.generated < w.osl) {
        still.push_back(r);
        continue;
      }
      q.finish_s = t;
      ++finished;
      free_kv += limits.tokens_per_request;
      if (closed && issued < count) {
        req[size_t(issued)].arrival_s = t;
        waiting.push_back(issued++);
      }
    }
    running.swap(still);
  }
  std::vector<double> ttft, tpot;
  double first = INFINITY, last = 0;
  out.measured_from = closed && count >= 2 * in_flight ? in_flight : 0;
  for (size_t i = 0; i < req.size(); ++i) {
    const Request& q = req[i];
    out.requests.push_back({q.arrival_s, q.first_token_s, q.finish_s});
    if (static_cast<int64_t>(i) >= out.measured_from) {
      ttft.push_back(q.first_token_s - q.arrival_s);
      if (w.osl > 1)
        tpot.push_back((q.finish_s - q.first_token_s) / static_cast<double>(w.osl - 1));
    }
    first = std::min(first, q.arrival_s);
    last = std::max(last, q.finish_s);
  }
  out.duration_s = last - first;
  out.output_tokens_per_s =
      out.duration_s > 0 ? static_cast<double>(count * w.osl) / out.duration_s : 0;
  out.mean_batch = out.steps > 0 ? batch_sum / static_cast<double>(out.steps) : 0;
  out.ttft_s = latency_stats(std::move(ttft));
  out.tpot_s = latency_stats(std::move(tpot));
  return out;
}

}  // namespace meshplan::serving
