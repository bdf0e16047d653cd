// The values a GEMM benchmark multiplies. Two kinds, host and device alike (plain header, so the
// tests check them without CUDA):
// - pattern_value: multiples of 1/8 in [-0.5, 0.5], exact in bf16, fp16 and fp8 e4m3, so a
//   K ≤ 256 product accumulated in fp32 is exact and comparable with a CPU reference. Only for
//   checking results: its 9 values leave the low mantissa bits zero.
// - random_value: uniform in [-1, 1) with all 24 float mantissa bits drawn, for timing.
//   Low-entropy operands switch fewer bits, draw less power, and let a power-limited GPU hold a
//   higher clock: on an H100 (2026-11-23, this repository's first GPU run) the 8192³ bf16 product
//   ran at 923 TFLOP/s on the 9-value pattern, where published random-data figures are ~795
//   (ml-engineering MAMF; device KINDS.md: 798). Timing on it would overstate every GEMM.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define MESHPLAN_HOST_DEVICE __host__ __device__
#else
#define MESHPLAN_HOST_DEVICE
#endif

namespace meshplan::calibrate {

// SplitMix64 finalizer of (index, seed): independent 64-bit words for each element.
MESHPLAN_HOST_DEVICE inline uint64_t mix_index(uint64_t i, uint32_t seed) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t{seed} * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return x;
}

MESHPLAN_HOST_DEVICE inline float pattern_value(uint64_t i, uint32_t seed) {
  return static_cast<float>(static_cast<int>(mix_index(i, seed) % 9) - 4) * 0.125f;
}

MESHPLAN_HOST_DEVICE inline float random_value(uint64_t i, uint32_t seed) {
  const uint64_t bits = mix_index(i, seed) >> 40;                // 24 random bits
  return static_cast<float>(bits) * (1.0f / 8388608.0f) - 1.0f;  // [0, 2) − 1
}

}  // namespace meshplan::calibrate
