// calibrate/calibration_run.cc driven by a fake Benchmarker: what it asks for, in which order,
// with which warm-up and iteration counts, and what it records (failures included).
#include "calibrate/calibration_run.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace meshplan::calibrate {
namespace {

// Deterministic device: a GEMM runs at 100 TFLOP/s (peak 200); HBM copies 2 TB/s; a
// collective takes 10 µs + bytes·factor / 100 GB/s. Sizes listed in fail_bytes fail.
class FakeBenchmarker : public Benchmarker {
 public:
  std::vector<std::string> calls;
  std::vector<TimingOptions> timings;
  int64_t fail_bytes = -1;
  int64_t fail_gemm_m = -1;
  // Timings that shrink as messages grow (a loaded host): 100 µs at 8 B down to 10 µs.
  bool shrinking_times = false;

  Provenance describe() const override {
    Provenance p;
    p.gpu = "Fake GPU";
    p.gpu_count = 4;
    p.nodes = 1;
    return p;
  }
  std::vector<std::string> gemm_dtypes() const override { return {"bf16", "fp8"}; }
  double peak_flops(const std::string& dtype) const override {
    return dtype == "fp8" ? 400e12 : 200e12;
  }
  Result<GemmResult> gemm(const GemmShape& s, const std::string& dtype,
                          const TimingOptions& t) override {
    calls.push_back("gemm " + dtype + " " + std::to_string(s.m));
    timings.push_back(t);
    if (s.m == fail_gemm_m) return Diagnostic{{}, "", "", "CUBLAS_STATUS_NOT_SUPPORTED"};
    double time = 2.0 * static_cast<double>(s.m * s.n * s.k) / 100e12;
    return GemmResult{time, time * 1.5, time * 2, 4};
  }
  // 80 TFLOP/s in the first second, 72 at the end (windows 80, 80, 76, 72 TFLOP/s of 1 s).
  Result<SustainedResult> sustained_gemm(const GemmShape& s, const std::string& dtype,
                                         double seconds) override {
    calls.push_back("sustained " + dtype + " " + std::to_string(s.m) + " " +
                    std::to_string(seconds));
    if (no_sustained) return Benchmarker::sustained_gemm(s, dtype, seconds);
    return SustainedResult{80e12, 72e12, seconds, {80e12, 80e12, 76e12, 72e12}};
  }
  bool no_sustained = false;
  Result<HbmResult> hbm(int64_t bytes, const TimingOptions& t) override {
    calls.push_back("hbm " + std::to_string(bytes));
    timings.push_back(t);
    return HbmResult{2e12, 1.5e12};
  }
  std::vector<int64_t> collective_group_sizes() const override { return {2, 4}; }
  std::string level_for_group(int64_t) const override { return "nvlink"; }
  int64_t max_collective_bytes(const std::string&) const override { return 4096; }
  Result<CollectiveResult> collective(const CollectiveRequest& r) override {
    calls.push_back(r.collective + " x" + std::to_string(r.group_size) + " " +
                    std::to_string(r.bytes) + (r.in_place ? " ip" : "") + (r.graph ? " g" : ""));
    timings.push_back(r.timing);
    if (r.bytes == fail_bytes) return Diagnostic{{}, "", "", "ncclSystemError"};
    double t =
        10e-6 + static_cast<double>(r.bytes) * bus_factor(r.collective, r.group_size) / 100e9;
    if (shrinking_times) t = 800e-6 / static_cast<double>(r.bytes) + 9.9e-6;
    return CollectiveResult{t, t, ""};
  }
  bool graphs = true;
  bool captures_graphs() const override { return graphs; }
  // Another rank asking to stop: the agreement says "stop" from this call on (0: never).
  int other_rank_stops_at_call = 0;
  int agreements = 0;
  bool agree_to_stop(bool asked_here) override {
    ++agreements;
    return asked_here || (other_rank_stops_at_call > 0 && agreements >= other_rank_stops_at_call);
  }
};

CalibrationPlan small_plan() {
  CalibrationPlan p;
  p.gemm_shapes = {{1024, 1024, 1024, "grid"}, {2048, 1024, 512, "fwd qkv"}};
  p.gemm_timing = {2, 7};
  p.hbm_bytes = 1 << 20;
  p.hbm_timing = {1, 3};
  p.collective_kinds = {"all_reduce"};
  p.min_bytes = 8;
  p.max_bytes = 1 << 20;  // capped to 4096 by the backend
  p.step_factor = 8;      // 8, 64, 512, 4096
  p.collective_timing = {4, 11};
  p.name = "fake";
  p.command = "meshplan calibrate --fake";
  return p;
}

TEST_CASE("message sizes follow nccl-tests -b/-e/-f") {
  CHECK(message_sizes(8, 64, 2) == std::vector<int64_t>{8, 16, 32, 64});
  CHECK(message_sizes(8, 100, 4) == std::vector<int64_t>{8, 32});
  CHECK(message_sizes(8, int64_t{8} << 30, 2).size() == 31);  // 8 B .. 8 GiB
  CHECK(message_sizes(16, 8, 2).empty());
}

TEST_CASE("the loop measures every dtype, shape, size and group in order with the plan's timings") {
  FakeBenchmarker fake;
  std::vector<Progress> progress;
  auto r = run_calibration(fake, small_plan(), [&](const Progress& p) { progress.push_back(p); });
  REQUIRE(r.ok());
  // HBM first (short), then GEMMs, then collectives.
  const std::vector<std::string> expected = {
      "hbm 1048576",        "gemm bf16 1024",  "gemm bf16 2048",   "gemm fp8 1024",
      "gemm fp8 2048",      "all_reduce x2 8", "all_reduce x2 64", "all_reduce x2 512",
      "all_reduce x2 4096", "all_reduce x4 8", "all_reduce x4 64", "all_reduce x4 512",
      "all_reduce x4 4096"};
  CHECK(fake.calls == expected);
  CHECK(fake.timings[1].warmup == 2);
  CHECK(fake.timings[1].iterations == 7);
  CHECK(fake.timings[0].iterations == 3);
  CHECK(fake.timings[5].warmup == 4);
  CHECK(fake.timings[12].iterations == 11);
  REQUIRE(progress.size() == 13);
  CHECK(progress[0].total == 13);
  CHECK(progress[12].done == 12);
  CHECK(progress[5].item == "all_reduce x2 8 B");
}

TEST_CASE("a bf16-only shape (LM head, router) is measured in bf16 and skipped in fp8") {
  FakeBenchmarker fake;
  CalibrationPlan plan = small_plan();
  plan.gemm_shapes[1].bf16_only = true;
  plan.collectives = false;
  plan.hbm = false;
  std::vector<Progress> progress;
  auto r = run_calibration(fake, plan, [&](const Progress& p) { progress.push_back(p); });
  REQUIRE(r.ok());
  CHECK(fake.calls ==
        std::vector<std::string>{"gemm bf16 1024", "gemm bf16 2048", "gemm fp8 1024"});
  REQUIRE(progress.size() == 3);
  CHECK(progress[0].total == 3);
  CHECK(r->gemm.at("bf16").samples.size() == 2);
  CHECK(r->gemm.at("fp8").samples.size() == 1);
  CHECK(r->complete);
}

TEST_CASE("the profile records samples, efficiencies and fits (pinned)") {
  FakeBenchmarker fake;
  auto r = run_calibration(fake, small_plan());
  REQUIRE(r.ok());
  const CalibrationProfile& p = *r;
  CHECK(p.provenance.how == "measured");
  CHECK(p.provenance.command == "meshplan calibrate --fake");
  // 100 TFLOP/s achieved: 0.5 of bf16's 200 peak, 0.25 of fp8's 400.
  CHECK(p.gemm.at("bf16").max_efficiency == doctest::Approx(0.5));
  CHECK(p.gemm.at("fp8").max_efficiency == doctest::Approx(0.25));
  CHECK(p.hbm_bytes_per_s == 2e12);
  REQUIRE(p.collectives.size() == 2);
  const CollectiveFit& x2 = p.collectives[0];
  CHECK(x2.group_size == 2);
  CHECK(x2.level == "nvlink");
  CHECK(x2.source == "measured");
  CHECK(x2.latency_s == doctest::Approx(10e-6));
  CHECK(x2.busbw_bytes_per_s == doctest::Approx(100e9));
  CHECK(x2.half_peak_bytes == doctest::Approx(1e6));  // 10e-6·100e9/factor 1
  std::string text = render_profile_yaml(p);
  CHECK(text.find("      1024,1024,1024,100,50,32.21225472\n") != std::string::npos);
  // time = 10 µs + 4096·factor/100 GB/s (factor 1 for 2 ranks, 1.5 for 4), printed shortest.
  CHECK(text.find("      - {bytes: 4096, time_us: 10.040960000000002, "
                  "busbw_GBps: 0.40792912231499773}\n") != std::string::npos);
  CHECK(text.find("      - {bytes: 4096, time_us: 10.061440000000001, "
                  "busbw_GBps: 0.6106481775968449}\n") != std::string::npos);
  CHECK(text.find("notes:\n  - \"hbm triad: 1500.0 GB/s\"\n") != std::string::npos);
}

TEST_CASE(
    "the sustained run goes between HBM and the GEMMs and is related to the same shape's sample") {
  FakeBenchmarker fake;
  CalibrationPlan plan = small_plan();
  plan.collectives = false;
  plan.sustained_seconds = 4;
  plan.sustained_shape = {1024, 1024, 1024, "sustained"};  // in the sweep: 100 TFLOP/s
  auto r = run_calibration(fake, plan);
  REQUIRE(r.ok());
  REQUIRE(fake.calls.size() == 7);
  CHECK(fake.calls[0] == "hbm 1048576");
  CHECK(fake.calls[1] == "sustained bf16 1024 4.000000");
  CHECK(fake.calls[2] == "sustained fp8 1024 4.000000");
  CHECK(fake.calls[3] == "gemm bf16 1024");
  // 72 TFLOP/s sustained over the sweep's 100 at that shape; the 72 itself is the dtype's
  // sustained ceiling.
  CHECK(r->sustained_compute_ratio == doctest::Approx(0.72));
  CHECK(r->gemm.at("bf16").sustained_flops_per_s == doctest::Approx(72e12));
  CHECK(r->gemm.at("fp8").sustained_flops_per_s == doctest::Approx(72e12));
  CHECK(r->notes[1] ==
        "sustained bf16 1024x1024x1024: 80.0 TFLOP/s over the first second, 72.0 over the last "
        "quarter of 4.0 s; TFLOP/s per window: 80 80 76 72");
  CHECK(r->notes[2].rfind("sustained fp8 1024x1024x1024: 80.0 TFLOP/s", 0) == 0);
  CHECK(r->notes[3] ==
        "sustained_compute_ratio 0.720 = sustained 72.0 / the sweep's 1024x1024x1024 sample "
        "100.0 TFLOP/s (capped at 1)");

  plan.sustained_shape = {8192, 8192, 8192, "sustained"};  // not in the sweep: first second
  auto own = run_calibration(fake, plan);
  REQUIRE(own.ok());
  CHECK(own->sustained_compute_ratio == doctest::Approx(0.9));
  CHECK(
      own->notes[3] ==
      "sustained_compute_ratio 0.900 = sustained / first second (the sweep has no 8192x8192x8192)");

  fake.no_sustained = true;  // a backend without it says so, and the ratio stays unknown
  auto none = run_calibration(fake, plan);
  REQUIRE(none.ok());
  CHECK(none->sustained_compute_ratio == 0);
  CHECK(none->notes[1] ==
        "sustained compute not measured: this backend does not measure sustained throughput");
}

TEST_CASE("a stop between the sustained runs keeps the first and lists the rest as missing") {
  FakeBenchmarker fake;
  CalibrationPlan plan = small_plan();
  plan.collectives = false;
  plan.sustained_seconds = 4;
  plan.stop_requested = [&] { return fake.calls.size() >= 2; };  // after hbm and bf16's run
  auto r = run_calibration(fake, plan);
  REQUIRE(r.ok());
  CHECK(fake.calls[1] == "sustained bf16 8192 4.000000");
  CHECK(std::count(fake.calls.begin(), fake.calls.end(), "sustained fp8 8192 4.000000") == 0);
  CHECK(r->sustained_compute_ratio == doctest::Approx(0.9));
  CHECK(r->missing.front() == "sustained fp8");
}

TEST_CASE("failures become failed samples, and the rest is still measured and fitted") {
  FakeBenchmarker fake;
  fake.fail_bytes = 64;
  fake.fail_gemm_m = 2048;
  auto r = run_calibration(fake, small_plan());
  REQUIRE(r.ok());
  CHECK(r->gemm.at("bf16").samples[1].status == "failed: CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(r->gemm.at("bf16").samples[1].flops_per_s == 0);
  const auto& s = r->collectives[0].samples;
  REQUIRE(s.size() == 4);
  CHECK(s[1].bytes == 64);
  CHECK(s[1].status == "failed: ncclSystemError");
  CHECK(r->collectives[0].busbw_bytes_per_s == doctest::Approx(100e9));
}

TEST_CASE("a collective whose times admit no fit is listed as missing with its samples") {
  FakeBenchmarker fake;
  fake.shrinking_times = true;
  auto r = run_calibration(fake, small_plan());
  REQUIRE(r.ok());
  // Neither group gets a zero-bandwidth fit the profile reader would refuse.
  CHECK(r->collectives.empty());
  CHECK_FALSE(r->complete);
  REQUIRE(r->missing.size() == 2);
  CHECK(r->missing[0] ==
        "collectives all_reduce x2 (measured): no fit, time does not grow with message size "
        "(samples: 8 B 110 us, 64 B 22.4 us, 512 B 11.5 us, 4096 B 10.1 us)");
  // The written profile reads back.
  const std::string path = std::filesystem::temp_directory_path() /
                           (std::to_string(::getpid()) + "-unfitted-collective.yaml");
  REQUIRE(write_profile_atomically(*r, path).ok());
  auto back = load_profile(path);
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : format_diagnostics(back.errors())));
  CHECK(back->missing == r->missing);
  std::filesystem::remove(path);
}

TEST_CASE("the profile is written after each section, so an interrupted run keeps its data") {
  auto dir =
      std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-meshplan_run_test");
  std::filesystem::create_directories(dir);
  std::string path = (dir / "p.yaml").string();
  FakeBenchmarker fake;
  CalibrationPlan plan = small_plan();
  plan.out_path = path;
  int gemm_sections_seen_on_disk = 0;
  double hbm_seen_on_disk = 0;
  auto r = run_calibration(fake, plan, [&](const Progress& p) {
    if (p.section == "gemm" && p.done == 1) {  // HBM is on disk when the GEMMs start
      auto partial = load_profile(path);
      REQUIRE(partial.ok());
      hbm_seen_on_disk = partial->hbm_bytes_per_s;
    }
    if (p.section == "collectives" && gemm_sections_seen_on_disk == 0) {  // so are the GEMMs
      auto partial = load_profile(path);
      REQUIRE(partial.ok());
      gemm_sections_seen_on_disk = static_cast<int>(partial->gemm.size());
      CHECK(partial->collectives.empty());
    }
  });
  REQUIRE(r.ok());
  CHECK(hbm_seen_on_disk == 2e12);
  CHECK(gemm_sections_seen_on_disk == 2);
  auto final_profile = load_profile(path);
  REQUIRE(final_profile.ok());
  CHECK(render_profile_yaml(*final_profile) == render_profile_yaml(*r));

  plan.out_path = (dir / "missing" / "p.yaml").string();
  auto bad = run_calibration(fake, plan);
  REQUIRE(!bad.ok());
  CHECK(bad.errors()[0].where.file == plan.out_path);
  std::filesystem::remove_all(dir);
}

TEST_CASE("variants add in-place and CUDA-graph entries after the default one") {
  FakeBenchmarker fake;
  CalibrationPlan plan = small_plan();
  plan.gemm = plan.hbm = false;
  plan.collective_variants = true;
  auto r = run_calibration(fake, plan);
  REQUIRE(r.ok());
  REQUIRE(r->collectives.size() == 6);
  CHECK(r->collectives[0].source == "measured");
  CHECK(r->collectives[1].source == "measured, in-place");
  CHECK(r->collectives[2].source == "measured, cuda graph");
  CHECK(fake.calls[4] == "all_reduce x2 8 ip");
  CHECK(fake.calls[8] == "all_reduce x2 8 g");

  plan.collective_kinds = {"send_recv"};  // no in-place form: default and graph only
  auto sr = run_calibration(fake, plan);
  REQUIRE(sr.ok());
  REQUIRE(sr->collectives.size() == 4);
  CHECK(sr->collectives[1].source == "measured, cuda graph");
}

TEST_CASE("a backend that captures no graphs gets no CUDA-graph variants") {
  FakeBenchmarker fake;
  fake.graphs = false;
  CalibrationPlan plan = small_plan();
  plan.gemm = plan.hbm = false;
  plan.collective_variants = true;
  auto r = run_calibration(fake, plan);
  REQUIRE(r.ok());
  REQUIRE(r->collectives.size() == 4);  // default and in-place, at 2 and 4 ranks
  CHECK(r->collectives[0].source == "measured");
  CHECK(r->collectives[1].source == "measured, in-place");
  for (const std::string& call : fake.calls) CHECK(call.find(" g") == std::string::npos);
}

TEST_CASE("a stop asked on another rank stops this one at the same measurement") {
  // Nobody signals this process. Agreements come before hbm, the bf16 table, each of its two
  // shapes and the fp8 table; the fifth says another rank was asked: hbm and the bf16 GEMMs
  // ran, fp8 and the collectives are listed as missing.
  FakeBenchmarker fake;
  fake.other_rank_stops_at_call = 5;
  CalibrationPlan plan = small_plan();
  auto r = run_calibration(fake, plan);
  REQUIRE(r.ok());
  CHECK(!r->complete);
  CHECK(fake.calls.size() == 3);
  CHECK(fake.calls[0] == "hbm 1048576");
  CHECK(fake.calls[2] == "gemm bf16 2048");
  CHECK(r->missing.front() == "gemm fp8");
}

}  // namespace
}  // namespace meshplan::calibrate

namespace meshplan::calibrate {

TEST_CASE("a stop request finishes the measurement in progress, saves, and lists what is missing") {
  // Stop after the third measurement (hbm, gemm bf16 1024, gemm bf16 2048): the bf16 table is
  // whole, fp8 and both collective groups are missing.
  FakeBenchmarker fake;
  CalibrationPlan plan = small_plan();
  const std::string path = (std::filesystem::temp_directory_path() /
                            (std::to_string(::getpid()) + "-meshplan-interrupted.yaml"))
                               .string();
  plan.out_path = path;
  plan.stop_requested = [&] { return fake.calls.size() >= 3; };
  auto r = run_calibration(fake, plan);
  REQUIRE(r.ok());
  CHECK(fake.calls == std::vector<std::string>{"hbm 1048576", "gemm bf16 1024", "gemm bf16 2048"});
  CHECK_FALSE(r->complete);
  CHECK(r->missing == std::vector<std::string>{"gemm fp8", "collectives all_reduce x2 (measured)",
                                               "collectives all_reduce x4 (measured)"});
  CHECK(r->gemm.at("bf16").samples.size() == 2);
  // What was saved reads back the same, still marked incomplete.
  Result<CalibrationProfile> saved = load_profile(path);
  REQUIRE(saved.ok());
  CHECK_FALSE(saved->complete);
  CHECK(saved->missing == r->missing);
  CHECK(saved->gemm.at("bf16").samples.size() == 2);

  // Mid-table: after hbm and one bf16 shape, the bf16 table keeps its one sample.
  FakeBenchmarker second;
  plan.stop_requested = [&] { return second.calls.size() >= 2; };
  auto partial = run_calibration(second, plan);
  REQUIRE(partial.ok());
  CHECK(partial->missing.front() == "gemm bf16: 1 of 2 shapes");
  CHECK(partial->gemm.at("bf16").samples.size() == 1);
  std::filesystem::remove(path);
}

TEST_CASE("a finished calibration is complete and writes no complete/missing keys") {
  FakeBenchmarker fake;
  auto r = run_calibration(fake, small_plan());
  REQUIRE(r.ok());
  CHECK(r->complete);
  CHECK(r->missing.empty());
  const std::string yaml = render_profile_yaml(*r);
  CHECK(yaml.find("complete:") == std::string::npos);
  CHECK(yaml.find("missing:") == std::string::npos);
}

}  // namespace meshplan::calibrate
