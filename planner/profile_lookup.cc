#include "planner/profile_lookup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/edit_distance.h"
#include "core/profile_merge.h"

namespace meshplan {

namespace {

// Profile names (file stems of *.yaml) in `folders`, for "did you mean".
std::vector<std::string> profile_names(const std::vector<std::string>& folders) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const std::string& dir : folders) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The folders `search` names for cluster `c`, in order, each once.
std::vector<std::string> profile_folders(const ClusterSpec& c, const ProfileSearchPath& search) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  auto add = [&](const fs::path& dir) {
    const std::string d = dir.lexically_normal().string();
    if (!d.empty() && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  for (const std::string& dir : search.first) add(dir);
  if (!c.file.empty()) add(fs::path(c.file).parent_path() / ".." / "profiles");
  for (const std::string& dir : search.last) add(dir);
  return out;
}

// The profile the cluster names, or an empty one when it names none.
Result<CalibrationProfile> cluster_profile(const ClusterSpec& c, const ProfileSearchPath& search) {
  namespace fs = std::filesystem;
  if (c.profile.empty()) {
    CalibrationProfile p;
    p.name = "defaults";
    p.notes.push_back("no calibration profile: every throughput from documented defaults");
    return p;
  }
  const std::vector<std::string> folders = profile_folders(c, search);
  for (const std::string& dir : folders) {
    const fs::path f = fs::path(dir) / (c.profile + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(f, ec)) return load_profile(f.lexically_normal().string());
  }
  return Diagnostic{
      c.profile_where.file.empty() ? SourceLocation{c.file, 0, 0, ""} : c.profile_where, "profile",
      c.profile,
      fmt::format("no such calibration profile (looked for {}.yaml in {}; --profile-dir or "
                  "$MESHPLAN_DATA add a folder){}",
                  c.profile, fmt::join(folders, ", "),
                  did_you_mean(c.profile, profile_names(folders)))};
}

// "H100" of "H100-SXM-80GB": the catalog name's family, lower case.
std::string gpu_family(const std::string& catalog_name) {
  std::string family = catalog_name.substr(0, catalog_name.find('-'));
  for (char& ch : family) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return family;
}

}  // namespace

Result<CalibrationProfile> resolve_profile(const ClusterSpec& c, const std::string& override_path,
                                           const ProfileSearchPath& search,
                                           std::optional<CalibrationProfile>* override_alone) {
  if (override_path.empty()) return cluster_profile(c, search);
  Result<CalibrationProfile> top = load_profile(override_path);
  if (!top || c.profile.empty()) return top;
  if (override_alone) *override_alone = top.value();
  Result<CalibrationProfile> base = cluster_profile(c, search);
  if (!base) return base.errors();
  const std::string name = top->name;
  return merge_profiles({{std::move(base).value(), c.profile + " (the cluster's profile)"},
                         {std::move(top).value(), override_path}},
                        name);
}

// A profile measured across nodes serves a one-node cluster too (its inter-node fits idle); one
// whose fits are all on levels the cluster lacks (a CPU's "socket") prices nothing.
std::optional<std::string> unused_levels_warning(const CalibrationProfile& p, const ClusterSpec& c,
                                                 const std::string& consequence) {
  std::vector<std::string> levels;
  for (const NetworkLevel& l : c.network) levels.push_back(l.name);
  const bool any_used = std::any_of(p.collectives.begin(), p.collectives.end(), [&](const auto& f) {
    return std::find(levels.begin(), levels.end(), f.level) != levels.end();
  });
  if (p.collectives.empty() || any_used) return std::nullopt;
  std::vector<std::string> unmatched;
  for (const CollectiveFit& fit : p.collectives)
    if (std::find(unmatched.begin(), unmatched.end(), fit.level) == unmatched.end())
      unmatched.push_back(fit.level);
  return fmt::format(
      "profile '{}' has collective fits only on network levels the cluster does not have ({}; "
      "the cluster's: {}): {}",
      p.name, fmt::join(unmatched, ", "), fmt::join(levels, ", "), consequence);
}

std::vector<std::string> profile_warnings(const CalibrationProfile& p, const ClusterSpec& c) {
  std::vector<std::string> out;
  if (!p.complete)
    out.push_back(fmt::format(
        "profile '{}' is incomplete (its calibration was stopped early); missing: {}; those "
        "figures come from the defaults or the profile it was merged over",
        p.name,
        p.missing.empty() ? std::string("not recorded")
                          : fmt::format("{}", fmt::join(p.missing, ", "))));
  const std::string& measured_on = p.provenance.gpu;
  std::string lower = measured_on;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string family = gpu_family(c.gpu.name);
  if (!measured_on.empty() && !family.empty() && lower.find(family) == std::string::npos)
    out.push_back(fmt::format(
        "profile '{}' was measured on '{}', but the cluster's GPUs are {}: its GEMM, HBM and "
        "attention figures are not this GPU's",
        p.name, measured_on, c.gpu.name));
  if (std::optional<std::string> w =
          unused_levels_warning(p, c, "every collective is priced from the defaults"))
    out.push_back(*w);
  return out;
}

}  // namespace meshplan
