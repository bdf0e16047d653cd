#include "serving/more_gpus.h"

#include <algorithm>
#include <memory>

#include "serving/estimate_memo.h"

namespace meshplan::serving {

namespace {

// An SLO under a load (not offline, where every request waits for its turn whatever the GPUs).
bool slo_under_load(const ServingProblem& p) {
  return p.options.slo.any() && p.workload.load != LoadKind::offline;
}

}  // namespace

bool misses_slo_under_load(const ServingProblem& p, const ServingSearchResult& result) {
  return slo_under_load(p) && !result.ranked.empty() && !any_meets_slo(result.ranked);
}

bool may_want_more_gpus(const ServingProblem& p) {
  return p.gpus < p.cluster.gpus() && slo_under_load(p);
}

bool wants_more_gpus(const ServingProblem& p, const ServingSearchResult& first) {
  return may_want_more_gpus(p) && misses_slo_under_load(p, first);
}

MoreGpus search_more_gpus(const ServingProblem& p, const ServingSearchResult& first) {
  MoreGpus out;
  std::pair<bool, double> nearest = slo_nearness(first.ranked.front());
  ServingProblem q = p;
  if (!q.estimate_memo) q.estimate_memo = std::make_shared<EstimateMemo>();
  while (q.gpus < p.cluster.gpus()) {
    q.gpus = std::min(2 * q.gpus, p.cluster.gpus());
    if (!check_search_size(q).empty()) {
      out.stop = MoreGpus::Stop::size_limit;
      out.gpus = q.gpus;
      return out;
    }
    const ServingSearchResult r = search_serving(q);
    if (r.ranked.empty()) continue;
    out.gpus = q.gpus;
    out.best = r.ranked.front();
    if (out.best->meets_slo) {
      out.stop = MoreGpus::Stop::met;
      return out;
    }
    if (!(slo_nearness(*out.best) < nearest)) {
      out.stop = MoreGpus::Stop::no_nearer;
      return out;
    }
    nearest = slo_nearness(*out.best);
  }
  out.stop = MoreGpus::Stop::cluster;
  return out;
}

const char* to_string(MoreGpus::Stop stop) {
  switch (stop) {
    case MoreGpus::Stop::met:
      return "met";
    case MoreGpus::Stop::no_nearer:
      return "no_nearer";
    case MoreGpus::Stop::cluster:
      return "cluster";
    case MoreGpus::Stop::size_limit:
      return "size_limit";
  }
  return "";
}

}  // namespace meshplan::serving
