// Search over serving layouts: tp × pp × ep (× attention-DP for MLA models) × replicas × max
// batch (× weight format with weights_auto) for the GPUs available, ranked by output tokens/s
// per GPU among layouts meeting the SLO (then the others, nearest to it first), with the Pareto
// front of tokens/s per GPU against tokens/s per user.
//
// Candidates: tp a power of two up to one node's GPUs; pp a power of two up to 8 (fewer than
// the layers); ep 1 and, for MoE models, every power of two dividing tp and the expert count;
// replicas = the GPUs / (tp·pp) (every GPU used; tp·pp must divide the GPU count) and, unless
// offline, also 1, 2, 4, … replicas below that (the load is the same whatever the GPUs, so
// fewer GPUs may serve it: ranking by tokens/s per GPU then says how many), then for each
// layout the counts between the most of those that fall short of the load and the fewest that
// meet it, bisected (refine_counts in serving_search.cc: the fewest replicas that meet it, log2
// of the gap more replays, in a fixed order; a disaggregated layout's decode replicas, then its
// prefill workers); for MLA
// models with tp > 1 each of these with and without attention-DP; max batch the engine default
// (capped by what the KV cache holds whole) and 256, 64 and 16 below it; engines that allocate
// the cache as sequences grow (vLLM, SGLang, TensorRT-LLM under MAX_UTILIZATION:
// reserves_whole_request false) also
// run the engine default uncapped, and caps above the cache's, preempting when it is full. A cap
// that replays as another of its layout (never binding, or binding at the same batch) is
// dropped. Layouts whose weights leave no KV room are skipped.
// Enumeration order is fixed, ties keep it: the output is the same on every run. Each layout's
// candidates (and each layout's bisection) replay on one of ServingProblem::threads threads and
// merge in that order, so the output is the same for any thread count.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "serving/serving_plan.h"

namespace meshplan::serving {

struct ServingSearchResult {
  int64_t evaluated = 0;  // layouts replayed
  int64_t skipped = 0;    // layouts whose weights did not fit
  // Disaggregated replays found kept instead of replayed (pool_replay_memo.h; overload checks'
  // offline replays included).
  int64_t replays_reused = 0;
  std::vector<ServingEstimate> ranked;  // best first
  std::vector<size_t> pareto;           // indices into ranked, by tokens/s per user ascending
};

// Engine steps a whole search may replay (search_steps). The same number as the tokens the
// guard counted before (candidates × requests × (isl + osl), which every search's steps stay
// within), so no search it let through is refused. Measured rates, 2026-11-28, two threads,
// 2,000 + 500 tokens, FP8, 1,000 requests unless named: disaggregated 3-12 ns a step (llama3-70b
// on 64 H100s at 20 requests/s, 6.3e8 steps in 1.8 s; on 512 at 10 requests/s 1.8e9 in 9.0 s;
// llama3-8b on 512 2.0e9 in 17.6 s; llama3-70b on 16,384, 200 requests, 9.8e8 in 12.0 s), so up
// to a minute or two at the limit; aggregated 0.7-5 ns (llama3-70b on 512 2.6e8 in 0.8 s,
// deepseek-v3 on 16,384 1.0e9 in 4.8 s; llama4-scout on 4,480 A100s at 0.1 requests/s of
// 3,000-token answers, 300 requests, 1.7e9 in 1.2 s: its replays batch requests).
constexpr double kMaxSearchSteps = 1e10;

// REQUIRES: p.gpus ≥ 1.
std::vector<ServingLayout> serving_candidates(const ServingProblem& p);
// At most the engine steps the search's replays take: the candidates whose weights fit (each
// weight format's) × the requests × each request's steps alone (its answer a step a token, its
// prompt in steps of the engine's step tokens). Replays batch requests into fewer steps; the
// bisected counts and overload checks add some.
double search_steps(const ServingProblem& p);
// A diagnostic when search_steps exceeds kMaxSearchSteps.
std::vector<Diagnostic> check_search_size(const ServingProblem& p);
ServingSearchResult search_serving(const ServingProblem& p);
// The candidates of one weight format (p.options.weights), appended to `r` unsorted.
void search_format(const ServingProblem& p, ServingSearchResult& r);
// Sorts `r.ranked` best first (SLO met, by tokens/s per GPU; then the rest, those keeping up
// with the load first, by the least the SLO would have to loosen for them, then tokens/s per
// GPU) and sets its Pareto front.
void rank_estimates(ServingSearchResult& r);
// Whether any estimate keeps up with its load (is not overloaded).
bool any_keeps_up(const std::vector<ServingEstimate>& estimates);
// Whether any estimate meets the SLO (ServingEstimate::meets_slo).
bool any_meets_slo(const std::vector<ServingEstimate>& estimates);
// How near an estimate that misses the SLO comes to it, nearer first: keeping up with the load
// before falling behind it, then the least the SLO would have to loosen (slo_scale). The
// ranking's order for such estimates, before tokens/s per GPU (rank_estimates).
std::pair<bool, double> slo_nearness(const ServingEstimate& e);
// Indices of the estimates no other beats on both tokens/s per GPU and tokens/s per user,
// leaving out the overloaded ones unless every estimate is.
std::vector<size_t> pareto_front(const std::vector<ServingEstimate>& estimates);

}  // namespace meshplan::serving
