#include "serving/gemm_roofline.h"

#include <algorithm>
#include <cmath>

#include "planner/gemm_model.h"
#include "planner/profile_defaults.h"

namespace meshplan::serving {
namespace {

constexpr double kActivationBytes = 2;  // BF16 activations

}  // namespace

double read_bandwidth(const CalibrationProfile& profile, const GpuSpec& gpu) {
  return hbm_bandwidth(profile, gpu);
}

GemmRoofline::GemmRoofline(const CalibrationProfile& profile, const GpuSpec& gpu,
                           Precision precision) {
  const GemmModel gemm(profile, gpu, precision);
  flops_per_s_ = gemm.max_efficiency() * gemm.peak_flops_per_s();
  read_bytes_per_s_ = read_bandwidth(profile, gpu);
  sm_count_ = static_cast<double>(gpu.sm_count);
}

double GemmRoofline::wave_share(double m, double n, double batch) const {
  if (sm_count_ <= 0) return 1;
  auto tiled = [&](double tile_m, double tile_n) {
    const double tiles = batch * std::ceil(m / tile_m) * std::ceil(n / tile_n);
    return tiles / (std::ceil(tiles / sm_count_) * sm_count_);
  };
  return std::max(tiled(128, 256), tiled(256, 128));
}

double GemmRoofline::time_s(double m, double n, double k, double batch, double weight_bytes) const {
  const double compute = 2 * m * n * k * batch / (flops_per_s_ * wave_share(m, n, batch));
  const double bytes = batch * (n * k * weight_bytes + (m * k + m * n) * kActivationBytes);
  return std::max(compute, bytes / read_bytes_per_s_);
}

}  // namespace meshplan::serving
