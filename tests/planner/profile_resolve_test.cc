// --profile merged over the cluster's profile section by section, and the warnings that say a
// profile does not fit the cluster (issue 14: imported profiles replaced the whole profile and a
// CPU profile priced an H100 cluster without a word).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "planner/profile_lookup.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

CalibrationProfile shipped_profile(const std::string& name) {
  Result<CalibrationProfile> p =
      load_profile(std::string(MESHPLAN_SOURCE_DIR) + "/profiles/" + name + ".yaml");
  REQUIRE(p.ok());
  return p.value();
}

}  // namespace

TEST_CASE("--profile replaces only the sections it has, the cluster's profile keeps the rest") {
  const ClusterSpec cluster = shipped_cluster("dgx-h100-1n");  // profile: h100-published
  const CalibrationProfile published = shipped_profile("h100-published");
  CalibrationProfile gemm_only;
  gemm_only.name = "one-node-gemm";
  gemm_only.provenance.gpu = "NVIDIA H100 80GB HBM3";
  gemm_only.gemm["bf16"] = GemmTable{"bf16", 0.7, 0, {}};
  const std::string path = write_temp("meshplan-gemm-only.yaml", render_profile_yaml(gemm_only));
  Result<CalibrationProfile> merged = resolve_profile(cluster, path, ProfileSearchPath{});
  REQUIRE(merged.ok());
  CHECK(merged->name == "one-node-gemm");
  CHECK(merged->gemm.at("bf16").max_efficiency == 0.7);
  CHECK(merged->hbm_bytes_per_s == published.hbm_bytes_per_s);
  CHECK(merged->collectives.size() == published.collectives.size());
  CHECK(merged->attention.size() == published.attention.size());
  bool credited = false;
  for (const std::string& s : merged->provenance.sources)
    credited = credited || s == "merged: gemm bf16 from " + path + " (published)";
  CHECK(credited);
  // Without --profile, the cluster's own profile, unmerged.
  Result<CalibrationProfile> own = resolve_profile(cluster, "", ProfileSearchPath{});
  REQUIRE(own.ok());
  CHECK(own->name == published.name);
  CHECK(own->gemm.at("bf16").max_efficiency == published.gemm.at("bf16").max_efficiency);
  std::filesystem::remove(path);
}

TEST_CASE("profile warnings: another GPU, collective fits on no level of the cluster") {
  const ClusterSpec h100 = shipped_cluster("dgx-h100-1n");
  CHECK(profile_warnings(shipped_profile("h100-measured"), h100).empty());  // "NVIDIA H100 ..."
  CHECK(profile_warnings(shipped_profile("h100-published"), h100).empty());
  CHECK(profile_warnings(shipped_profile("a100-published"), h100) ==
        std::vector<std::string>{
            "profile 'a100-published' was measured on 'A100-SXM-80GB', but the cluster's GPUs "
            "are H100-SXM-80GB: its GEMM, HBM and attention figures are not this GPU's"});
  CalibrationProfile cpu;
  cpu.name = "measured";
  cpu.provenance.gpu = "cpu: AMD EPYC (2 threads)";
  CollectiveFit fit;
  fit.collective = "all_reduce";
  fit.level = "socket";
  fit.group_size = 2;
  cpu.collectives.push_back(fit);
  CHECK(profile_warnings(cpu, h100) ==
        std::vector<std::string>{
            "profile 'measured' was measured on 'cpu: AMD EPYC (2 threads)', but the cluster's "
            "GPUs are H100-SXM-80GB: its GEMM, HBM and attention figures are not this GPU's",
            "profile 'measured' has collective fits only on network levels the cluster does not "
            "have (socket; the cluster's: nvlink): every collective is priced from the "
            "defaults"});
}

TEST_CASE("profile warnings: an interrupted calibration says what it is missing") {
  CalibrationProfile p = shipped_profile("h100-measured");
  p.complete = false;
  p.missing = {"gemm fp8", "collectives all_reduce x8 (measured)"};
  CHECK(profile_warnings(p, shipped_cluster("dgx-h100-1n")) ==
        std::vector<std::string>{
            "profile 'h100-measured' is incomplete (its calibration was stopped early); missing: "
            "gemm fp8, collectives all_reduce x8 (measured); those figures come from the defaults "
            "or the profile it was merged over"});
}

namespace {

// A folder `dir` holding `<stem>.yaml`, a profile named `name` inside.
void write_profile_in(const std::filesystem::path& dir, const std::string& stem,
                      const std::string& name) {
  std::filesystem::create_directories(dir);
  CalibrationProfile p;
  p.name = name;
  p.hbm_bytes_per_s = 1e12;
  std::ofstream(dir / (stem + ".yaml")) << render_profile_yaml(p);
}

}  // namespace

TEST_CASE("the cluster's profile is looked up along the search path: first, beside, last") {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / (std::to_string(::getpid()) + "-meshplan-profile-search");
  fs::remove_all(root);
  ClusterSpec cluster = shipped_cluster("dgx-h100-1n");
  cluster.profile = "site";
  cluster.file = (root / "topologies" / "c.yaml").string();  // no profiles/ beside it
  write_profile_in(root / "late", "site", "late");
  ProfileSearchPath search{{(root / "early").string()}, {(root / "late").string()}};
  // Only the last folder has it.
  Result<CalibrationProfile> late = resolve_profile(cluster, "", search);
  REQUIRE(late.ok());
  CHECK(late->name == "late");
  // The profiles/ folder beside the cluster's folder comes before `last`...
  write_profile_in(root / "profiles", "site", "beside");
  Result<CalibrationProfile> beside = resolve_profile(cluster, "", search);
  REQUIRE(beside.ok());
  CHECK(beside->name == "beside");
  // ...and `first` (--profile-dir, $MESHPLAN_DATA) before both.
  write_profile_in(root / "early", "site", "early");
  Result<CalibrationProfile> early = resolve_profile(cluster, "", search);
  REQUIRE(early.ok());
  CHECK(early->name == "early");
  fs::remove_all(root);
}

TEST_CASE("a profile name found nowhere lists every folder searched and the closest name") {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / (std::to_string(::getpid()) + "-meshplan-profile-missing");
  fs::remove_all(root);
  write_profile_in(root / "late", "site-h100", "site-h100");
  ClusterSpec cluster = shipped_cluster("dgx-h100-1n");
  cluster.profile = "site-h10";
  cluster.file = (root / "topologies" / "c.yaml").string();
  cluster.profile_where = SourceLocation{cluster.file, 5, 10, "profile: site-h10"};
  Result<CalibrationProfile> missing = resolve_profile(
      cluster, "", ProfileSearchPath{{(root / "early").string()}, {(root / "late").string()}});
  REQUIRE(!missing.ok());
  const Diagnostic& d = missing.errors().front();
  CHECK(d.where.line == 5);
  CHECK(d.field == "profile");
  CHECK(d.rule == "no such calibration profile (looked for site-h10.yaml in " +
                      (root / "early").string() + ", " + (root / "profiles").string() + ", " +
                      (root / "late").string() +
                      "; --profile-dir or $MESHPLAN_DATA add a folder) (did you mean "
                      "'site-h100'?)");
  fs::remove_all(root);
}
