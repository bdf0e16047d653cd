// Time of one GEMM on one GPU, from the calibration profile.
//
// Fallback curve (used away from measured samples): the GEMM runs at the profile's best
// measured efficiency and additionally streams its operands and output through HBM once,
//   t = 2·m·n·k / (max_efficiency · peak) + (m·k + k·n)·in_bytes + m·n·out_bytes) / hbm,
// a no-overlap roofline that reproduces the published H100 fp8 K-sweep (M = N = 8192:
// K = 256, 1024, 4096 → 537, 1000, 1278 TFLOP/s vs measured 376-569, 927-1129, 1378-1467;
// ../shared/REFERENCE.md §3) within its spread.
// Near samples: the curve is scaled by the measured/fallback ratio of the samples, weighted by
// inverse squared distance in log2(m, n, k) space; the correction fades linearly to none at a
// log2 distance of 3 (8× in one dimension) from the nearest sample.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/profile.h"

namespace meshplan {

class GemmModel {
 public:
  GemmModel(const CalibrationProfile& profile, const GpuSpec& gpu, Precision precision);

  // Seconds for C[m×n] = A[m×k]·B[k×n]. REQUIRES: m, n, k > 0.
  double time_s(double m, double n, double k) const;
  double fallback_time_s(double m, double n, double k) const;
  double peak_flops_per_s() const { return peak_; }
  double max_efficiency() const { return max_efficiency_; }

 private:
  struct Anchor {
    double log_m, log_n, log_k, log_ratio;  // ratio = fallback time / measured time
  };
  double peak_ = 0, max_efficiency_ = 0, hbm_bytes_per_s_ = 0;
  double in_bytes_ = 2, out_bytes_ = 2;
  std::vector<Anchor> anchors_;
};

}  // namespace meshplan
