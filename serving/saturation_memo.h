// One replica's offline replay kept across the layouts of a search. A layout's saturation rate
// (saturation_requests_per_s) is the requests one replica replays offline over their duration,
// times the replicas, and that replay does not depend on how many replicas there are: a search
// that checks every replica count of a layout for overload replays it once. Shared by the
// search's threads; every value is a pure function of its key, so what a thread finds is what it
// would have computed.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "serving/serving_options.h"

namespace meshplan::serving {

struct OfflineReplay {
  int64_t requests = 0;
  double duration_s = 0;
};

class SaturationMemo {
 public:
  // The offline replay of one replica of `layout` (an aggregated layout, max batch resolved;
  // its replica count aside) with `requests` requests, if kept.
  std::optional<OfflineReplay> find(const ServingLayout& layout, int64_t requests) const;
  void keep(const ServingLayout& layout, int64_t requests, const OfflineReplay& replay);

 private:
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, int64_t>;
  static Key key(const ServingLayout& layout, int64_t requests);

  mutable std::mutex mutex_;
  std::map<Key, OfflineReplay> kept_;
};

}  // namespace meshplan::serving
