#include "planner/profile_defaults.h"

#include <filesystem>

namespace meshplan {

double hbm_bandwidth(const CalibrationProfile& p, const GpuSpec& gpu) {
  return p.hbm_bytes_per_s > 0 ? p.hbm_bytes_per_s : kDefaultHbmEfficiency * gpu.hbm_bytes_per_s;
}

double sustained_compute_ratio(const CalibrationProfile& p) {
  return p.sustained_compute_ratio > 0 ? p.sustained_compute_ratio : 1.0;
}

double fp8_quantization_overhead(const CalibrationProfile& p, const std::string& recipe) {
  auto it = p.fp8_quantization_overhead.find(recipe);
  return it != p.fp8_quantization_overhead.end() ? it->second : 0.0;
}

double attention_efficiency(const CalibrationProfile& p) {
  return p.attention_efficiency > 0 ? p.attention_efficiency : kDefaultAttentionEfficiency;
}

Result<CalibrationProfile> resolve_profile(const ClusterSpec& c, const std::string& override_path) {
  namespace fs = std::filesystem;
  if (!override_path.empty()) return load_profile(override_path);
  if (c.profile.empty()) {
    CalibrationProfile p;
    p.name = "defaults";
    p.notes.push_back("no calibration profile: every throughput from documented defaults");
    return p;
  }
  std::vector<fs::path> candidates;
  if (!c.file.empty()) candidates.push_back(fs::path(c.file).parent_path() / ".." / "profiles");
  candidates.push_back(fs::path(MESHPLAN_PROFILE_DIR));
  for (const fs::path& dir : candidates) {
    fs::path f = dir / (c.profile + ".yaml");
    std::error_code ec;
    if (fs::exists(f, ec)) return load_profile(f.lexically_normal().string());
  }
  return Diagnostic{
      c.profile_where.file.empty() ? SourceLocation{c.file, 0, 0, ""} : c.profile_where, "profile",
      c.profile,
      "no such calibration profile (looked in ../profiles/ beside the cluster file "
      "and in " MESHPLAN_PROFILE_DIR ")"};
}

}  // namespace meshplan
