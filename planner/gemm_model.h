// Time of one GEMM on one GPU, from the calibration profile.
//
// Fallback curve (used away from measured samples): the GEMM runs at the profile's best
// measured efficiency and additionally streams its operands and output through HBM once,
//   t = 2·m·n·k / (max_efficiency · peak) + (m·k + k·n)·in_bytes + m·n·out_bytes) / hbm,
// a no-overlap roofline that reproduces the published H100 fp8 K-sweep (M = N = 8192:
// K = 256, 1024, 4096 → 537, 1000, 1278 TFLOP/s vs measured 376-569, 927-1129, 1378-1467;
// ../shared/REFERENCE.md §3) within its spread.
// Peak is the dense datasheet figure times the profile's sustained_compute_ratio (the clock a
// power-limited GPU holds in a long run; max_efficiency and samples are burst measurements).
// When the profile measured the dtype's sustained throughput (calibrate's back-to-back run,
// GemmTable::sustained_flops_per_s), the fallback's efficiency × peak is at most that: a
// power-limited GPU holds about the same ceiling whatever the shape (one H200, 18 s per shape:
// 8192³ 702 → 655 TFLOP/s, two shapes bursting at 670-676 held 668-671;
// profiles/measured/h200-2026-11-26/sustained.json), so the best burst shape times the ratio
// measured at 8192³ (835 × 0.950 = 793 on that H200) overshoots it.
// Wave quantization: a GEMM runs as output tiles spread over the GPU's SMs in waves, and its
// time grows with the number of waves, ceil(tiles / SMs) (ml-engineering "Do more SMs give more
// TFLOPS?"; ../shared/REFERENCE-performance.md §1.7). The compute term is divided by
// tiles / (waves · SMs) for the better of 128×256 and 256×128 tiles (the tile the source's
// worked example uses; cuBLAS picks the orientation). GPUs of unknown SM count skip this.
// FP8: the operands are quantized before each GEMM, which adds the profile's
// fp8_quantization_overhead of the recipe × the GEMM time (Transformer Engine GEMM profiling,
// autocast vs pre-quantized: ~17% of autocast time for current scaling, none measurable for
// delayed scaling, whose casts TE fuses into the producing kernels; §1.4).
// Near samples: the curve is scaled by the measured/fallback ratio of the samples (the
// heuristic's first algorithm where measured, which is what frameworks run; each sample's time
// divided by the sustained ratio, like the peak: a sample is a burst figure), weighted by
// inverse squared distance in log2(m, n, k) space; the correction fades linearly to none at a
// log2 distance of 3 (8× in one dimension) from the nearest sample.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/profile.h"
#include "planner/calibration.h"

namespace meshplan {

// Share of the SMs busy over the waves of `batch` m×n outputs (ceil(tiles / SMs) waves of the
// better of 128×256 and 256×128 tiles; 1 when the SM count is unknown, sm_count ≤ 0). The one
// wave-quantization rule of the training and serving GEMM models.
double wave_efficiency(double m, double n, double batch, double sm_count);
// The same share when the kernel may pick its CTA tile from the shapes Hopper's cuBLASLt and
// CUTLASS sm90 kernels come in (64×128, 64×256, 128×128, 128×256, 256×128): the best of them.
// Skinny GEMMs (the m = 16-512 rows of a serving step) leave most SMs idle with 128×256 tiles,
// and the heuristic then takes a smaller tile: one H200 and one H100 run a whole Llama decode step
// at batch 256 in 0.55-0.69 of the time 128×256 waves give its GEMMs
// (tests/data/one_gpu_serve_steps/). Used by the serving roofline, whose m is the step's tokens;
// the training model keeps wave_efficiency (its m is micro-batch × sequence, thousands of rows).
double best_tile_wave_efficiency(double m, double n, double batch, double sm_count);

// Dropless MoE routing pads each expert's rows: a router balanced on average sends an expert a
// Poisson number of rows with mean `mean_rows`, and a grouped GEMM (or one GEMM per expert) runs
// whole 128-row tiles per expert, so it runs E[ceil(C/128)] tiles where equal groups would run
// ceil(mean_rows/128). Returns that ratio: 1.48 at 128 rows, 1.12 at 512, 1.01 at 8192, below 1
// under a few rows (experts that receive none run nothing). Measured on an H200 (torch
// _grouped_mm, profiles/measured/h200-2026-11-26/grouped-gemm.json), routed over equal-group
// forward time: 1.54 at 128 rows, 1.27 at 512, 1.08 at 2048 (geometric means over 12 expert
// shapes). REQUIRES: mean_rows > 0.
double routed_row_tile_factor(double mean_rows);

class GemmModel {
 public:
  // `fp8_recipe`: the FP8 scaling recipe (delayed | current | block) whose quantization
  // overhead the profile gives.
  GemmModel(const CalibrationProfile& profile, const GpuSpec& gpu, Precision precision,
            const std::string& fp8_recipe = "delayed");
  // The same with the profile's scalars already resolved (resolve_calibration for `gpu` and
  // `precision`); the profile gives the samples.
  GemmModel(const CalibrationProfile& profile, const GpuSpec& gpu, Precision precision,
            const ResolvedCalibration& calibration);

  // Seconds for `batch` GEMMs C[m×n] = A[m×k]·B[k×n] run as one batched (or grouped) kernel:
  // their tiles share the waves. REQUIRES: m, n, k > 0, batch ≥ 1.
  double time_s(double m, double n, double k, double batch = 1) const;
  double fallback_time_s(double m, double n, double k, double batch = 1) const;
  // The GEMM kernel alone (what a profile sample measures): time_s without FP8 quantization.
  double kernel_time_s(double m, double n, double k, double batch = 1) const;
  double peak_flops_per_s() const { return peak_; }
  double max_efficiency() const { return max_efficiency_; }

 private:
  struct Anchor {
    double log_m, log_n, log_k, log_ratio;  // ratio = fallback time / measured time
  };
  double peak_ = 0, max_efficiency_ = 0, hbm_bytes_per_s_ = 0;
  double sm_count_ = 0, quantization_factor_ = 1;
  double in_bytes_ = 2, out_bytes_ = 2;
  std::vector<Anchor> anchors_;
};

}  // namespace meshplan
