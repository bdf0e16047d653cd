#include "planner/attention_model.h"

#include <algorithm>
#include <cmath>

#include "planner/calibration.h"

namespace meshplan {
namespace {

constexpr double r = kAttentionBackwardThroughputRatio;

// Forward throughput of a kernel whose fwd+bwd throughput is `combined` (see the header).
double forward_of_combined(double combined) { return combined * (1 + 2.5 / r) / 3.5; }

// Forward and backward throughput of a sample (see the header for the derivations).
std::pair<double, double> sample_throughputs(const AttentionSample& s) {
  double fwd = s.fwd_flops_per_s;
  if (fwd <= 0) fwd = forward_of_combined(s.fwd_bwd_flops_per_s);
  const double bwd = s.bwd_flops_per_s > 0 ? s.bwd_flops_per_s : r * fwd;
  return {fwd, bwd};
}

}  // namespace

std::string preferred_attention_kernel(const CalibrationProfile& profile,
                                       const std::vector<std::string>& kernels) {
  for (const std::string& k : kernels)
    if (std::any_of(profile.attention.begin(), profile.attention.end(),
                    [&](const AttentionSample& s) { return s.kernel == k; }))
      return k;
  return "";
}

// Attention's scalars do not depend on the GEMM precision.
AttentionModel::AttentionModel(const CalibrationProfile& profile, const GpuSpec& gpu,
                               const std::vector<std::string>& kernels)
    : AttentionModel(profile, gpu, kernels, resolve_calibration(profile, gpu, Precision::bf16)) {}

AttentionModel::AttentionModel(const CalibrationProfile& profile, const GpuSpec& gpu,
                               const std::vector<std::string>& kernels,
                               const ResolvedCalibration& calibration)
    : fallback_flops_per_s_(calibration.attention_efficiency.value * gpu.peak_bf16_flops_per_s),
      sustained_(calibration.sustained_compute_ratio.value) {
  kernel_ = preferred_attention_kernel(profile, kernels);
  if (kernel_.empty()) return;
  for (const AttentionSample& s : profile.attention) {
    if (s.kernel != kernel_) continue;
    auto it = std::find_if(curves_.begin(), curves_.end(), [&](const Curve& c) {
      return c.head_dim == s.head_dim && c.causal == s.causal;
    });
    if (it == curves_.end()) {
      curves_.push_back({s.head_dim, s.causal, {}});
      it = curves_.end() - 1;
    }
    const auto [fwd, bwd] = sample_throughputs(s);
    it->points.push_back({std::log2(static_cast<double>(s.seq_len)), fwd, bwd});
  }
  for (Curve& c : curves_)
    std::stable_sort(c.points.begin(), c.points.end(),
                     [](const Point& a, const Point& b) { return a.log_seq < b.log_seq; });
  std::stable_sort(curves_.begin(), curves_.end(),
                   [](const Curve& a, const Curve& b) { return a.head_dim < b.head_dim; });
}

AttentionModel::Point AttentionModel::at(const Curve& c, double log_seq) {
  const std::vector<Point>& p = c.points;
  if (log_seq <= p.front().log_seq) return p.front();
  if (log_seq >= p.back().log_seq) return p.back();
  size_t i = 1;
  while (p[i].log_seq < log_seq) ++i;
  const double w = (log_seq - p[i - 1].log_seq) / (p[i].log_seq - p[i - 1].log_seq);
  return {log_seq, p[i - 1].fwd + w * (p[i].fwd - p[i - 1].fwd),
          p[i - 1].bwd + w * (p[i].bwd - p[i - 1].bwd)};
}

AttentionModel::Point AttentionModel::throughput(int64_t head_dim, int64_t seq_len,
                                                 bool causal) const {
  const bool have_mask = std::any_of(curves_.begin(), curves_.end(),
                                     [&](const Curve& c) { return c.causal == causal; });
  auto usable = [&](const Curve& c) { return c.causal == causal || !have_mask; };
  const double log_seq = std::log2(static_cast<double>(seq_len));
  const double log_d = std::log2(static_cast<double>(head_dim));
  // The two usable curves (curves_ is sorted by head dim) whose head dims bracket the requested
  // one (or the nearest at either end).
  const Curve* lo = nullptr;
  const Curve* hi = nullptr;
  for (const Curve& c : curves_)
    if (usable(c)) {
      if (!lo) lo = &c;
      hi = &c;
    }
  for (const Curve& c : curves_) {
    if (!usable(c)) continue;
    if (c.head_dim <= head_dim) lo = &c;
    if (c.head_dim >= head_dim) {
      hi = &c;
      break;
    }
  }
  if (lo->head_dim > head_dim) lo = hi;
  if (hi->head_dim < head_dim) hi = lo;
  const Point a = at(*lo, log_seq), b = at(*hi, log_seq);
  if (lo == hi) return a;
  const double w =
      (log_d - std::log2(static_cast<double>(lo->head_dim))) /
      (std::log2(static_cast<double>(hi->head_dim)) - std::log2(static_cast<double>(lo->head_dim)));
  return {log_seq, a.fwd + w * (b.fwd - a.fwd), a.bwd + w * (b.bwd - a.bwd)};
}

AttentionModel::Times AttentionModel::time(double forward_flops, int64_t head_dim, int64_t seq_len,
                                           bool causal) const {
  if (forward_flops <= 0) return {};
  if (curves_.empty()) {
    const double fwd = forward_of_combined(fallback_flops_per_s_);
    return {forward_flops / (sustained_ * fwd), 2.5 * forward_flops / (sustained_ * r * fwd)};
  }
  const Point p = throughput(head_dim, seq_len, causal);
  return {forward_flops / (sustained_ * p.fwd), 2.5 * forward_flops / (sustained_ * p.bwd)};
}

}  // namespace meshplan
