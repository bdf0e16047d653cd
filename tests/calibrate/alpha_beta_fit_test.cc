// calibrate/alpha_beta_fit.cc: recovering α and busbw from timings.
#include "calibrate/alpha_beta_fit.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>

namespace meshplan::calibrate {
namespace {

std::vector<CollectiveSample> synthetic(double alpha, double busbw, double factor, double noise,
                                        unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1.0 - noise, 1.0 + noise);
  std::vector<CollectiveSample> out;
  for (int64_t bytes = 8; bytes <= (int64_t{8} << 30); bytes *= 2) {
    double t = (alpha + static_cast<double>(bytes) * factor / busbw) * jitter(rng);
    out.push_back({bytes, t, static_cast<double>(bytes) / t * factor, "ok"});
  }
  return out;
}

TEST_CASE("exact samples give back alpha, busbw is capped at the best measured bandwidth") {
  // 8-rank all-reduce: factor 1.75; α = 15 µs, busbw = 360 GB/s.
  auto fit = fit_alpha_beta(synthetic(15e-6, 360e9, 1.75, 0, 1), 1.75, "ar");
  REQUIRE(fit.ok());
  CHECK(fit->unconstrained_busbw_bytes_per_s == doctest::Approx(360e9).epsilon(1e-9));
  // The 8 GiB sample still pays α: x = 8 GiB·1.75, x / (15e-6 + x/360e9) = 359.87 GB/s.
  const double x = 8589934592.0 * 1.75, peak = x / (15e-6 + x / 360e9);
  CHECK(fit->capped_at_peak);
  CHECK(fit->peak_busbw_bytes_per_s == doctest::Approx(peak).epsilon(1e-12));
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(peak).epsilon(1e-12));
  CHECK(fit->latency_s == doctest::Approx(15e-6).epsilon(1e-3));
  CHECK(fit->half_peak_bytes ==
        doctest::Approx(fit->latency_s * fit->busbw_bytes_per_s / 1.75).epsilon(1e-12));
  // The fit holds (±10%) at every size, 8 B to 8 GiB.
  CHECK(fit->residuals.size() == 31);
  CHECK(fit->holds_from_bytes == 8);
  CHECK(fit->holds_to_bytes == int64_t{8} << 30);
}

TEST_CASE("a slope steeper than any sample is capped at the measured peak, then α refitted") {
  // Two sizes: the free line through them has busbw 1e6 B / 0.95 ms = 1.05 GB/s and α = 0.1 ms
  // (half-peak 105 KB, so 2 MB is saturated), but the best sample is 2e6 B in 2 ms = 1 GB/s.
  // With busbw = 1e9, α minimises Σ((t − x/1e9 − α)/t)²:
  // α = (5e-5/1.05e-3²) / (1/1.05e-3² + 1/2e-3²) = 5e-5 / 1.275625.
  auto fit = fit_alpha_beta({{1000000, 1.05e-3, 0, "ok"}, {2000000, 2.0e-3, 0, "ok"}}, 1.0, "x");
  REQUIRE(fit.ok());
  CHECK(fit->unconstrained_busbw_bytes_per_s == doctest::Approx(1e6 / 0.95e-3).epsilon(1e-9));
  CHECK(fit->saturated);
  CHECK(fit->capped_at_peak);
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(1e9).epsilon(1e-12));
  const double alpha = 5e-5 / 1.275625;
  CHECK(fit->latency_s == doctest::Approx(alpha).epsilon(1e-9));
  // Residuals (α + x/1e9)/t − 1: −1.0% at 1e6 B, +2.0% at 2e6 B.
  REQUIRE(fit->residuals.size() == 2);
  CHECK(fit->residuals[0].relative == doctest::Approx((alpha + 1e-3) / 1.05e-3 - 1));
  CHECK(fit->residuals[1].relative == doctest::Approx((alpha + 2e-3) / 2e-3 - 1));
  CHECK(fit->holds_from_bytes == 1000000);
  CHECK(fit->holds_to_bytes == 2000000);
}

TEST_CASE("a sweep that stops short of saturation extrapolates busbw and says so") {
  // α = 10 µs, 100 GB/s, 8 B..4 KiB: half-peak 1 MB, far above 4 KiB. The fit is exact and,
  // though above every measured bandwidth (4 KiB reaches 0.41 GB/s), not capped.
  std::vector<CollectiveSample> s;
  for (int64_t bytes = 8; bytes <= 4096; bytes *= 2)
    s.push_back({bytes, 10e-6 + static_cast<double>(bytes) / 100e9, 0, "ok"});
  auto fit = fit_alpha_beta(s, 1.0, "x");
  REQUIRE(fit.ok());
  CHECK_FALSE(fit->saturated);
  CHECK_FALSE(fit->capped_at_peak);
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(100e9).epsilon(1e-9));
  CollectiveFit c;
  c.collective = "send_recv";
  c.group_size = 2;
  c.level = "nvlink";
  CHECK(describe_fit(c, *fit).find("; busbw extrapolated: the largest size, 4 KiB, is under 10x "
                                   "the half-peak size") != std::string::npos);
}

TEST_CASE("the range where the fit holds is the longest run of sizes within 10%") {
  // t = x / 1 GB/s at 1 KB..100 MB, but the 1 GB sample took twice that (a congested run):
  // the line misses it by about −50%; the four smaller sizes hold.
  std::vector<CollectiveSample> s = {{1000, 1e-6, 0, "ok"},
                                     {1000000, 1e-3, 0, "ok"},
                                     {10000000, 1e-2, 0, "ok"},
                                     {100000000, 1e-1, 0, "ok"},
                                     {1000000000, 2.0, 0, "ok"}};
  auto fit = fit_alpha_beta(s, 1.0, "x");
  REQUIRE(fit.ok());
  CHECK(fit->holds_from_bytes == 1000);
  CHECK(fit->holds_to_bytes == 100000000);
  REQUIRE(fit->residuals.size() == 5);
  CHECK(fit->residuals[4].relative < -0.4);
  CollectiveFit c;
  c.collective = "send_recv";
  c.group_size = 2;
  c.level = "ib";
  const std::string line = describe_fit(c, *fit);
  CAPTURE(line);
  CHECK(line.rfind("send_recv x2 (ib): fit within ±10% from 1000 B to 95.4 MiB; residuals ", 0) ==
        0);
  CHECK(line.find("at 1000 B (smallest), ") != std::string::npos);
  CHECK(line.find("at 953.7 MiB (largest), worst ") != std::string::npos);
  CHECK(line.find("capped") == std::string::npos);
}

TEST_CASE("failed samples are ignored and one size is not enough") {
  auto samples = synthetic(6e-6, 370e9, 1.0, 0, 1);
  samples.push_back({1 << 20, 1.0, 0, "failed: timeout"});  // would wreck the fit if used
  auto fit = fit_alpha_beta(samples, 1.0, "sr");
  REQUIRE(fit.ok());
  // 370 GB/s capped at the 8 GiB sample's 8 GiB / (6 µs + 8 GiB/370e9), 0.03% lower.
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(370e9).epsilon(1e-3));
  CHECK(fit->busbw_bytes_per_s < 370e9);

  auto one = fit_alpha_beta({{1024, 1e-5, 0, "ok"}, {1024, 1.1e-5, 0, "ok"}}, 1.0, "sr x2");
  REQUIRE(!one.ok());
  CHECK(one.errors()[0].field == "sr x2");
  CHECK(one.errors()[0].rule == "needs timings at two or more message sizes");
}

TEST_CASE("a negative latency is clamped to zero and the bandwidth refitted") {
  // t = n/1e9 exactly, minus 1 µs at the smallest size: the free fit wants α < 0.
  std::vector<CollectiveSample> s = {
      {1000, 0.5e-6, 0, "ok"}, {1000000, 1e-3, 0, "ok"}, {10000000, 1e-2, 0, "ok"}};
  auto fit = fit_alpha_beta(s, 1.0, "x");
  REQUIRE(fit.ok());
  CHECK(fit->latency_s == 0.0);
  // Slope alone on relative residuals: 1/busbw = Σ(x/t) / Σ(x/t)² with x/t = 2e9, 1e9, 1e9:
  // 4e9 / 6e18, so busbw = 1.5e9 (the short message, twice as fast, pulls it up).
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(1.5e9).epsilon(1e-12));
}

TEST_CASE("refit fills the fit fields with the collective's bus factor") {
  CollectiveFit c;
  c.collective = "reduce_scatter";
  c.group_size = 4;  // factor 0.75
  c.samples = synthetic(10e-6, 300e9, 0.75, 0, 3);
  REQUIRE(refit(c).ok());
  // Capped at the 8 GiB sample (0.05% under 300 GB/s), α nearly unchanged.
  CHECK(c.latency_s == doctest::Approx(10e-6).epsilon(1e-3));
  CHECK(c.busbw_bytes_per_s == doctest::Approx(300e9).epsilon(1e-3));
  CHECK(c.half_peak_bytes == doctest::Approx(4e6).epsilon(2e-3));  // 10e-6·300e9/0.75
}

TEST_CASE("a shipped profile's collective with samples holds meshplan's fit of them") {
  // A published sweep (a100-published: the 8xA100 all-reduce of ml-engineering) is carried as
  // samples beside its fit, and the fit is what `calibrate` would write for them.
  int with_samples = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(MESHPLAN_SOURCE_DIR) + "/profiles")) {
    if (entry.path().extension() != ".yaml") continue;
    Result<CalibrationProfile> profile = load_profile(entry.path().string());
    REQUIRE(profile.ok());
    for (const CollectiveFit& shipped : profile.value().collectives) {
      if (shipped.samples.empty()) continue;
      ++with_samples;
      CollectiveFit c = shipped;
      REQUIRE(refit(c).ok());
      INFO(entry.path().filename().string(), " ", shipped.collective, " x", shipped.group_size);
      CHECK(shipped.latency_s * 1e6 == doctest::Approx(c.latency_s * 1e6).epsilon(1e-3));
      CHECK(shipped.busbw_bytes_per_s / 1e9 ==
            doctest::Approx(c.busbw_bytes_per_s / 1e9).epsilon(1e-3));
      CHECK(shipped.half_peak_bytes / 1e6 ==
            doctest::Approx(c.half_peak_bytes / 1e6).epsilon(1e-3));
    }
  }
  CHECK(with_samples >= 1);
}

}  // namespace
}  // namespace meshplan::calibrate
