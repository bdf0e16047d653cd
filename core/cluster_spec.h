// The machine: GPU type, node count, and the network as levels, innermost first (DESIGN.md §2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/result.h"

namespace meshplan {

// A node's host side, what offloading reads: host memory and its bandwidth (the CPU optimizer
// step streams the states through it), the GPU's host link, and the node's NVMe.
struct HostSpec {
  double memory_bytes = 0;        // per node (0: unknown, offload is refused)
  double memory_bytes_per_s = 0;  // per node, DRAM bandwidth (channels × transfer rate × 8 B)
  double pcie_bytes_per_s = 0;    // per GPU, per direction, host ↔ GPU
  double nvme_bytes = 0;          // per node
  double nvme_bytes_per_s = 0;    // per node, read or write
  std::string source;
  bool known() const { return memory_bytes > 0; }
};

struct GpuSpec {
  std::string name;
  double peak_bf16_flops_per_s = 0;  // dense, never the 2:4-sparse figure
  double peak_fp8_flops_per_s = 0;   // 0 when the GPU has no fp8 tensor cores
  int64_t hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  std::string source;    // datasheet the numbers come from
  int64_t sm_count = 0;  // streaming multiprocessors (0: unknown, no wave quantization)
  HostSpec host;         // the host side of the system the GPU ships in (DGX), if known

  // Whether GEMMs of precision `p` run in FP8 here (FP8 asked for, and FP8 tensor cores).
  bool runs_fp8(Precision p) const { return p == Precision::fp8 && peak_fp8_flops_per_s > 0; }
  double peak_flops_per_s(Precision p) const {
    return runs_fp8(p) ? peak_fp8_flops_per_s : peak_bf16_flops_per_s;
  }
};

// A network level: `span` GPUs share it (8 for an NVLink node, the pod size for a leaf/spine).
struct NetworkLevel {
  std::string name;
  int64_t span = 0;
  double bandwidth_bytes_per_s = 0;  // per GPU, per direction
  double latency_s = 0;
  double oversubscription = 1.0;  // traffic crossing this level gets bandwidth / oversubscription
  double effective_bandwidth_bytes_per_s() const {
    return bandwidth_bytes_per_s / oversubscription;
  }
};

// The most GPUs a cluster (and so any layout) may have: 10^8, beyond any machine built.
constexpr int64_t kMaxClusterGpus = 100'000'000;

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  std::string profile;  // name of a calibration profile (profiles/<name>.yaml); may be empty
  SourceLocation profile_where;  // where `profile:` was given, for the error when none is found
  std::vector<NetworkLevel> network;
  HostSpec host;     // the GPU's default, overridden key by key by the YAML's `host:`
  std::string file;  // where it was read from; profiles are looked up beside it

  int64_t gpus() const { return nodes * gpus_per_node; }
  // Index of the innermost level whose span covers a group of `span` consecutive ranks.
  // REQUIRES: span <= network.back().span
  size_t level_for_span(int64_t span) const;
};

// The built-in GPU table (datasheet numbers). Returns nullptr for unknown names.
const GpuSpec* find_gpu(const std::string& name);
std::vector<std::string> gpu_names();

Result<ClusterSpec> load_cluster(const std::string& path);
Result<ClusterSpec> parse_cluster_yaml(const std::string& text, const std::string& file);

}  // namespace meshplan
