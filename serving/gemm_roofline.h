// Time of the GEMMs an inference step runs: an overlapped roofline,
//   t = batch · max(2·m·n·k / (efficiency · peak · wave share), bytes / read bandwidth),
// bytes = the weights (k·n at the weight format) plus BF16 activations in and out (m·k + m·n).
// Serving GEMMs are skinny (m = the step's tokens): Hopper GEMM kernels stream their operands
// with TMA while the tensor cores work, so loads and math overlap and the slower bounds the
// time (the training model, planner/gemm_model.h, adds them: right for its large-m GEMMs, 1.5-2×
// too slow where both terms are similar, as in decode at batch 100-1000). Efficiency and peak
// (× sustained ratio) are the training model's; the wave share is that of the best CTA tile
// for the shape (best_tile_wave_efficiency, planner/gemm_model.h), since a skinny GEMM's
// kernel picks a smaller tile than the training model's 128×256.
// Read bandwidth: the profile's measured HBM figure (H100: 2575 GB/s local copy; H200: 3534
// GB/s gpu-stream triad). Reads alone do not stream faster: the gpu-stream read kernel on H200
// reaches 2756 GB/s, and no kernel in ../shared/REFERENCE-performance.md §3.1 reaches 90% of the
// datasheet on Hopper (H200 triad 74%, H100 SXM copies 77-87%).
#pragma once

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/profile.h"
#include "planner/calibration.h"

namespace meshplan::serving {

// Bandwidth of read-only streams (weights, KV cache) for `gpu` under `profile`.
double read_bandwidth(const CalibrationProfile& profile, const GpuSpec& gpu);

class GemmRoofline {
 public:
  // `calibration`: the profile's scalars resolved for `gpu` and `precision`. `compute_share`:
  // the share of the dense GEMM rate the kernel reaches (an engine's fused MoE kernel,
  // engine_preset.h MoeGemmEfficiency); 1 for cuBLAS-class GEMMs. REQUIRES: 0 < compute_share ≤ 1.
  GemmRoofline(const CalibrationProfile& profile, const GpuSpec& gpu, Precision precision,
               const ResolvedCalibration& calibration, double compute_share = 1);

  // `batch` GEMMs of [m×k]·[k×n] with weights of `weight_bytes` per element.
  // REQUIRES: m, n, k > 0, batch > 0.
  double time_s(double m, double n, double k, double batch, double weight_bytes) const;
  // The roofline's two bounds of those GEMMs: the math at the kernel's rate, and the bytes read.
  double compute_s(double m, double n, double k, double batch) const;
  double read_s(double m, double n, double k, double batch, double weight_bytes) const;
  double flops_per_s() const { return flops_per_s_; }

 private:
  double flops_per_s_ = 0, read_bytes_per_s_ = 0, sm_count_ = 0;
};

}  // namespace meshplan::serving
