// Time of fused (flash-style) attention on one GPU, from the calibration profile's attention
// samples: throughput by kernel, head dim, sequence length and mask.
//
// Lookup: the first kernel of the preference list that the profile has samples for (the
// framework preset names the kernel its software runs: cuDNN through Transformer Engine for
// Megatron-Core/NeMo, FlashAttention-2 for Composer, ...). Within it, samples of the same mask
// (causal or not; the other mask when only that was measured) are interpolated linearly in
// log2(seq_len), clamped at the ends, then in log2(head_dim) between the two nearest measured
// head dims. Throughput is in FlashAttention's FLOP convention, so a causal kernel's time is
// its halved FLOPs over its (causal) throughput.
//
// Samples are burst figures: throughput is multiplied by the profile's sustained_compute_ratio.
// A sample without backward throughput gets it from the forward: backward runs at 0.87× the
// forward throughput (FA2 318/370 and FA3 559/646 TFLOP/s at d=128, 8k on H100; derived in
// ../shared/REFERENCE-performance.md §2.4). A combined fwd+bwd figure T (3.5·F over both
// times) splits by the same ratio: forward throughput T·(1 + 2.5/0.87)/3.5.
//
// Without samples: attention_efficiency (profile or default) × the BF16 peak as the combined
// fwd+bwd throughput, split as above. Attention runs
// in BF16 whatever the GEMM precision (Transformer Engine: FlashAttention/cuDNN "regardless of
// linear layer precision"; DeepSeek-V3 §3.3.1), so FP8 never speeds it up here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/profile.h"
#include "planner/calibration.h"

namespace meshplan {

// Backward over forward throughput of fused attention (see above).
constexpr double kAttentionBackwardThroughputRatio = 0.87;

// The first of `kernels` (a preference order) the profile has samples of; "" when none (the
// efficiency fallback).
std::string preferred_attention_kernel(const CalibrationProfile& profile,
                                       const std::vector<std::string>& kernels);

class AttentionModel {
 public:
  // `kernels`: preference order, e.g. {"cudnn", "fa3", "fa2"}.
  AttentionModel(const CalibrationProfile& profile, const GpuSpec& gpu,
                 const std::vector<std::string>& kernels);
  // The same with the profile's scalars already resolved (resolve_calibration for `gpu`); the
  // profile gives the kernel samples.
  AttentionModel(const CalibrationProfile& profile, const GpuSpec& gpu,
                 const std::vector<std::string>& kernels, const ResolvedCalibration& calibration);

  struct Times {
    double forward_s = 0, backward_s = 0;
  };
  // `forward_flops`: the forward's FLOPs in FlashAttention's convention (already halved when
  // causal); backward FLOPs are 2.5× that. REQUIRES: head_dim, seq_len > 0.
  Times time(double forward_flops, int64_t head_dim, int64_t seq_len, bool causal) const;

  // The kernel whose samples are used ("" when none: the efficiency fallback).
  const std::string& kernel() const { return kernel_; }

 private:
  struct Point {
    double log_seq, fwd, bwd;  // throughputs in FLOP/s
  };
  struct Curve {
    int64_t head_dim = 0;
    bool causal = true;
    std::vector<Point> points;  // by log_seq
  };
  // Forward and backward throughput of one curve at log2(seq_len).
  static Point at(const Curve& c, double log_seq);
  Point throughput(int64_t head_dim, int64_t seq_len, bool causal) const;

  std::string kernel_;
  std::vector<Curve> curves_;
  double fallback_flops_per_s_ = 0;
  double sustained_ = 1;  // the profile's sustained_compute_ratio
};

}  // namespace meshplan
