#include "serving/more_gpus.h"

#include <algorithm>
#include <utility>

namespace meshplan::serving {
namespace {

// How near `e` comes to the SLO, nearer first: keeping up with the load, then slo_scale (the
// ranking's order for layouts that miss it: rank_estimates).
std::pair<bool, double> nearness(const ServingEstimate& e) { return {e.overloaded, e.slo_scale}; }

}  // namespace

bool wants_more_gpus(const ServingProblem& p, const ServingSearchResult& first) {
  if (!p.options.slo.any() || p.workload.load == LoadKind::offline || first.ranked.empty() ||
      p.gpus >= p.cluster.gpus())
    return false;
  return std::none_of(first.ranked.begin(), first.ranked.end(),
                      [](const ServingEstimate& e) { return e.meets_slo; });
}

MoreGpus search_more_gpus(const ServingProblem& p, const ServingSearchResult& first) {
  MoreGpus out;
  std::pair<bool, double> nearest = nearness(first.ranked.front());
  ServingProblem q = p;
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
    if (!(nearness(*out.best) < nearest)) {
      out.stop = MoreGpus::Stop::no_nearer;
      return out;
    }
    nearest = nearness(*out.best);
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
