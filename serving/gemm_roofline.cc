#include "serving/gemm_roofline.h"

#include <algorithm>
#include <cmath>

#include "planner/calibration.h"
#include "planner/gemm_model.h"

namespace meshplan::serving {
namespace {

constexpr double kActivationBytes = 2;  // BF16 activations

}  // namespace

double read_bandwidth(const CalibrationProfile& profile, const GpuSpec& gpu) {
  return resolve_calibration(profile, gpu, Precision::bf16).hbm_bytes_per_s.value;
}

GemmRoofline::GemmRoofline(const CalibrationProfile& profile, const GpuSpec& gpu,
                           Precision precision, const ResolvedCalibration& calibration) {
  const GemmModel gemm(profile, gpu, precision, calibration);
  flops_per_s_ = gemm.max_efficiency() * gemm.peak_flops_per_s();
  read_bytes_per_s_ = calibration.hbm_bytes_per_s.value;
  sm_count_ = static_cast<double>(gpu.sm_count);
}

double GemmRoofline::time_s(double m, double n, double k, double batch, double weight_bytes) const {
  const double compute =
      2 * m * n * k * batch / (flops_per_s_ * best_tile_wave_efficiency(m, n, batch, sm_count_));
  const double bytes = batch * (n * k * weight_bytes + (m * k + m * n) * kActivationBytes);
  return std::max(compute, bytes / read_bytes_per_s_);
}

}  // namespace meshplan::serving
