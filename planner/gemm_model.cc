#include "planner/gemm_model.h"

#include <algorithm>
#include <cmath>

#include "planner/calibration.h"

namespace meshplan {

GemmModel::GemmModel(const CalibrationProfile& profile, const GpuSpec& gpu, Precision precision,
                     const std::string& fp8_recipe)
    : GemmModel(profile, gpu, precision, resolve_calibration(profile, gpu, precision, fp8_recipe)) {
}

GemmModel::GemmModel(const CalibrationProfile& profile, const GpuSpec& gpu, Precision precision,
                     const ResolvedCalibration& calibration)
    : peak_(gpu.peak_flops_per_s(precision) * calibration.sustained_compute_ratio.value),
      hbm_bytes_per_s_(calibration.hbm_bytes_per_s.value),
      sm_count_(static_cast<double>(gpu.sm_count)) {
  const bool fp8 = calibration.gemm_dtype == "fp8";
  in_bytes_ = fp8 ? 1 : 2;
  if (fp8) quantization_factor_ = 1 + calibration.fp8_quantization_overhead.value;
  max_efficiency_ = calibration.gemm_max_efficiency.value;
  const double ceiling = calibration.gemm_sustained_flops_per_s.value;
  if (ceiling > 0 && peak_ > 0) max_efficiency_ = std::min(max_efficiency_, ceiling / peak_);
  auto it = profile.gemm.find(calibration.gemm_dtype);
  if (it == profile.gemm.end()) return;
  // Samples are burst figures.
  const double sustained = calibration.sustained_compute_ratio.value;
  for (const GemmSample& s : it->second.samples) {
    if (s.status != "ok" || s.flops_per_s <= 0) continue;
    double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    // Frameworks run the cuBLASLt heuristic's first algorithm, not the best a sweep finds
    // (TransformerEngine asks cublasLtMatmulAlgoGetHeuristic for 1 result:
    // transformer_engine/common/gemm/cublaslt_gemm.cu), so that is the time to price.
    const double achieved = s.heuristic_flops_per_s > 0 ? s.heuristic_flops_per_s : s.flops_per_s;
    double measured = 2 * m * n * k / (achieved * sustained);
    anchors_.push_back(
        {std::log2(m), std::log2(n), std::log2(k), std::log(fallback_time_s(m, n, k) / measured)});
  }
}

namespace {

// Share of `sm_count` SMs busy over the waves of tile_m × tile_n tiles covering batch × m × n.
double tiled_share(double m, double n, double batch, double sm_count, double tile_m,
                   double tile_n) {
  const double tiles = batch * std::ceil(m / tile_m) * std::ceil(n / tile_n);
  return tiles / (std::ceil(tiles / sm_count) * sm_count);
}

}  // namespace

double wave_efficiency(double m, double n, double batch, double sm_count) {
  if (sm_count <= 0) return 1;
  return std::max(tiled_share(m, n, batch, sm_count, 128, 256),
                  tiled_share(m, n, batch, sm_count, 256, 128));
}

double best_tile_wave_efficiency(double m, double n, double batch, double sm_count) {
  if (sm_count <= 0) return 1;
  return std::max(
      {wave_efficiency(m, n, batch, sm_count), tiled_share(m, n, batch, sm_count, 128, 128),
       tiled_share(m, n, batch, sm_count, 64, 128), tiled_share(m, n, batch, sm_count, 64, 256)});
}

namespace {

constexpr double kTileRows = 128;  // the M side of the 128×256 tile wave_efficiency counts

// E[ceil(C/kTileRows)] = Σ_{j≥0} P(C > j·kTileRows) for C ~ Poisson(mean).
double expected_row_tiles(double mean) {
  const double sd = std::sqrt(mean);
  const double lo = std::max(0.0, std::floor(mean - 10 * sd - 10));
  const double hi = std::ceil(mean + 10 * sd + 10);
  if (mean > 2048) {  // normal approximation with continuity correction: within 1e-4 here
    const double below = std::ceil(lo / kTileRows);  // j·T < lo: P(C > j·T) is 1
    double tiles = below;
    for (double j = below; j * kTileRows < hi; ++j)
      tiles += 0.5 * std::erfc((j * kTileRows + 0.5 - mean) / (sd * std::sqrt(2.0)));
    return tiles;
  }
  // Exact: the pmf from its mode outward by p(c+1) = p(c)·mean/(c+1), each count's
  // ceil(c/T) weighted by its probability (no exp or log per term).
  const double mode = std::floor(mean);
  // lgamma_r (POSIX): std::lgamma also writes the global signgam, a data race between search
  // threads pricing layers side by side.
  int sign = 0;
  const double log_mode_factorial = ::lgamma_r(mode + 1, &sign);
  const double at_mode = std::exp(-mean + mode * std::log(mean) - log_mode_factorial);
  double tiles = at_mode * std::ceil(mode / kTileRows);
  double p = at_mode;
  for (double c = mode + 1; c <= hi; ++c) {
    p *= mean / c;
    tiles += p * std::ceil(c / kTileRows);
  }
  p = at_mode;
  for (double c = mode - 1; c >= lo; --c) {
    p *= (c + 1) / mean;
    tiles += p * std::ceil(c / kTileRows);
  }
  return tiles;
}

}  // namespace

double routed_row_tile_factor(double mean_rows) {
  return expected_row_tiles(mean_rows) / std::ceil(mean_rows / kTileRows);
}

double GemmModel::fallback_time_s(double m, double n, double k, double batch) const {
  double bytes = (m * k + k * n) * in_bytes_ + m * n * out_bytes_;
  return batch *
         (2 * m * n * k / (max_efficiency_ * peak_ * wave_efficiency(m, n, batch, sm_count_)) +
          bytes / hbm_bytes_per_s_);
}

double GemmModel::time_s(double m, double n, double k, double batch) const {
  return quantization_factor_ * kernel_time_s(m, n, k, batch);
}

double GemmModel::kernel_time_s(double m, double n, double k, double batch) const {
  double t = fallback_time_s(m, n, k, batch);
  if (anchors_.empty()) return t;
  const double lm = std::log2(m), ln = std::log2(n), lk = std::log2(k);
  double weight_sum = 0, weighted = 0, nearest = 1e30;
  for (const Anchor& a : anchors_) {
    double d2 = (lm - a.log_m) * (lm - a.log_m) + (ln - a.log_n) * (ln - a.log_n) +
                (lk - a.log_k) * (lk - a.log_k);
    if (d2 < 1e-18) return t / std::exp(a.log_ratio);
    nearest = std::min(nearest, d2);
    weight_sum += 1 / d2;
    weighted += a.log_ratio / d2;
  }
  constexpr double kReachLog2 = 3;
  double fade = std::max(0.0, 1 - std::sqrt(nearest) / kReachLog2);
  return t / std::exp(fade * weighted / weight_sum);
}

}  // namespace meshplan
