// Built-in GPU types. Peaks are dense (no 2:4 sparsity); capacities are what nvidia-smi reports
// as memory.total; bandwidths are the datasheet HBM figures. See ../shared/REFERENCE.md §2.
// SM counts: A100 108, H100/H200 132, B200 148 (../shared/REFERENCE-performance.md §1.7).
#include <array>

#include "core/cluster_spec.h"
#include "core/units.h"

namespace meshplan {
namespace {

using units::kGB;
using units::kTera;
using units::mib_bytes;

// DGX hosts (NVIDIA DGX A100/H100/H200/B200 datasheets: system memory, CPUs, internal NVMe
// "8x 3.84 TB NVMe U.2"). DRAM bandwidth: 2 sockets × 8 channels × transfer rate × 8 B (AMD
// EPYC 7742 DDR4-3200; Intel Xeon Platinum 8480C DDR5-4800; Xeon Platinum 8570 DDR5-5600), a
// ceiling that a STREAM measurement (host.memory_GBps) should replace. Host link: PCIe Gen4 /
// Gen5 x16, 32 / 64 GB/s per direction. NVMe: eight PCIe Gen4 x4 drives, 8 × 7.88 GB/s, the
// links' ceiling (a fio measurement, host.nvme_GBps, should replace it).
HostSpec dgx_host(double memory_tb, double dram_gbps, double pcie_gbps, const char* source) {
  return {memory_tb * 1000 * kGB, dram_gbps * kGB, pcie_gbps * kGB,
          8 * 3.84 * 1000 * kGB,  8 * 7.88 * kGB,  source};
}

const std::array<GpuSpec, 4>& catalog() {
  static const std::array<GpuSpec, 4> gpus = {{
      {"A100-SXM-80GB", 312 * kTera, 0, mib_bytes(81920), 2.039e12,
       "NVIDIA A100 datasheet (2021): 312 TFLOP/s bf16 dense, 80 GB HBM2e, 2,039 GB/s; 108 SMs",
       108,
       dgx_host(2, 409.6, 32,
                "DGX A100 640GB datasheet: 2 TB, 2x AMD EPYC 7742 (DDR4-3200), PCIe Gen4, "
                "8x 3.84 TB NVMe")},
      {"H100-SXM-80GB", 989 * kTera, 1979 * kTera, mib_bytes(81559), 3.35e12,
       "NVIDIA H100 datasheet: 989 TFLOP/s bf16 dense, 1,979 fp8 dense, 80 GB HBM3, 3.35 TB/s; 132 "
       "SMs",
       132,
       dgx_host(2, 614.4, 64,
                "DGX H100 datasheet: 2 TB, 2x Xeon Platinum 8480C (DDR5-4800), PCIe Gen5, "
                "8x 3.84 TB NVMe")},
      {"H200-SXM-141GB", 989 * kTera, 1979 * kTera, mib_bytes(143771), 4.8e12,
       "NVIDIA H200 datasheet: 989 TFLOP/s bf16 dense, 1,979 fp8 dense, 141 GB HBM3e, 4.8 TB/s; "
       "132 SMs",
       132,
       dgx_host(2, 614.4, 64,
                "DGX H200 datasheet: 2 TB, 2x Xeon Platinum 8480C (DDR5-4800), PCIe Gen5, "
                "8x 3.84 TB NVMe")},
      {"B200", 2250 * kTera, 4500 * kTera, mib_bytes(183359), 8.0e12,
       "NVIDIA DGX B200 datasheet: 2.25 PFLOP/s bf16 dense, 4.5 fp8 dense, ~180 GB HBM3e, 8 TB/s; "
       "148 SMs",
       148,
       dgx_host(2, 716.8, 64,
                "DGX B200 datasheet: 2 TB, 2x Xeon Platinum 8570 (DDR5-5600), PCIe Gen5, "
                "8x 3.84 TB NVMe")},
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
