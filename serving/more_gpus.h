// How many GPUs an SLO needs, where a search on the GPUs given finds no layout that meets it.
//
// Under a load (a request rate, a total concurrency or a trace's arrivals; not offline, where
// every request waits for its turn whatever the GPUs) more GPUs hold more replicas, each serving
// less of the load: the search runs again on twice the GPUs, then twice again, up to the
// cluster's, and stops at the first on which a layout meets the SLO, where the nearest layout
// comes no nearer than on half as many (the objectives lie below what one replica reaches
// unloaded: more GPUs will not meet them), or where the next search would pass the search-size
// limit (check_search_size).
#pragma once

#include <cstdint>
#include <optional>

#include "serving/serving_search.h"

namespace meshplan::serving {

struct MoreGpus {
  enum class Stop { met, no_nearer, cluster, size_limit };
  Stop stop = Stop::cluster;
  // The GPUs of the last search that ran (met, no_nearer, cluster) or was refused (size_limit).
  int64_t gpus = 0;
  // That search's first row (for size_limit, the last search that ran, if any).
  std::optional<ServingEstimate> best;
};

// Whether `result` (a search's or one layout's) misses `p`'s SLO under a load: an SLO is set,
// the load is not offline, and no layout meets it.
bool misses_slo_under_load(const ServingProblem& p, const ServingSearchResult& result);

// Whether `p` and its search's result `first` call for more GPUs: misses_slo_under_load, on
// fewer GPUs than the cluster has.
bool wants_more_gpus(const ServingProblem& p, const ServingSearchResult& first);
// Whether a search of `p` may call for more GPUs (wants_more_gpus but for its result): such a
// search keeps its layouts' evaluations (ServingProblem::estimate_memo) for the larger ones.
bool may_want_more_gpus(const ServingProblem& p);

// The searches on 2×, 4×, … p.gpus, each taking the evaluations of the layouts the searches
// before it replayed from p's estimate memo (one of its own if p has none). REQUIRES:
// wants_more_gpus(p, first).
MoreGpus search_more_gpus(const ServingProblem& p, const ServingSearchResult& first);

const char* to_string(MoreGpus::Stop stop);

}  // namespace meshplan::serving
