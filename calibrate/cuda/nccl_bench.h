// NCCL collective timing with nccl-tests' method and definitions: `bytes` is nccl-tests'
// "size" (all-gather: the gathered buffer; reduce-scatter: the scattered one; all-to-all: the
// per-rank buffer, bytes/ranks per peer; send/recv: one message around a ring), float data,
// sum reduction; a checked first run, warm-up, then timed iterations bracketed by CUDA events
// on each rank's non-default stream (the iteration's time is the slowest rank's). Sub-groups
// of 2, 4, 8, … consecutive ranks come from ncclCommSplit and run concurrently, as TP groups
// do. Sizes below one element per rank run with one element per rank. Throws GpuError.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <map>
#include <vector>

#include "calibrate/benchmarker.h"
#include "calibrate/cuda/rank_bootstrap.h"

namespace meshplan::calibrate::gpu {

class NcclBench {
 public:
  // `devices`/`streams`: the GPUs this process drives (all local GPUs single-process, one GPU
  // per process under MPI). `buffer_bytes`: send and receive buffer size per GPU.
  NcclBench(const RankLayout& layout, std::vector<int> devices, std::vector<cudaStream_t> streams,
            int64_t buffer_bytes);
  ~NcclBench();
  NcclBench(const NcclBench&) = delete;
  NcclBench& operator=(const NcclBench&) = delete;

  int world_size() const { return world_size_; }
  std::vector<int64_t> group_sizes() const;
  int64_t buffer_bytes() const { return buffer_bytes_; }
  CollectiveResult run(const CollectiveRequest& request);

 private:
  struct Local {
    int device = 0;
    int rank = 0;  // global rank
    cudaStream_t stream = nullptr;
    ncclComm_t world = nullptr;
    std::map<int64_t, ncclComm_t> groups;  // by group size (< world size)
    float* send = nullptr;
    float* recv = nullptr;
    unsigned long long* bad = nullptr;
  };
  struct Shape;

  void ensure_buffers();
  void launch(const Shape& s);
  void check(const Shape& s);
  std::vector<double> time_iterations(const Shape& s, const TimingOptions& t, bool graph);

  RankLayout layout_;
  int world_size_ = 0;
  int64_t buffer_bytes_ = 0;
  std::vector<Local> locals_;
};

}  // namespace meshplan::calibrate::gpu
