// The calibration loop: drives a Benchmarker over GEMM shapes, HBM and collectives and builds
// a profile (nccl-tests' method: geometric size sweep, warm-up per size, N timed iterations).
// It never prints; progress goes to a callback. With an output path, the profile is written
// atomically after every section, so an interrupted run keeps what it measured. A failed
// measurement becomes a sample with status "failed: …", never a silent gap.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/benchmarker.h"
#include "core/profile.h"
#include "core/result.h"

namespace meshplan::calibrate {

// The collectives core/collective.h marks as calibrated, in table order.
std::vector<std::string> default_collective_kinds();

struct CalibrationPlan {
  bool gemm = true, hbm = true, collectives = true;
  std::vector<GemmShape> gemm_shapes;  // measured in this order, for each dtype
  std::vector<std::string> dtypes;     // empty: every dtype the backend offers
  TimingOptions gemm_timing{5, 20};
  // Sustained compute: `sustained_shape` run back to back this long in each dtype (0: not
  // measured). The first dtype's run sets the profile's sustained_compute_ratio (over the sweep's
  // sample of that shape, else over its own first second); each dtype's last quarter is its GEMM
  // table's sustained_flops_per_s.
  double sustained_seconds = 0;
  GemmShape sustained_shape{8192, 8192, 8192, "sustained"};
  int64_t hbm_bytes = int64_t{1} << 30;  // per buffer
  TimingOptions hbm_timing{3, 20};
  std::vector<std::string> collective_kinds = default_collective_kinds();
  int64_t min_bytes = 8;                 // nccl-tests -b
  int64_t max_bytes = int64_t{8} << 30;  // nccl-tests -e; capped by free memory
  int64_t step_factor = 2;               // nccl-tests -f
  TimingOptions collective_timing{5, 20};
  // Also measure in-place and CUDA-graph variants (extra entries, source says which).
  bool collective_variants = false;
  // Asked between measurements; once it returns true the run finishes the measurement in
  // progress, saves what it has with complete: false and the rest listed as missing, and
  // returns (the CLI sets it from SIGINT/SIGTERM). Unset: never stops early.
  std::function<bool()> stop_requested;
  std::string out_path;  // empty: nothing written
  std::string name = "measured";
  std::string command;  // recorded in provenance
  std::string date;     // recorded in provenance (the caller knows the clock)
};

struct Progress {
  std::string section;  // gemm | sustained | hbm | collectives
  std::string item;     // e.g. "bf16 8192x8192x8192" or "all_reduce x8 1048576 B"
  int64_t done = 0, total = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// Sizes min, min·f, min·f², … ≤ max (nccl-tests -b/-e/-f). REQUIRES: min ≥ 1, f ≥ 2.
std::vector<int64_t> message_sizes(int64_t min_bytes, int64_t max_bytes, int64_t factor);

// A log2 grid for the GEMM efficiency curve: cubes 2^lo..2^hi, then k and m sweeps at
// n = k or m = 2^hi/2 (the shapes where efficiency falls off: small K, few tokens).
std::vector<GemmShape> gemm_grid(int lo_log2, int hi_log2);

// Default plans: `quick` finishes in about 2 minutes on an 8-GPU node, the full one in about 15.
CalibrationPlan cuda_plan(bool quick);
CalibrationPlan cpu_plan(bool quick);

// Runs the plan. Errors only when the profile cannot be written; measurement failures are
// recorded in the profile.
Result<CalibrationProfile> run_calibration(Benchmarker& bench, const CalibrationPlan& plan,
                                           const ProgressFn& progress = {});

}  // namespace meshplan::calibrate
