#include "calibrate/cuda/nccl_bench.h"

#include <fmt/format.h>

#include <algorithm>

#include "calibrate/cuda/gpu_check.h"
#include "calibrate/cuda/kernels.h"
#include "calibrate/timing_stats.h"

namespace meshplan::calibrate::gpu {

struct NcclBench::Shape {
  std::string kind;
  int64_t group = 0;
  int64_t elems = 0;  // floats in the "size" buffer, a multiple of group
  bool in_place = false;
  ncclComm_t comm(const Local& l) const {
    auto it = l.groups.find(group);
    return it == l.groups.end() ? l.world : it->second;
  }
  int64_t sub_rank(const Local& l) const { return l.rank % group; }
};

NcclBench::NcclBench(const RankLayout& layout, std::vector<int> devices,
                     std::vector<cudaStream_t> streams, int64_t buffer_bytes)
    : layout_(layout), buffer_bytes_(buffer_bytes) {
  const int n = static_cast<int>(devices.size());
  world_size_ = layout.multi_process ? layout.size : n;
  locals_.resize(static_cast<size_t>(n));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  if (layout.multi_process) {
    ncclUniqueId id = share_unique_id(layout);
    MP_CUDA(cudaSetDevice(devices[0]));
    MP_NCCL(ncclCommInitRank(&comms[0], world_size_, id, layout.rank));
  } else {
    MP_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
  }
  for (int i = 0; i < n; ++i) {
    Local& l = locals_[static_cast<size_t>(i)];
    l.device = devices[static_cast<size_t>(i)];
    l.rank = layout.multi_process ? layout.rank : i;
    l.stream = streams[static_cast<size_t>(i)];
    l.world = comms[static_cast<size_t>(i)];
  }
  for (int64_t g : group_sizes()) {
    if (g == world_size_) continue;
    MP_NCCL(ncclGroupStart());  // one thread splitting several ranks' communicators
    for (Local& l : locals_) {
      MP_CUDA(cudaSetDevice(l.device));
      MP_NCCL(ncclCommSplit(l.world, static_cast<int>(l.rank / g), static_cast<int>(l.rank % g),
                            &l.groups[g], nullptr));
    }
    MP_NCCL(ncclGroupEnd());
  }
}

NcclBench::~NcclBench() {
  for (Local& l : locals_) {
    cudaSetDevice(l.device);
    for (auto& [g, c] : l.groups) ncclCommDestroy(c);
    if (l.world) ncclCommDestroy(l.world);
    cudaFree(l.send);
    cudaFree(l.recv);
    cudaFree(l.bad);
  }
}

std::vector<int64_t> NcclBench::group_sizes() const { return collective_groups_of(world_size_); }

void NcclBench::ensure_buffers() {
  for (Local& l : locals_) {
    if (l.send) continue;
    MP_CUDA(cudaSetDevice(l.device));
    MP_CUDA(cudaMalloc(&l.send, static_cast<size_t>(buffer_bytes_)));
    MP_CUDA(cudaMalloc(&l.recv, static_cast<size_t>(buffer_bytes_)));
    MP_CUDA(cudaMalloc(&l.bad, sizeof(unsigned long long)));
  }
}

// One collective on every local rank, inside one NCCL group.
void NcclBench::launch(const Shape& s) {
  const int64_t per = s.elems / s.group;
  MP_NCCL(ncclGroupStart());
  for (Local& l : locals_) {
    ncclComm_t c = s.comm(l);
    const int64_t r = s.sub_rank(l);
    const size_t n = static_cast<size_t>(s.elems), p = static_cast<size_t>(per);
    if (s.kind == "all_reduce") {
      MP_NCCL(
          ncclAllReduce(s.in_place ? l.recv : l.send, l.recv, n, ncclFloat, ncclSum, c, l.stream));
    } else if (s.kind == "all_gather") {
      float* src = s.in_place ? l.recv + r * per : l.send;
      MP_NCCL(ncclAllGather(src, l.recv, p, ncclFloat, c, l.stream));
    } else if (s.kind == "reduce_scatter") {
      float* dst = s.in_place ? l.send + r * per : l.recv;
      MP_NCCL(ncclReduceScatter(l.send, dst, p, ncclFloat, ncclSum, c, l.stream));
    } else if (s.kind == "all_to_all") {
      for (int64_t peer = 0; peer < s.group; ++peer) {
        MP_NCCL(ncclSend(l.send + peer * per, p, ncclFloat, static_cast<int>(peer), c, l.stream));
        MP_NCCL(ncclRecv(l.recv + peer * per, p, ncclFloat, static_cast<int>(peer), c, l.stream));
      }
    } else if (s.kind == "send_recv") {
      int next = static_cast<int>((r + 1) % s.group),
          prev = static_cast<int>((r + s.group - 1) % s.group);
      MP_NCCL(ncclSend(l.send, n, ncclFloat, next, c, l.stream));
      MP_NCCL(ncclRecv(l.recv, n, ncclFloat, prev, c, l.stream));
    } else {
      throw GpuError{"no NCCL benchmark for " + s.kind};
    }
  }
  MP_NCCL(ncclGroupEnd());
}

// Fills inputs with sub-rank + 1, runs once, and counts wrong outputs (nccl-tests' -c 1).
void NcclBench::check(const Shape& s) {
  const int64_t per = s.elems / s.group;
  const float sum = static_cast<float>(s.group * (s.group + 1) / 2);
  for (Local& l : locals_) {
    MP_CUDA(cudaSetDevice(l.device));
    const float mine = static_cast<float>(s.sub_rank(l) + 1);
    MP_CUDA(fill_constant(l.send, s.elems, mine, l.stream));
    MP_CUDA(fill_constant(l.recv, s.elems, s.kind == "all_reduce" && s.in_place ? mine : 0.0f,
                          l.stream));
    if (s.kind == "all_gather" && s.in_place)
      MP_CUDA(fill_constant(l.recv, s.elems, mine, l.stream));
    MP_CUDA(cudaMemsetAsync(l.bad, 0, sizeof(unsigned long long), l.stream));
  }
  launch(s);
  unsigned long long total = 0;
  for (Local& l : locals_) {
    MP_CUDA(cudaSetDevice(l.device));
    const int64_t r = s.sub_rank(l);
    if (s.kind == "all_reduce") MP_CUDA(count_mismatches(l.recv, s.elems, 0, sum, l.bad, l.stream));
    if (s.kind == "all_gather" || s.kind == "all_to_all")
      MP_CUDA(count_mismatches(l.recv, s.elems, per, 1.0f, l.bad, l.stream));
    if (s.kind == "reduce_scatter")
      MP_CUDA(
          count_mismatches(s.in_place ? l.send + r * per : l.recv, per, 0, sum, l.bad, l.stream));
    if (s.kind == "send_recv")
      MP_CUDA(count_mismatches(l.recv, s.elems, 0,
                               static_cast<float>((r + s.group - 1) % s.group + 1), l.bad,
                               l.stream));
    unsigned long long bad = 0;
    MP_CUDA(cudaMemcpyAsync(&bad, l.bad, sizeof(bad), cudaMemcpyDeviceToHost, l.stream));
    MP_CUDA(cudaStreamSynchronize(l.stream));
    total += bad;
  }
  if (total) throw GpuError{fmt::format("{} result check failed: {} wrong values", s.kind, total)};
}

std::vector<double> NcclBench::time_iterations(const Shape& s, const TimingOptions& t, bool graph) {
  const size_t n = locals_.size();
  std::vector<cudaGraphExec_t> execs(n, nullptr);
  if (graph) {  // capture one launch per stream, as nccl-tests -G does
    for (Local& l : locals_) MP_CUDA(cudaStreamBeginCapture(l.stream, cudaStreamCaptureModeGlobal));
    launch(s);
    for (size_t i = 0; i < n; ++i) {
      cudaGraph_t g = nullptr;
      MP_CUDA(cudaStreamEndCapture(locals_[i].stream, &g));
      MP_CUDA(cudaGraphInstantiate(&execs[i], g, 0));
      MP_CUDA(cudaGraphDestroy(g));
    }
  }
  auto once = [&] {
    if (!graph) return launch(s);
    for (size_t i = 0; i < n; ++i) MP_CUDA(cudaGraphLaunch(execs[i], locals_[i].stream));
  };
  for (int i = 0; i < t.warmup; ++i) once();
  std::vector<cudaEvent_t> start(n), stop(n);
  for (size_t i = 0; i < n; ++i) {
    MP_CUDA(cudaSetDevice(locals_[i].device));
    MP_CUDA(cudaEventCreate(&start[i]));
    MP_CUDA(cudaEventCreate(&stop[i]));
  }
  std::vector<double> times;
  for (int it = 0; it < t.iterations; ++it) {
    for (size_t i = 0; i < n; ++i) MP_CUDA(cudaEventRecord(start[i], locals_[i].stream));
    once();
    for (size_t i = 0; i < n; ++i) MP_CUDA(cudaEventRecord(stop[i], locals_[i].stream));
    double slowest = 0;
    for (size_t i = 0; i < n; ++i) {
      MP_CUDA(cudaEventSynchronize(stop[i]));
      float ms = 0;
      MP_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
      slowest = std::max(slowest, ms * 1e-3);
    }
    times.push_back(slowest);
  }
  for (size_t i = 0; i < n; ++i) {
    cudaEventDestroy(start[i]);
    cudaEventDestroy(stop[i]);
    if (execs[i]) cudaGraphExecDestroy(execs[i]);
  }
  return times;
}

CollectiveResult NcclBench::run(const CollectiveRequest& req) {
  Shape s;
  s.kind = req.collective;
  s.group = req.group_size;
  s.in_place = req.in_place;
  if (req.bytes > buffer_bytes_) throw GpuError{"message larger than the benchmark buffers"};
  s.elems = collective_floats(s.kind, s.group, req.bytes);
  if (s.in_place && !has_in_place_form(s.kind)) throw GpuError{s.kind + " has no in-place form"};
  ensure_buffers();
  check(s);
  TimingStats st = summarize(time_iterations(s, req.timing, req.graph));
  return CollectiveResult{st.median_s, st.p95_s, ""};
}

}  // namespace meshplan::calibrate::gpu
