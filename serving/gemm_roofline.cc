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
                           Precision precision, const ResolvedCalibration& calibration,
                           double compute_share) {
  const GemmModel gemm(profile, gpu, precision, calibration);
  flops_per_s_ = gemm.max_efficiency() * gemm.peak_flops_per_s() * compute_share;
  read_bytes_per_s_ = calibration.hbm_bytes_per_s.value;
  sm_count_ = static_cast<double>(gpu.sm_count);
}

double GemmRoofline::compute_s(double m, double n, double k, double batch) const {
  return 2 * m * n * k * batch / (flops_per_s_ * best_tile_wave_efficiency(m, n, batch, sm_count_));
}

double GemmRoofline::read_s(double m, double n, double k, double batch, double weight_bytes) const {
  return batch * (n * k * weight_bytes + (m * k + m * n) * kActivationBytes) / read_bytes_per_s_;
}

double GemmRoofline::time_s(double m, double n, double k, double batch, double weight_bytes) const {
  return std::max(compute_s(m, n, k, batch), read_s(m, n, k, batch, weight_bytes));
}

}  // namespace meshplan::serving
