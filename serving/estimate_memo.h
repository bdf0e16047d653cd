// Layouts' evaluations kept across searches of one problem on different GPU counts.
//
// "How many GPUs" (more_gpus.h) searches again on 2×, 4×, … the GPUs; every layout of a smaller
// search is a candidate of the larger one, and its evaluation does not depend on the GPUs
// available (only whether it may run does), so each search asks the memo before it replays a
// layout and keeps what it replays. Keyed by the layout as the search asks for it (its batch cap
// unresolved) and the variant evaluated (weight format, SGLang's mixed chunk); a layout that does
// not fit is kept as such. Shared by the search's threads; every value is a pure function of its
// key, so a search finds what it would have computed, and its output is the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "serving/serving_plan.h"

namespace meshplan::serving {

class EstimateMemo {
 public:
  // The evaluation of `layout` under `options`' weight format and mixed chunk, if kept (an empty
  // optional inside: the layout does not fit).
  std::optional<std::optional<ServingEstimate>> find(const ServingOptions& options,
                                                     const ServingLayout& layout) const;
  void keep(const ServingOptions& options, const ServingLayout& layout,
            const std::optional<ServingEstimate>& estimate);
  int64_t hits() const;

 private:
  using Key =
      std::tuple<int, bool, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int64_t, int64_t>;
  static Key key(const ServingOptions& options, const ServingLayout& layout);

  mutable std::mutex mutex_;
  mutable int64_t hits_ = 0;
  std::map<Key, std::optional<ServingEstimate>> kept_;
};

}  // namespace meshplan::serving
