// The GEMM times the cost model takes from two calibration profiles, side by side
// (`meshplan calibrate compare --gpu NAME`; core/profile_comparison.h holds the result).
#pragma once

#include "core/cluster_spec.h"
#include "core/profile.h"
#include "core/profile_comparison.h"

namespace meshplan {

// Fills c.model_gpu and c.gemm_model: for bf16 and fp8 where either profile has a GEMM table,
// the ratio BASE time / OTHER time of GemmModel (kernel time, no FP8 quantization overhead) at
// every m×n×k either profile measured (status ok), in m, n, k order.
void compare_gemm_models(const CalibrationProfile& base, const CalibrationProfile& other,
                         const GpuSpec& gpu, ProfileComparison& c);

}  // namespace meshplan
