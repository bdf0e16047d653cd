// Device helpers for the CUDA backend (kernels.cu). All launch on `stream` and check launch
// errors with cudaGetLastError; REQUIRES: the current device owns the pointers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "calibrate/gemm_test_values.h"

namespace meshplan::calibrate::gpu {

enum class ElemType { f32, bf16, f16, fp8_e4m3 };

// Fills `n` elements of `type` with pattern_value (exact, for checks) or random_value (for
// timing); see calibrate/gemm_test_values.h.
enum class Fill { exact_pattern, random };
cudaError_t fill_values(void* p, ElemType type, int64_t n, uint32_t seed, Fill fill,
                        cudaStream_t stream);
cudaError_t fill_constant(float* p, int64_t n, float value, cudaStream_t stream);
// p[i] = i / chunk + 1 (values 1, 1, …, 2, 2, …): each rank's chunk of a gathered buffer.
cudaError_t fill_chunks(float* p, int64_t n, int64_t chunk, float first, cudaStream_t stream);
// Copies `n` elements of `type` into floats (for the GEMM check).
cudaError_t to_float(const void* src, ElemType type, float* dst, int64_t n, cudaStream_t stream);
// a[i] = b[i] + s·c[i] (STREAM triad: 3 arrays moved).
cudaError_t triad(float* a, const float* b, const float* c, float s, int64_t n,
                  cudaStream_t stream);
// Adds to *bad the elements differing from the expectation: chunk > 0 → i / chunk + first,
// else `first` everywhere. *bad must be zeroed by the caller.
cudaError_t count_mismatches(const float* p, int64_t n, int64_t chunk, float first,
                             unsigned long long* bad, cudaStream_t stream);

}  // namespace meshplan::calibrate::gpu
