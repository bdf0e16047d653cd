// `mpirun -np 2 meshplan calibrate --backend cpu`: the multi-process path of calibration end to
// end on any machine (issue 15): two ranks, the MPI module's collectives, rank 0's profile.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

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
  CHECK(profile->complete);
  CHECK(profile->provenance.gpu_count == 2);
  CHECK(profile->provenance.nodes == 1);
  CHECK(profile->provenance.sources.back().find("MPI collectives") != std::string::npos);
  // The calibrated collectives at the one group size, on one host; quick sizes 8 B to 1 MiB by
  // factors of 8: 8, 64, 512, 4 Ki, 32 Ki, 256 Ki.
  REQUIRE(profile->collectives.size() == 5);
  const char* kinds[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};
  for (size_t i = 0; i < 5; ++i) {
    const CollectiveFit& fit = profile->collectives[i];
    CAPTURE(fit.collective);
    CHECK(fit.collective == kinds[i]);
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
  CHECK(in_place == 3);  // all-reduce, all-gather, reduce-scatter
  CHECK(profile->collectives.size() == 8);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace meshplan
