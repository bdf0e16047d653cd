// `mpirun -np 2 meshplan calibrate --backend cpu`: the multi-process path of calibration end to
// end on any machine (issue 15): two ranks, the MPI module's collectives, rank 0's profile.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_meshplan.h"
#include "core/profile.h"

namespace meshplan {
namespace {

// Two processes on this host. Open MPI refuses root unless told (CI runs as root), and a
// machine with one core needs --oversubscribe for two ranks.
testing::Run mpirun_two(const std::string& args) {
  return testing::run_shell(
      std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '") +
      MESHPLAN_MPIEXEC + "' -np 2 --oversubscribe '" + MESHPLAN_BINARY + "' " + args);
}

// A collective whose timings admit no α-β fit is listed as missing with its samples instead
// (calibration_run.cc): a loaded host can time small messages slower than large ones. The
// entries of `p.missing` that say so.
std::vector<std::string> unfitted(const CalibrationProfile& p) {
  std::vector<std::string> out;
  for (const std::string& m : p.missing)
    if (m.rfind("collectives ", 0) == 0 && m.find(": no fit, ") != std::string::npos)
      out.push_back(m);
  return out;
}

TEST_CASE("two MPI ranks on the cpu backend measure every collective between them") {
  const std::filesystem::path out = std::filesystem::temp_directory_path() /
                                    (std::to_string(::getpid()) + "-meshplan-mpi-calibration.yaml");
  std::filesystem::remove(out);
  const testing::Run run =
      mpirun_two("calibrate --backend cpu --quick --nccl --out '" + out.string() + "'");
  INFO(run.err);
  REQUIRE(run.rc == 0);
  // Rank 0 alone reports and writes.
  CHECK(run.err.find("wrote " + out.string()) != std::string::npos);
  CHECK(run.err.find("wrote") == run.err.rfind("wrote"));
  auto profile = load_profile(out.string());
  REQUIRE_MESSAGE(profile.ok(), (profile.ok() ? "" : format_diagnostics(profile.errors())));
  const std::vector<std::string> no_fit = unfitted(*profile);
  CHECK(profile->complete == no_fit.empty());
  CHECK(profile->provenance.gpu_count == 2);
  CHECK(profile->provenance.nodes == 1);
  CHECK(profile->provenance.sources.back().find("MPI collectives") != std::string::npos);
  // The calibrated collectives at the one group size, on one host, in order (each fitted or
  // listed without a fit); quick sizes 8 B to 1 MiB by factors of 8: 8, 64, 512, 4 Ki, 32 Ki,
  // 256 Ki.
  REQUIRE(profile->collectives.size() + no_fit.size() == 5);
  for (const std::string& m : no_fit) {
    CHECK(m.find(" x2 (measured): no fit, ") != std::string::npos);
    CHECK(m.find("(samples: 8 B ") != std::string::npos);
    CHECK(m.find(", 262144 B ") != std::string::npos);
    CHECK(m.find("failed") == std::string::npos);
  }
  const char* kinds[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};
  size_t next = 0;
  for (const char* kind : kinds) {
    CAPTURE(kind);
    const bool listed = std::any_of(no_fit.begin(), no_fit.end(), [&](const std::string& m) {
      return m.rfind(std::string("collectives ") + kind + " x2", 0) == 0;
    });
    if (listed) continue;
    REQUIRE(next < profile->collectives.size());
    const CollectiveFit& fit = profile->collectives[next++];
    CHECK(fit.collective == kind);
    CHECK(fit.group_size == 2);
    CHECK(fit.level == "host");
    CHECK(fit.source == "measured");
    REQUIRE(fit.samples.size() == 6);
    CHECK(fit.samples.front().bytes == 8);
    CHECK(fit.samples.back().bytes == 262144);
    for (const CollectiveSample& s : fit.samples) {
      CHECK(s.status == "ok");
      CHECK(s.time_s > 0);
      CHECK(s.busbw_bytes_per_s > 0);
    }
  }
  std::filesystem::remove(out);
}

TEST_CASE("the full cpu plan adds in-place variants across ranks and no CUDA-graph ones") {
  const std::filesystem::path out = std::filesystem::temp_directory_path() /
                                    (std::to_string(::getpid()) + "-meshplan-mpi-variants.yaml");
  std::filesystem::remove(out);
  // Full plan: 8 B to 64 MiB by factors of 2; out-of-place and in-place where defined.
  const testing::Run run =
      mpirun_two("calibrate --backend cpu --nccl --out '" + out.string() + "'");
  INFO(run.err);
  REQUIRE(run.rc == 0);
  auto profile = load_profile(out.string());
  REQUIRE_MESSAGE(profile.ok(), (profile.ok() ? "" : format_diagnostics(profile.errors())));
  int in_place = 0;
  for (const CollectiveFit& fit : profile->collectives) {
    CAPTURE(fit.collective);
    CHECK(fit.source.find("graph") == std::string::npos);
    in_place += fit.source == "measured, in-place";
    CHECK(fit.samples.size() == 24);  // 2^3 … 2^26
    for (const CollectiveSample& s : fit.samples) CHECK(s.status == "ok");
  }
  // Collectives without a fit are listed as missing (see above), with their variant.
  const std::vector<std::string> no_fit = unfitted(*profile);
  for (const std::string& m : no_fit) {
    CHECK(m.find("graph") == std::string::npos);
    in_place += m.find(" (measured, in-place): ") != std::string::npos;
  }
  CHECK(in_place == 3);  // all-reduce, all-gather, reduce-scatter
  CHECK(profile->collectives.size() + no_fit.size() == 8);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace meshplan
