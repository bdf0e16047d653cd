#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "calibrate/cuda/kernels.h"

namespace meshplan::calibrate::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

template <class T>
__device__ T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <class T>
__global__ void fill_kernel(T* p, int64_t n, uint32_t seed, bool random) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const auto at = static_cast<uint64_t>(i);
    p[i] = from_float<T>(random ? random_value(at, seed) : pattern_value(at, seed));
  }
}

template <class T>
__global__ void to_float_kernel(const T* src, float* dst, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    dst[i] = static_cast<float>(src[i]);
}

__global__ void chunks_kernel(float* p, int64_t n, int64_t chunk, float first) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    p[i] = chunk > 0 ? static_cast<float>(i / chunk) + first : first;
}

__global__ void triad_kernel(float* a, const float* b, const float* c, float s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    a[i] = b[i] + s * c[i];
}

__global__ void mismatch_kernel(const float* p, int64_t n, int64_t chunk, float first,
                                unsigned long long* bad) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    float want = chunk > 0 ? static_cast<float>(i / chunk) + first : first;
    if (p[i] != want) ++local;
  }
  if (local) atomicAdd(bad, local);
}

}  // namespace

cudaError_t fill_values(void* p, ElemType type, int64_t n, uint32_t seed, Fill fill,
                        cudaStream_t s) {
  const bool random = fill == Fill::random;
  switch (type) {
    case ElemType::f32:
      fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<float*>(p), n, seed, random);
      break;
    case ElemType::bf16:
      fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed,
                                                     random);
      break;
    case ElemType::f16:
      fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__half*>(p), n, seed, random);
      break;
    case ElemType::fp8_e4m3:
      fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed,
                                                     random);
      break;
  }
  return cudaGetLastError();
}

cudaError_t to_float(const void* src, ElemType type, float* dst, int64_t n, cudaStream_t s) {
  switch (type) {
    case ElemType::f32:
      to_float_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const float*>(src), dst, n);
      break;
    case ElemType::bf16:
      to_float_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(src),
                                                         dst, n);
      break;
    case ElemType::f16:
      to_float_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const __half*>(src), dst, n);
      break;
    case ElemType::fp8_e4m3:
      to_float_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const __nv_fp8_e4m3*>(src),
                                                         dst, n);
      break;
  }
  return cudaGetLastError();
}

cudaError_t fill_constant(float* p, int64_t n, float value, cudaStream_t s) {
  chunks_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n, 0, value);
  return cudaGetLastError();
}

cudaError_t fill_chunks(float* p, int64_t n, int64_t chunk, float first, cudaStream_t s) {
  chunks_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n, chunk, first);
  return cudaGetLastError();
}

cudaError_t triad(float* a, const float* b, const float* c, float sc, int64_t n, cudaStream_t s) {
  triad_kernel<<<blocks_for(n), kThreads, 0, s>>>(a, b, c, sc, n);
  return cudaGetLastError();
}

cudaError_t count_mismatches(const float* p, int64_t n, int64_t chunk, float first,
                             unsigned long long* bad, cudaStream_t s) {
  mismatch_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n, chunk, first, bad);
  return cudaGetLastError();
}

}  // namespace meshplan::calibrate::gpu
