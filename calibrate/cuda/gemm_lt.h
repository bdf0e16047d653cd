// cuBLASLt GEMM timing (issue 5): TN layout (A stored k×m and transposed, B k×n, C m×n, all
// column-major), fp32 accumulation; bf16 and fp16 in and out; fp8 e4m3 in with per-tensor scale
// pointers and bf16 out (Hopper, sm_90). For each shape the heuristic is asked for up to
// kAlgorithms algorithms; each is timed (warm-up, L2 flushed before every timed iteration,
// CUDA events on a non-default stream); the best median is kept and the heuristic's first
// choice recorded. Timing operands are random (calibrate/gemm_test_values.h); the check uses
// the exact pattern. Throws GpuError.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "calibrate/benchmarker.h"

namespace meshplan::calibrate::gpu {

constexpr int kAlgorithms = 8;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // 32 MiB, as cuBLAS recommends on Hopper

struct LtContext {
  cudaStream_t stream = nullptr;  // non-default, non-blocking
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;  // kWorkspaceBytes
  void* flush = nullptr;      // ≥ 2× L2, memset before each timed iteration
  size_t flush_bytes = 0;
  float* scale_one = nullptr;  // device 1.0f for fp8 scale pointers
};

GemmResult time_gemm(LtContext& ctx, const GemmShape& shape, const std::string& dtype,
                     const TimingOptions& timing);
// Runs the heuristic's first algorithm back to back for about `seconds` in ~50 ms windows.
SustainedResult time_sustained(LtContext& ctx, const GemmShape& shape, const std::string& dtype,
                               double seconds);
// Runs a 128×96×64 product and compares it with a CPU reference; throws GpuError on mismatch.
void verify_gemm(LtContext& ctx, const std::string& dtype);

}  // namespace meshplan::calibrate::gpu
