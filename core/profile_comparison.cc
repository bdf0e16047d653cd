#include "core/profile_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace meshplan {

namespace {

double quantile(const std::vector<double>& sorted, double q) {
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(below);
  return sorted[below] + frac * (sorted[above] - sorted[below]);
}

// Calls f(base item, other item) for every key both maps hold, in key order.
template <class Map, class F>
void for_each_common(const Map& base, const Map& other, F f) {
  for (const auto& [key, b] : base) {
    auto it = other.find(key);
    if (it != other.end()) f(*b, *it->second);
  }
}

using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;

std::map<ShapeKey, const GemmSample*> ok_samples(const GemmTable* t) {
  std::map<ShapeKey, const GemmSample*> by_shape;
  if (t == nullptr) return by_shape;
  for (const GemmSample& s : t->samples)
    if (measured(s)) by_shape.emplace(ShapeKey{s.m, s.n, s.k}, &s);
  return by_shape;
}

const GemmTable* table_of(const CalibrationProfile& p, const std::string& dtype) {
  auto it = p.gemm.find(dtype);
  return it == p.gemm.end() ? nullptr : &it->second;
}

GemmComparison compare_gemm(const std::string& dtype, const CalibrationProfile& base,
                            const CalibrationProfile& other) {
  const GemmTable* b = table_of(base, dtype);
  const GemmTable* o = table_of(other, dtype);
  const auto bs = ok_samples(b), os = ok_samples(o);
  GemmComparison c;
  c.dtype = dtype;
  c.base_samples = static_cast<int64_t>(bs.size());
  c.other_samples = static_cast<int64_t>(os.size());
  RatioSet best, heuristic;
  for_each_common(bs, os, [&](const GemmSample& bsample, const GemmSample& osample) {
    const std::string label = gemm_shape_label(bsample.m, bsample.n, bsample.k);
    best.add(osample.flops_per_s, bsample.flops_per_s, label);
    heuristic.add(osample.heuristic_flops_per_s, bsample.heuristic_flops_per_s, label);
  });
  c.throughput = best.summary();
  c.heuristic = heuristic.summary();
  c.max_efficiency = {"max efficiency (of dense peak)", b ? b->max_efficiency : 0,
                      o ? o->max_efficiency : 0};
  c.sustained_tflops = {"sustained TFLOP/s", b ? b->sustained_flops_per_s / 1e12 : 0,
                        o ? o->sustained_flops_per_s / 1e12 : 0};
  return c;
}

using AttentionKey = std::tuple<int64_t, int64_t, bool>;

std::map<AttentionKey, const AttentionSample*> attention_of(const CalibrationProfile& p,
                                                            const std::string& kernel) {
  std::map<AttentionKey, const AttentionSample*> by_key;
  for (const AttentionSample& s : p.attention)
    if (s.kernel == kernel) by_key.emplace(AttentionKey{s.head_dim, s.seq_len, s.causal}, &s);
  return by_key;
}

AttentionComparison compare_attention(const std::string& kernel, const CalibrationProfile& base,
                                      const CalibrationProfile& other) {
  const auto bs = attention_of(base, kernel), os = attention_of(other, kernel);
  AttentionComparison c;
  c.kernel = kernel;
  c.base_samples = static_cast<int64_t>(bs.size());
  c.other_samples = static_cast<int64_t>(os.size());
  RatioSet fwd, bwd;
  for_each_common(bs, os, [&](const AttentionSample& bsample, const AttentionSample& osample) {
    const std::string label = fmt::format("d{} s{} {}", bsample.head_dim, bsample.seq_len,
                                          bsample.causal ? "causal" : "full");
    fwd.add(osample.fwd_flops_per_s, bsample.fwd_flops_per_s, label);
    bwd.add(osample.bwd_flops_per_s, bsample.bwd_flops_per_s, label);
  });
  c.forward = fwd.summary();
  c.backward = bwd.summary();
  return c;
}

using CollectiveKey = std::tuple<std::string, std::string, int64_t>;

std::map<CollectiveKey, const CollectiveFit*> fits_of(const CalibrationProfile& p) {
  std::map<CollectiveKey, const CollectiveFit*> by_key;
  for (const CollectiveFit& f : p.collectives)
    by_key.emplace(CollectiveKey{f.collective, f.level, f.group_size}, &f);
  return by_key;
}

void compare_collectives(const CalibrationProfile& base, const CalibrationProfile& other,
                         ProfileComparison& c) {
  c.base_collectives = static_cast<int64_t>(base.collectives.size());
  c.other_collectives = static_cast<int64_t>(other.collectives.size());
  RatioSet busbw, latency;
  for_each_common(
      fits_of(base), fits_of(other), [&](const CollectiveFit& b, const CollectiveFit& o) {
        const std::string label = fmt::format("{} x{} on {}", b.collective, b.group_size, b.level);
        busbw.add(o.busbw_bytes_per_s, b.busbw_bytes_per_s, label);
        latency.add(b.latency_s, o.latency_s, label);
      });
  c.collective_busbw = busbw.summary();
  c.collective_latency = latency.summary();
}

}  // namespace

void RatioSet::add(double numerator, double denominator, const std::string& label) {
  if (!(numerator > 0) || !(denominator > 0)) return;
  const double r = numerator / denominator;
  if (!std::isfinite(r) || !(r > 0)) return;
  values_.push_back(r);
  labels_.push_back(label);
}

std::string gemm_shape_label(int64_t m, int64_t n, int64_t k) {
  return fmt::format("{}x{}x{}", m, n, k);
}

RatioSummary summarize_ratios(const std::vector<double>& ratios,
                              const std::vector<std::string>& labels) {
  RatioSummary s;
  if (ratios.empty()) return s;
  s.count = static_cast<int64_t>(ratios.size());
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  // minmax_element gives the last of equal largest values; the first is wanted.
  const auto first_max = std::find(ratios.begin(), ratios.end(), *hi);
  s.min = *lo;
  s.max = *first_max;
  s.min_at = labels[static_cast<size_t>(lo - ratios.begin())];
  s.max_at = labels[static_cast<size_t>(first_max - ratios.begin())];
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  s.median = quantile(sorted, 0.5);
  s.p10 = quantile(sorted, 0.1);
  s.p90 = quantile(sorted, 0.9);
  double log_sum = 0;
  for (double r : sorted) log_sum += std::log(r);
  s.geomean = std::exp(log_sum / static_cast<double>(sorted.size()));
  return s;
}

ProfileComparison compare_profiles(const CalibrationProfile& base,
                                   const CalibrationProfile& other) {
  ProfileComparison c;
  c.base_name = base.name;
  c.other_name = other.name;
  c.base_provenance = base.provenance;
  c.other_provenance = other.provenance;
  c.scalars = {
      {"HBM bandwidth (GB/s)", base.hbm_bytes_per_s / 1e9, other.hbm_bytes_per_s / 1e9},
      {"sustained compute ratio", base.sustained_compute_ratio, other.sustained_compute_ratio},
      {"attention efficiency", base.attention_efficiency, other.attention_efficiency},
      {"GPU compute spread (sigma)", base.gpu_compute_spread, other.gpu_compute_spread},
      {"intra-node bus efficiency", base.intra_node_bus_efficiency,
       other.intra_node_bus_efficiency},
      {"inter-node bus efficiency", base.inter_node_bus_efficiency,
       other.inter_node_bus_efficiency},
  };
  std::set<std::string> dtypes;
  for (const auto& [dtype, table] : base.gemm) dtypes.insert(dtype);
  for (const auto& [dtype, table] : other.gemm) dtypes.insert(dtype);
  for (const std::string& dtype : dtypes) c.gemm.push_back(compare_gemm(dtype, base, other));
  std::set<std::string> kernels;
  for (const AttentionSample& s : base.attention) kernels.insert(s.kernel);
  for (const AttentionSample& s : other.attention) kernels.insert(s.kernel);
  for (const std::string& kernel : kernels)
    c.attention.push_back(compare_attention(kernel, base, other));
  compare_collectives(base, other, c);
  return c;
}

}  // namespace meshplan
