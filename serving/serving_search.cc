#include "serving/serving_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "core/parallel_for.h"
#include "serving/engine_preset.h"
#include "serving/estimate_memo.h"
#include "serving/request_replay.h"

namespace meshplan::serving {
namespace {

constexpr int64_t kMaxPipelineStages = 8;
const int64_t kBatchCaps[] = {256, 64, 16};

// Batch caps tried beside the engine default: the engine's own default, uncapped by the cache,
// where the engine preempts (serving_search.h), then kBatchCaps.
std::vector<int64_t> batch_caps(const ServingProblem& p) {
  std::vector<int64_t> caps;
  const EnginePreset& engine = engine_preset(p.options.engine);
  if (!reserves_whole_request(p.options)) caps.push_back(engine.max_batch);
  caps.insert(caps.end(), std::begin(kBatchCaps), std::end(kBatchCaps));
  // An engine that refuses a cap above the step's tokens is not offered one.
  if (batch_within_step_tokens(p.options.engine))
    std::erase_if(caps, [&](int64_t cap) { return cap > step_tokens(p.options); });
  return caps;
}

// Layouts that meet the SLO first, by tokens/s per GPU; then those that miss it, the nearest
// first: keeping up with the load before falling behind it, then the least the SLO would have
// to loosen for them (ServingEstimate::slo_scale: a layout 5% over the objective is a nearer
// answer than one 20% over, whatever their tokens/s per GPU), then tokens/s per GPU.
bool better(const ServingEstimate& a, const ServingEstimate& b) {
  if (a.meets_slo != b.meets_slo) return a.meets_slo;
  if (!a.meets_slo && slo_nearness(a) != slo_nearness(b)) return slo_nearness(a) < slo_nearness(b);
  return a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu;
}

// Powers of two below `most`, then `most` itself (REQUIRES: most ≥ 1).
std::vector<int64_t> counts_up_to(int64_t most) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n < most; n *= 2) out.push_back(n);
  out.push_back(most);
  return out;
}

// Replica counts tried for tp·pp GPUs each: every GPU, and under a load that does not grow with
// the GPUs (a request rate or a total concurrency) also 1, 2, 4, … below that, so the ranking
// by tokens/s per GPU can answer with fewer GPUs. A total concurrency of c keeps at most c
// replicas busy: no more are tried (more would replay as c busy ones and serve the same at
// fewer tokens/s per GPU: serving_plan.cc, busy_copies).
std::vector<int64_t> replica_counts(const ServingProblem& p, int64_t replica_gpus) {
  int64_t most = p.gpus / replica_gpus;
  if (p.workload.load == LoadKind::offline) return {most};
  if (p.workload.load == LoadKind::concurrency)
    most = std::clamp<int64_t>(static_cast<int64_t>(std::floor(p.workload.concurrency)), 1, most);
  return counts_up_to(most);
}

// Disaggregated splits of the GPUs: prefill workers of prefill_tp GPUs (a power of two within a
// node, dividing into min(ep, prefill_tp) expert groups), 1, 2, 4, … of them, and the decode
// layout `decode` replicated into the GPUs left (1, 2, 4, … or all of them). Engine-default
// max batch only.
void add_disaggregated(const ServingProblem& p, const ServingLayout& decode,
                       std::vector<ServingLayout>& out) {
  for (int64_t ptp = 1; ptp <= p.cluster.gpus_per_node; ptp *= 2) {
    ServingLayout smallest = decode;  // one prefill worker beside one decode replica
    smallest.prefill_tp = ptp;
    smallest.prefill_replicas = 1;
    if (smallest.gpus() > p.gpus) break;
    if (!check_serving_layout(p, smallest).empty()) continue;  // the worker's expert split
    for (int64_t workers : counts_up_to((p.gpus - decode.replica_gpus()) / ptp))
      for (int64_t replicas : counts_up_to((p.gpus - workers * ptp) / decode.replica_gpus())) {
        ServingLayout l = decode;
        l.replicas = replicas;
        l.prefill_tp = ptp;
        l.prefill_replicas = workers;
        out.push_back(l);
      }
  }
}

}  // namespace

std::vector<ServingLayout> serving_candidates(const ServingProblem& p) {
  std::vector<ServingLayout> out;
  const int64_t node = p.cluster.gpus_per_node;
  for (int64_t tp = 1; tp <= std::min(node, p.gpus); tp *= 2)
    for (int64_t pp = 1; pp <= kMaxPipelineStages && pp <= p.model.layers && tp * pp <= p.gpus;
         pp *= 2) {
      if (p.gpus % (tp * pp) != 0) continue;
      std::vector<int64_t> eps{1};
      if (p.model.moe)
        for (int64_t ep = 2; ep <= tp; ep *= 2)
          if (tp % ep == 0 && p.model.moe->experts % ep == 0 &&
              engine_splits_experts(p.options.engine, tp, ep))
            eps.push_back(ep);
      // Attention-DP for MLA models (their latent cache is otherwise replicated tp ways). One
      // replica's splits the engine runs (split_refusal), whatever the replica count.
      const int adp_choices = p.model.mla && tp > 1 ? 2 : 1;
      std::vector<ServingLayout> replicas_of;
      for (int adp = 0; adp < adp_choices; ++adp)
        for (int64_t ep : eps)
          if (const ServingLayout one{tp, pp, ep, 1, 0, adp == 1}; split_refusal(p, one).empty())
            replicas_of.push_back(one);
      if (p.options.search_disaggregated)
        for (const ServingLayout& one : replicas_of) add_disaggregated(p, one, out);
      for (int64_t replicas : replica_counts(p, tp * pp))
        for (ServingLayout l : replicas_of) {
          l.replicas = replicas;
          out.push_back(l);
          for (int64_t cap : batch_caps(p)) {
            l.max_batch = cap;
            out.push_back(l);
          }
        }
    }
  return out;
}

double search_steps(const ServingProblem& p) {
  double fitting = 0;
  for (const ServingProblem& v : problem_variants(p))
    for (ServingLayout l : serving_candidates(v)) fitting += resolved_memory(v, l).fits() ? 1 : 0;
  const double prompt_steps =
      std::ceil(static_cast<double>(p.workload.isl) / static_cast<double>(step_tokens(p.options)));
  return fitting * static_cast<double>(replay_request_count(p.workload)) *
         (static_cast<double>(p.workload.osl) + prompt_steps);
}

std::vector<Diagnostic> check_search_size(const ServingProblem& p) {
  const double steps = search_steps(p);
  if (steps <= kMaxSearchSteps) return {};
  return {Diagnostic{{"--requests", 0, 0, ""},
                     "requests",
                     std::to_string(replay_request_count(p.workload)),
                     fmt::format("the search would replay up to {:.3g} engine steps (layouts "
                                 "that fit × requests × their steps), beyond the {:.0f} it "
                                 "handles; give --layout, fewer --gpus or fewer requests",
                                 steps, kMaxSearchSteps)}};
}

std::pair<bool, double> slo_nearness(const ServingEstimate& e) {
  return {e.overloaded, e.slo_scale};
}

bool any_meets_slo(const std::vector<ServingEstimate>& e) {
  return std::any_of(e.begin(), e.end(), [](const ServingEstimate& x) { return x.meets_slo; });
}

bool any_keeps_up(const std::vector<ServingEstimate>& e) {
  return std::any_of(e.begin(), e.end(), [](const ServingEstimate& x) { return !x.overloaded; });
}

std::vector<size_t> pareto_front(const std::vector<ServingEstimate>& e) {
  // Overloaded layouts offer no trade-off (their latency grows without bound): they take part
  // only when every layout is overloaded.
  const bool some_keep_up = any_keeps_up(e);
  auto counted = [&](size_t i) { return !some_keep_up || !e[i].overloaded; };
  std::vector<size_t> front;
  for (size_t i = 0; i < e.size(); ++i) {
    if (!counted(i)) continue;
    bool dominated = false;
    for (size_t j = 0; j < e.size() && !dominated; ++j)
      dominated = j != i && counted(j) &&
                  e[j].output_tokens_per_s_per_gpu >= e[i].output_tokens_per_s_per_gpu &&
                  e[j].tokens_per_s_per_user >= e[i].tokens_per_s_per_user &&
                  (e[j].output_tokens_per_s_per_gpu > e[i].output_tokens_per_s_per_gpu ||
                   e[j].tokens_per_s_per_user > e[i].tokens_per_s_per_user || j < i);
    if (!dominated) front.push_back(i);
  }
  std::stable_sort(front.begin(), front.end(), [&](size_t a, size_t b) {
    return e[a].tokens_per_s_per_user < e[b].tokens_per_s_per_user;
  });
  return front;
}

ServingSearchResult search_serving(const ServingProblem& problem) {
  ServingSearchResult r;
  for (const ServingProblem& p : problem_variants(problem)) search_format(p, r);
  rank_estimates(r);
  return r;
}

void rank_estimates(ServingSearchResult& r) {
  std::stable_sort(r.ranked.begin(), r.ranked.end(), better);
  r.pareto = pareto_front(r.ranked);
}

// Whether a capped layout replayed exactly as its uncapped one (the cap never bound).
bool same_replay(const ServingEstimate& a, const ServingEstimate& b) {
  return a.output_tokens_per_s == b.output_tokens_per_s &&
         a.replay.ttft_s.mean == b.replay.ttft_s.mean &&
         a.replay.tpot_s.mean == b.replay.tpot_s.mean;
}

// The batch a layout runs at most: its max batch, but never more than the requests one replica
// has in flight in the replay (a closed loop's share; a cap above them binds nothing).
int64_t binding_batch(const ServingProblem& p, const ServingLayout& l, int64_t max_batch) {
  return std::min(max_batch,
                  requests_in_flight(replica_workload(p.workload, l.replicas), max_batch));
}

namespace {

// One layout the search replayed: the layout as asked (its max batch before the cache resolves
// it), whether it met the load (ServingEstimate::meets_slo) and where its estimate is among
// those kept (-1: dropped as a repeat of the uncapped layout's replay).
struct Probe {
  ServingLayout asked;
  bool meets = false;
  int64_t ranked = -1;
};

// What one unit of the search's work replayed: the estimates it keeps, in order, and a probe
// for each layout (its `ranked` indexing `estimates` until merged).
struct Replays {
  std::vector<ServingEstimate> estimates;
  std::vector<Probe> probes;
  int64_t evaluated = 0, skipped = 0;
};

// evaluate_serving's answer for `l`, kept without its requests' times, which every use after
// the evaluation re-replays (the load curve, a trace): 1,000 requests of each of mixtral's
// 16,384 disaggregated layouts on 16,384 GPUs held some 650 MB. From p's estimate memo where a
// search on fewer GPUs replayed it.
std::optional<ServingEstimate> evaluated(const ServingProblem& p, const ServingLayout& l) {
  if (p.estimate_memo)
    if (std::optional<std::optional<ServingEstimate>> kept = p.estimate_memo->find(p.options, l))
      return *kept;
  std::optional<ServingEstimate> e = evaluate_serving(p, l);
  if (e) std::vector<RequestTimes>().swap(e->replay.requests);  // freed: `= {}` keeps the capacity
  if (p.estimate_memo) p.estimate_memo->keep(p.options, l, e);
  return e;
}

// Replays `l` into `out`, keeping its estimate unless it is capped and replays exactly as
// `uncapped` (the same layout without a cap, or nullptr). Returns the probe, or nullptr when `l`
// does not fit.
const Probe* probe(const ServingProblem& p, const ServingLayout& l, const ServingEstimate* uncapped,
                   Replays& out) {
  std::optional<ServingEstimate> e = evaluated(p, l);
  ++out.evaluated;
  if (!e) return nullptr;
  Probe q{l, e->meets_slo, -1};
  if (!uncapped || !same_replay(*e, *uncapped)) {
    q.ranked = static_cast<int64_t>(out.estimates.size());
    out.estimates.push_back(std::move(*e));
  }
  out.probes.push_back(q);
  return &out.probes.back();
}

// Appends each unit's replays to `r` and its probes to `probes`, in the units' order.
void merge(std::vector<Replays>& units, std::vector<Probe>& probes, ServingSearchResult& r) {
  for (Replays& u : units) {
    const auto base = static_cast<int64_t>(r.ranked.size());
    for (ServingEstimate& e : u.estimates) r.ranked.push_back(std::move(e));
    for (Probe q : u.probes) {
      if (q.ranked >= 0) q.ranked += base;
      probes.push_back(q);
    }
    r.evaluated += u.evaluated;
    r.skipped += u.skipped;
  }
}

// The candidates of one layout: the engine default first, then its batch caps (the order
// serving_candidates gives them in), as [begin, end) of the candidates.
std::vector<std::pair<size_t, size_t>> layout_runs(const std::vector<ServingLayout>& candidates) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].max_batch == 0 || runs.empty())
      runs.emplace_back(i, i + 1);
    else
      runs.back().second = i + 1;
  return runs;
}

// Replays one layout's candidates: the engine default, then each cap that binds at a batch not
// yet replayed (a cap at or above what the cache holds whole runs as the default where the
// engine reserves whole requests; where it preempts it runs as asked), dropping a capped replay
// that repeats the default's.
Replays replay_layout(const ServingProblem& p, const ServingLayout* first,
                      const ServingLayout* last) {
  Replays out;
  const bool preempts = !reserves_whole_request(p.options);
  ServingLayout by_default = *first;
  by_default.max_batch = 0;
  const ServingMemory m = resolved_memory(p, by_default);
  if (!m.fits()) {
    ++out.skipped;
    return out;
  }
  int64_t uncapped = -1;       // index in out.estimates of the default's replay, or -1
  std::vector<int64_t> tried;  // binding batches replayed
  for (const ServingLayout* l = first; l != last; ++l) {
    if (l->max_batch > 0) {
      if (!preempts && l->max_batch >= by_default.max_batch) continue;
      const int64_t batch = binding_batch(p, *l, l->max_batch);
      if (batch == binding_batch(p, *l, by_default.max_batch) ||
          std::find(tried.begin(), tried.end(), batch) != tried.end())
        continue;
      tried.push_back(batch);
    }
    const ServingEstimate* plain =
        l->max_batch > 0 && uncapped >= 0 ? &out.estimates[static_cast<size_t>(uncapped)] : nullptr;
    const Probe* q = probe(p, *l, plain, out);
    if (q && l->max_batch == 0) uncapped = q->ranked;
  }
  return out;
}

// A count of a layout the search bisects: its replicas (aggregated or a disaggregated layout's
// decode replicas) or a disaggregated layout's prefill workers.
using CountField = int64_t ServingLayout::*;

// Whether `a` and `b` are the same layout but for the count `f` (any value of it).
bool same_but(const ServingLayout& a, const ServingLayout& b, CountField f) {
  ServingLayout x = a, y = b;
  x.*f = 0;
  y.*f = 0;
  return x.tp == y.tp && x.pp == y.pp && x.ep == y.ep && x.replicas == y.replicas &&
         x.max_batch == y.max_batch && x.attention_dp == y.attention_dp &&
         x.prefill_tp == y.prefill_tp && x.prefill_replicas == y.prefill_replicas;
}

// The kept estimate of `l` (as asked) among `probes`, or nullptr.
const ServingEstimate* kept_estimate(const std::vector<Probe>& probes, const ServingLayout& l,
                                     const ServingSearchResult& r) {
  for (const Probe& q : probes)
    if (same_but(q.asked, l, &ServingLayout::replicas) && q.asked.replicas == l.replicas)
      return q.ranked >= 0 ? &r.ranked[static_cast<size_t>(q.ranked)] : nullptr;
  return nullptr;
}

// Bisects the count `f` of the layout `key` between the most of `probes` that falls short of
// the load (SLO missed or overloaded) and the fewest that meets it: more replicas (or prefill
// workers) share a fixed load among more engines, so the fewest that meet it (the most tokens/s
// per GPU of that layout) is found with log2 of the gap more replays. A capped layout replaying
// as its uncapped one at the same count (among `probes`) is not kept, as in the search.
Replays bisect(const ServingProblem& p, const ServingLayout& key, CountField f,
               const std::vector<Probe>& probes, const ServingSearchResult& r) {
  Replays out;
  int64_t fail = 0, pass = 0;  // the most short of the load, the fewest meeting it
  for (const Probe& q : probes)
    if (same_but(q.asked, key, f) && q.meets && (pass == 0 || q.asked.*f < pass)) pass = q.asked.*f;
  for (const Probe& q : probes)
    if (same_but(q.asked, key, f) && !q.meets && q.asked.*f < pass)
      fail = std::max(fail, q.asked.*f);
  while (fail > 0 && pass - fail > 1) {
    ServingLayout l = key;
    l.*f = fail + (pass - fail) / 2;
    ServingLayout uncapped = l;
    uncapped.max_batch = 0;
    const Probe* q =
        probe(p, l, l.max_batch > 0 ? kept_estimate(probes, uncapped, r) : nullptr, out);
    if (!q) break;
    (q->meets ? pass : fail) = l.*f;
  }
  return out;
}

// Bisects the count `f` of every layout among `probes` whose max batch is the engine default
// (`capped` false) or a cap (true), each layout on its own, `threads` at a time; the new
// replays join `r` and `probes` in the layouts' order.
void bisect_all(const ServingProblem& p, CountField f, bool capped, std::vector<Probe>& probes,
                ServingSearchResult& r) {
  std::vector<ServingLayout> keys;
  for (const Probe& q : probes) {
    if ((q.asked.max_batch > 0) != capped) continue;
    if (f == &ServingLayout::prefill_replicas && !q.asked.disaggregated()) continue;
    if (std::none_of(keys.begin(), keys.end(),
                     [&](const ServingLayout& k) { return same_but(k, q.asked, f); }))
      keys.push_back(q.asked);
  }
  std::vector<Replays> units(keys.size());
  parallel_for(keys.size(), p.threads,
               [&](size_t i) { units[i] = bisect(p, keys[i], f, probes, r); });
  merge(units, probes, r);
}

// Under a load that does not grow with the GPUs the candidates hold 1, 2, 4, … replicas of each
// layout (and of a disaggregated layout's prefill workers); the counts between are bisected,
// the replicas first (the engine-default batches, then the caps, which compare with them),
// then the prefill workers beside each decode replica count found. llama3-70b at 20
// requests/s (2,000 + 500 tokens, TTFT ≤ 1 s, TPOT ≤ 33 ms) meets on 6 tp4 replicas where the
// powers of two said 8.
void refine_counts(const ServingProblem& p, std::vector<Probe>& probes, ServingSearchResult& r) {
  bisect_all(p, &ServingLayout::replicas, false, probes, r);
  bisect_all(p, &ServingLayout::replicas, true, probes, r);
  bisect_all(p, &ServingLayout::prefill_replicas, false, probes, r);
}

}  // namespace

void search_format(const ServingProblem& asked, ServingSearchResult& r) {
  ServingProblem p = asked;  // with its own memo: the replays it keeps are this format's
  p.saturation_memo = std::make_shared<SaturationMemo>();
  if (p.reuse_pool_replays) p.pool_replay_memo = std::make_shared<PoolReplayMemo>();
  const std::vector<ServingLayout> candidates = serving_candidates(p);
  const std::vector<std::pair<size_t, size_t>> runs = layout_runs(candidates);
  std::vector<Replays> units(runs.size());
  parallel_for(runs.size(), p.threads, [&](size_t i) {
    units[i] = replay_layout(p, &candidates[runs[i].first], &candidates[runs[i].second]);
  });
  std::vector<Probe> probes;
  merge(units, probes, r);
  if (p.workload.load != LoadKind::offline) refine_counts(p, probes, r);
  if (p.pool_replay_memo) r.replays_reused += p.pool_replay_memo->hits();
}

}  // namespace meshplan::serving
