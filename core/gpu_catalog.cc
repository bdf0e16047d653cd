// Built-in GPU types. Peaks are dense (no 2:4 sparsity); capacities are what nvidia-smi reports
// as memory.total; bandwidths are the datasheet HBM figures. See ../shared/REFERENCE.md §2.
// SM counts: A100 108, H100/H200 132, B200 148 (../shared/REFERENCE-performance.md §1.7).
#include <array>

#include "core/cluster_spec.h"
#include "core/units.h"

namespace meshplan {
namespace {

using units::kTera;
using units::mib_bytes;

const std::array<GpuSpec, 4>& catalog() {
  static const std::array<GpuSpec, 4> gpus = {{
      {"A100-SXM-80GB", 312 * kTera, 0, mib_bytes(81920), 2.039e12,
       "NVIDIA A100 datasheet (2021): 312 TFLOP/s bf16 dense, 80 GB HBM2e, 2,039 GB/s; 108 SMs",
       108},
      {"H100-SXM-80GB", 989 * kTera, 1979 * kTera, mib_bytes(81559), 3.35e12,
       "NVIDIA H100 datasheet: 989 TFLOP/s bf16 dense, 1,979 fp8 dense, 80 GB HBM3, 3.35 TB/s; 132 "
       "SMs",
       132},
      {"H200-SXM-141GB", 989 * kTera, 1979 * kTera, mib_bytes(143771), 4.8e12,
       "NVIDIA H200 datasheet: 989 TFLOP/s bf16 dense, 1,979 fp8 dense, 141 GB HBM3e, 4.8 TB/s; "
       "132 SMs",
       132},
      {"B200", 2250 * kTera, 4500 * kTera, mib_bytes(183359), 8.0e12,
       "NVIDIA DGX B200 datasheet: 2.25 PFLOP/s bf16 dense, 4.5 fp8 dense, ~180 GB HBM3e, 8 TB/s; "
       "148 SMs",
       148},
  }};
  return gpus;
}

}  // namespace

const GpuSpec* find_gpu(const std::string& name) {
  for (const auto& g : catalog())
    if (g.name == name) return &g;
  return nullptr;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const auto& g : catalog()) names.push_back(g.name);
  return names;
}

}  // namespace meshplan
