// Per-request prompt and answer lengths: fixed, or drawn as TensorRT-LLM's token-norm-dist.
#include "serving/request_lengths.h"

#include <doctest/doctest.h>

#include <cmath>

#include "serving/request_replay.h"

using namespace meshplan::serving;

namespace {

Workload spread(int64_t isl, double isl_stdev, int64_t osl, double osl_stdev, uint64_t seed = 1) {
  Workload w;
  w.isl = isl;
  w.osl = osl;
  w.isl_stdev = isl_stdev;
  w.osl_stdev = osl_stdev;
  w.seed = seed;
  return w;
}

}  // namespace

TEST_CASE("lengths: without a spread every request has the workload's isl and osl") {
  const std::vector<RequestLength> l = request_lengths(spread(467, 0, 256, 0), 3);
  REQUIRE(l.size() == 3);
  for (const RequestLength& r : l) {
    CHECK(r.isl == 467);
    CHECK(r.osl == 256);
  }
  CHECK(longest_sequence(l) == 723);
  CHECK(longest_prompt(l) == 467);
  CHECK(total_output_tokens(l) == 768);
}

TEST_CASE("lengths: the draws of seed 1 are pinned, the same on every platform") {
  // Box–Muller over std::mt19937_64 (fully specified by the standard), then max(1, ceil(x)).
  const std::vector<RequestLength> l = request_lengths(spread(100, 20, 10, 5), 3);
  REQUIRE(l.size() == 3);
  CHECK(l[0].isl == 114);
  CHECK(l[0].osl == 11);
  CHECK(l[1].isl == 133);
  CHECK(l[1].osl == 6);
  CHECK(l[2].isl == 98);
  CHECK(l[2].osl == 17);
  CHECK(longest_sequence(l) == 139);
  CHECK(longest_prompt(l) == 133);
  CHECK(total_output_tokens(l) == 34);
}

TEST_CASE("lengths: another seed draws other lengths, the same seed the same") {
  const Workload a = spread(1000, 300, 200, 50, 1), b = spread(1000, 300, 200, 50, 2);
  const std::vector<RequestLength> la = request_lengths(a, 50), lb = request_lengths(b, 50);
  const std::vector<RequestLength> again = request_lengths(a, 50);
  int differ = 0;
  for (size_t i = 0; i < la.size(); ++i) {
    CHECK(la[i].isl == again[i].isl);
    CHECK(la[i].osl == again[i].osl);
    differ += la[i].isl != lb[i].isl;
  }
  CHECK(differ > 40);
}

TEST_CASE("lengths: a normal spread keeps its mean (plus the ceiling's half token) and stdev") {
  // E[ceil(X)] = mean + 1/2 for a spread much wider than a token; 20,000 draws put the sample
  // mean within 2.5 tokens (3.5 standard errors of 100 / sqrt(20000) = 0.71) and the sample
  // stdev within 2.5.
  const std::vector<RequestLength> l = request_lengths(spread(500, 100, 1, 0), 20000);
  double mean = 0, square = 0;
  for (const RequestLength& r : l) mean += static_cast<double>(r.isl);
  mean /= static_cast<double>(l.size());
  for (const RequestLength& r : l) square += std::pow(static_cast<double>(r.isl) - mean, 2);
  CHECK(mean == doctest::Approx(500.5).epsilon(0.005));
  CHECK(std::sqrt(square / static_cast<double>(l.size())) == doctest::Approx(100).epsilon(0.025));
  for (const RequestLength& r : l) CHECK(r.osl == 1);
}

TEST_CASE("lengths: draws below one token are clipped to one, as prepare_dataset.py clips") {
  const std::vector<RequestLength> l = request_lengths(spread(2, 1000, 2, 1000), 200);
  int ones = 0;
  for (const RequestLength& r : l) {
    CHECK(r.isl >= 1);
    CHECK(r.osl >= 1);
    ones += r.isl == 1;
  }
  CHECK(ones > 80);  // about half the draws fall below zero
}

TEST_CASE("lengths: a spread leaves the Poisson arrivals as they were") {
  Workload fixed = spread(100, 0, 10, 0);
  fixed.load = LoadKind::request_rate;
  fixed.request_rate_per_s = 4;
  Workload drawn = fixed;
  drawn.isl_stdev = 30;
  drawn.osl_stdev = 3;
  CHECK(initial_arrivals(fixed, 100) == initial_arrivals(drawn, 100));
}
