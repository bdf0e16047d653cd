// calibrate/alpha_beta_fit.cc: recovering α and busbw from timings.
#include "calibrate/alpha_beta_fit.h"

#include <doctest/doctest.h>

#include <random>

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

TEST_CASE("exact samples give back alpha, busbw and the half-peak size") {
  // 8-rank all-reduce: factor 1.75; α = 15 µs, busbw = 360 GB/s.
  auto fit = fit_alpha_beta(synthetic(15e-6, 360e9, 1.75, 0, 1), 1.75, "ar");
  REQUIRE(fit.ok());
  CHECK(fit->latency_s == doctest::Approx(15e-6).epsilon(1e-9));
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(360e9).epsilon(1e-9));
  // Half peak where α = n·factor/busbw: n = 15e-6 · 360e9 / 1.75 = 3,085,714.3 bytes.
  CHECK(fit->half_peak_bytes == doctest::Approx(3085714.2857).epsilon(1e-6));
}

TEST_CASE("alpha and busbw are recovered within 1% under 3% multiplicative noise") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    auto fit = fit_alpha_beta(synthetic(46e-6, 47e9, 0.9375, 0.03, seed), 0.9375, "ag");
    REQUIRE(fit.ok());
    CHECK(fit->latency_s == doctest::Approx(46e-6).epsilon(0.01));
    CHECK(fit->busbw_bytes_per_s == doctest::Approx(47e9).epsilon(0.01));
  }
}

TEST_CASE("failed samples are ignored and one size is not enough") {
  auto samples = synthetic(6e-6, 370e9, 1.0, 0, 1);
  samples.push_back({1 << 20, 1.0, 0, "failed: timeout"});  // would wreck the fit if used
  auto fit = fit_alpha_beta(samples, 1.0, "sr");
  REQUIRE(fit.ok());
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(370e9).epsilon(1e-9));

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
  CHECK(c.latency_s == doctest::Approx(10e-6).epsilon(1e-9));
  CHECK(c.busbw_bytes_per_s == doctest::Approx(300e9).epsilon(1e-9));
  CHECK(c.half_peak_bytes == doctest::Approx(4e6).epsilon(1e-9));  // 10e-6·300e9/0.75
}

}  // namespace
}  // namespace meshplan::calibrate
