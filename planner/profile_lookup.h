// How a cluster finds its calibration profile (and what makes one suspect for it). The numbers
// a profile lacks are resolved, with their defaults, in planner/calibration.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/profile.h"
#include "core/result.h"

namespace meshplan {

// Folders holding profiles (<name>.yaml), searched for a cluster's `profile: <name>` in order:
// `first` (the CLI's --profile-dir, then $MESHPLAN_DATA/profiles), the profiles/ folder beside
// the cluster file's folder (<cluster dir>/../profiles), then `last` (the installed
// share/meshplan/profiles, the source tree's profiles/). The caller knows where those are; no
// library has a path built in.
struct ProfileSearchPath {
  std::vector<std::string> first, last;
};

// The profile for a cluster: the cluster's `profile:` name, looked up along `search`, else an
// empty profile (every number from the defaults above, said in notes). `override_path`
// (--profile) is merged over it section by section (core/profile_merge.h: an imported two-GPU
// NCCL log replaces only that collective's fit, a one-node GEMM calibration only the GEMMs), its
// provenance saying which sections came from which file; with no cluster profile it is taken
// alone. Where it is merged, `override_alone` (if given) receives the override file as read,
// so that no caller reads it twice (a calibrated profile holds thousands of samples).
Result<CalibrationProfile> resolve_profile(
    const ClusterSpec& c, const std::string& override_path, const ProfileSearchPath& search,
    std::optional<CalibrationProfile>* override_alone = nullptr);

// What makes a profile suspect for a cluster, one sentence each: an interrupted calibration
// (complete: false, with what is missing), measured on another GPU
// (the cluster's catalog family, "H100" of H100-SXM-80GB, is not in the profile's GPU name),
// collective fits only on network levels the cluster does not have.
std::vector<std::string> profile_warnings(const CalibrationProfile& p, const ClusterSpec& c);
// The last of those alone, ending in `consequence` ("every collective is priced from the
// defaults"); nullopt when some fit is on one of the cluster's levels, or there are none. The
// CLI also asks it of a --profile file before the merge, whose fits the cluster's profile would
// otherwise hide.
std::optional<std::string> unused_levels_warning(const CalibrationProfile& p, const ClusterSpec& c,
                                                 const std::string& consequence);

}  // namespace meshplan
