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

// Ratios enter a summary only where both sides gave a positive value and their quotient is a
// finite positive number (a reader refuses the rest; this keeps the sort's order strict).
void add_ratio(std::vector<double>& ratios, std::vector<std::string>& labels, double numerator,
               double denominator, const std::string& label) {
  if (!(numerator > 0) || !(denominator > 0)) return;
  const double r = numerator / denominator;
  if (!std::isfinite(r) || !(r > 0)) return;
  ratios.push_back(r);
  labels.push_back(label);
}

std::string shape_label(int64_t m, int64_t n, int64_t k) {
  return fmt::format("{}x{}x{}", m, n, k);
}

using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;

std::map<ShapeKey, const GemmSample*> ok_samples(const GemmTable* t) {
  std::map<ShapeKey, const GemmSample*> by_shape;
  if (t == nullptr) return by_shape;
  for (const GemmSample& s : t->samples)
    if (s.status == "ok" && s.flops_per_s > 0) by_shape.emplace(ShapeKey{s.m, s.n, s.k}, &s);
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
  std::vector<double> best, heuristic;
  std::vector<std::string> best_at, heuristic_at;
  for (const auto& [shape, bsample] : bs) {  // map order: m, then n, then k
    auto it = os.find(shape);
    if (it == os.end()) continue;
    const GemmSample& osample = *it->second;
    const std::string label = shape_label(bsample->m, bsample->n, bsample->k);
    add_ratio(best, best_at, osample.flops_per_s, bsample->flops_per_s, label);
    add_ratio(heuristic, heuristic_at, osample.heuristic_flops_per_s,
              bsample->heuristic_flops_per_s, label);
  }
  c.throughput = summarize_ratios(best, best_at);
  c.heuristic = summarize_ratios(heuristic, heuristic_at);
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
  std::vector<double> fwd, bwd;
  std::vector<std::string> fwd_at, bwd_at;
  for (const auto& [key, bsample] : bs) {
    auto it = os.find(key);
    if (it == os.end()) continue;
    const AttentionSample& osample = *it->second;
    const std::string label = fmt::format("d{} s{} {}", bsample->head_dim, bsample->seq_len,
                                          bsample->causal ? "causal" : "full");
    add_ratio(fwd, fwd_at, osample.fwd_flops_per_s, bsample->fwd_flops_per_s, label);
    add_ratio(bwd, bwd_at, osample.bwd_flops_per_s, bsample->bwd_flops_per_s, label);
  }
  c.forward = summarize_ratios(fwd, fwd_at);
  c.backward = summarize_ratios(bwd, bwd_at);
  return c;
}

void compare_collectives(const CalibrationProfile& base, const CalibrationProfile& other,
                         ProfileComparison& c) {
  using Key = std::tuple<std::string, std::string, int64_t>;
  std::map<Key, const CollectiveFit*> os;
  for (const CollectiveFit& f : other.collectives)
    os.emplace(Key{f.collective, f.level, f.group_size}, &f);
  c.base_collectives = static_cast<int64_t>(base.collectives.size());
  c.other_collectives = static_cast<int64_t>(other.collectives.size());
  std::map<Key, const CollectiveFit*> bs;
  for (const CollectiveFit& f : base.collectives)
    bs.emplace(Key{f.collective, f.level, f.group_size}, &f);
  std::vector<double> busbw, latency;
  std::vector<std::string> busbw_at, latency_at;
  for (const auto& [key, b] : bs) {
    auto it = os.find(key);
    if (it == os.end()) continue;
    const CollectiveFit& o = *it->second;
    const std::string label = fmt::format("{} x{} on {}", b->collective, b->group_size, b->level);
    add_ratio(busbw, busbw_at, o.busbw_bytes_per_s, b->busbw_bytes_per_s, label);
    add_ratio(latency, latency_at, b->latency_s, o.latency_s, label);
  }
  c.collective_busbw = summarize_ratios(busbw, busbw_at);
  c.collective_latency = summarize_ratios(latency, latency_at);
}

}  // namespace

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
