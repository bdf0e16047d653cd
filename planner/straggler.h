// Step-synchronous stragglers. Every collective of a training step waits for its slowest
// member, and the pipeline and the data-parallel reduction tie every GPU of the job together, so
// a step runs at the pace of its slowest GPU. GPUs of one model differ in sustained throughput
// ("on the same 8-GPU node you can see 5%+ MAMF spread between GPUs", ml-engineering
// compute/accelerator/README.md; ../shared/REFERENCE-performance.md §1.1): with throughput spread
// σ (coefficient of variation, the profile's gpu_compute_spread), the slowest of n GPUs is
// expected E[max of n standard normals]·σ slower than the typical one, and compute takes
// 1 + σ·E[max] times as long. One GPU has no straggler.
#pragma once

#include <cstdint>

namespace meshplan {

// E[max of n independent standard normals] by Blom's approximation Φ⁻¹((n − 0.375)/(n + 0.25))
// (within 0.02 of the exact value for n ≥ 2; 0 for n ≤ 1).
double expected_max_standard_normal(int64_t n);

// Time factor of compute on `gpus` GPUs whose throughput spreads by `spread` (σ/mean).
double straggler_slowdown(double spread, int64_t gpus);

}  // namespace meshplan
