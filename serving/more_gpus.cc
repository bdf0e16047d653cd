#include "serving/more_gpus.h"

#include <algorithm>
#include <memory>

#include "serving/estimate_memo.h"

namespace meshplan::serving {

bool misses_slo_under_load(const ServingProblem& p, const ServingSearchResult& result) {
  return p.options.slo.any() && p.workload.load != LoadKind::offline && !result.ranked.empty() &&
         !any_meets_slo(result.ranked);
}

bool wants_more_gpus(const ServingProblem& p, const ServingSearchResult& first) {
  return p.gpus < p.cluster.gpus() && misses_slo_under_load(p, first);
}

bool may_want_more_gpus(const ServingProblem& p) {
  return p.gpus < p.cluster.gpus() && p.options.slo.any() && p.workload.load != LoadKind::offline;
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
