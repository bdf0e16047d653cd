// `validate --profile NAME=OTHER`: price the runs whose cluster names calibration profile NAME
// with profile OTHER instead (h100-published=h100-measured), for training and serving
// validation alike. Each swap must be used by some run, else it is a typo.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/diagnostic.h"
#include "core/result.h"

namespace meshplan {

class ProfileSwaps {
 public:
  ProfileSwaps() = default;
  // "NAME=OTHER" pairs as given to --profile; an error names the malformed or repeated pair.
  static Result<ProfileSwaps> parse(const std::vector<std::string>& pairs);
  explicit ProfileSwaps(std::map<std::string, std::string> swaps) : swaps_(std::move(swaps)) {}

  // Replaces the cluster's profile name when a swap names it, and remembers that it was used.
  void apply(ClusterSpec& cluster);
  // The first swap no cluster used, as a --profile diagnostic.
  std::optional<Diagnostic> unused() const;

 private:
  std::map<std::string, std::string> swaps_;
  std::set<std::string> used_;
};

}  // namespace meshplan
