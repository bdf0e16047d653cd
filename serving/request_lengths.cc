#include "serving/request_lengths.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace meshplan::serving {
namespace {

// The lengths' own stream: the workload's seed xor this (the fractional bits of the golden
// ratio), so they never share draws with the Poisson arrivals (request_replay.cc).
constexpr uint64_t kLengthStream = 0x9E3779B97F4A7C15ull;

double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// One standard normal (Box–Muller: sqrt(−2 ln(1 − u1)) cos(2π u2)).
double standard_normal(std::mt19937_64& rng) {
  const double u1 = uniform(rng), u2 = uniform(rng);
  return std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * std::numbers::pi * u2);
}

// get_norm_dist_lengths: max(1, ⌈mean + stdev · z⌉), capped at int64's range.
int64_t draw_length(int64_t mean, double stdev, std::mt19937_64& rng) {
  if (stdev <= 0) return mean;
  const double x = std::ceil(static_cast<double>(mean) + stdev * standard_normal(rng));
  return static_cast<int64_t>(std::clamp(x, 1.0, 9.0e18));
}

}  // namespace

std::vector<RequestLength> request_lengths(const Workload& w, int64_t count) {
  std::vector<RequestLength> out(static_cast<size_t>(std::max<int64_t>(0, count)),
                                 RequestLength{w.isl, w.osl});
  if (w.trace) {
    for (size_t i = 0; i < out.size() && i < w.trace->size(); ++i)
      out[i] = {(*w.trace)[i].isl, (*w.trace)[i].osl};
    return out;
  }
  if (w.isl_stdev <= 0 && w.osl_stdev <= 0) return out;
  std::mt19937_64 rng(w.seed ^ kLengthStream);
  for (RequestLength& r : out) {
    r.isl = draw_length(w.isl, w.isl_stdev, rng);
    r.osl = draw_length(w.osl, w.osl_stdev, rng);
  }
  return out;
}

int64_t longest_sequence(const std::vector<RequestLength>& lengths) {
  int64_t out = 0;
  for (const RequestLength& r : lengths) out = std::max(out, r.sequence());
  return out;
}

int64_t longest_prompt(const std::vector<RequestLength>& lengths) {
  int64_t out = 0;
  for (const RequestLength& r : lengths) out = std::max(out, r.isl);
  return out;
}

int64_t total_output_tokens(const std::vector<RequestLength>& lengths) {
  int64_t out = 0;
  for (const RequestLength& r : lengths) out += r.osl;
  return out;
}

}  // namespace meshplan::serving
