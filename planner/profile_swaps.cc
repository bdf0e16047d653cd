#include "planner/profile_swaps.h"

namespace meshplan {

Result<ProfileSwaps> ProfileSwaps::parse(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const std::string& s : pairs) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return Diagnostic{{"--profile", 0, 0, ""},
                        "--profile",
                        s,
                        "must be NAME=OTHER, e.g. h100-published=h100-measured"};
    if (!out.emplace(s.substr(0, eq), s.substr(eq + 1)).second)
      return Diagnostic{{"--profile", 0, 0, ""},
                        "--profile",
                        s,
                        "profile " + s.substr(0, eq) + " is swapped twice"};
  }
  return ProfileSwaps(std::move(out));
}

void ProfileSwaps::apply(ClusterSpec& cluster) {
  auto swap = swaps_.find(cluster.profile);
  if (swap == swaps_.end()) return;
  used_.insert(swap->first);
  cluster.profile = swap->second;
}

std::optional<Diagnostic> ProfileSwaps::unused() const {
  for (const auto& [name, other] : swaps_)
    if (!used_.count(name))
      return Diagnostic{{"--profile", 0, 0, ""},
                        "--profile",
                        name + "=" + other,
                        "no run's cluster uses profile " + name};
  return std::nullopt;
}

}  // namespace meshplan
