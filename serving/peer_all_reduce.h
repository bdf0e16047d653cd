// The all-reduce an inference engine runs for tensor parallelism inside one NVLink domain.
//
// vLLM (custom_all_reduce, on by default for 2, 4, 6 or 8 fully NVLink-connected GPUs),
// TensorRT-LLM (AllReduceStrategy AUTO: its ONESHOT and TWOSHOT kernels below NCCL's sizes) and
// SGLang (its custom all-reduce, on by default) replace NCCL for the small per-layer
// all-reduces of decode with kernels that read the peers' buffers directly over NVLink:
// - one-shot: every rank reads all n − 1 peers' buffers and sums them:
//   t = α + (n − 1)·S / B;
// - two-shot: a reduce-scatter then an all-gather over the same buffers:
//   t = 2α + 2·(n − 1)/n·S / B;
// with α the kernel's latency and B the bandwidth at which one GPU reads its peers
// (core/profile.h PeerAllReduceFit). An engine uses whichever of them and NCCL is fastest for
// the size (vLLM's thresholds, TensorRT-LLM's AUTO), so a step takes the minimum of the three.
// Groups that leave the NVLink domain, buffers of the fit's max_bytes or more (vLLM's
// CustomAllreduce takes buffers below its 8 MiB max_size) and profiles without the fit use NCCL's
// alone, and so do group sizes the kernels do not serve: vLLM's and SGLang's CustomAllreduce run on
// _SUPPORTED_WORLD_SIZES = [2, 4, 6, 8] only (vllm/distributed/device_communicators/
// custom_all_reduce.py; sglang/srt/distributed/device_communicators/custom_all_reduce.py, adapted
// from vLLM's), and TensorRT-LLM's on an even count of at most MAX_RANKS_PER_NODE = 8 ranks
// (isCustomAllReduceSupported, cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp;
// customAllReduceKernels.h).
#pragma once

#include <cstdint>

#include "core/profile.h"

namespace meshplan::serving {

// Seconds of the faster of the one-shot and two-shot kernels over `ranks` GPUs, `bytes` per
// rank. REQUIRES: fit.known(), ranks ≥ 2.
double peer_all_reduce_s(const PeerAllReduceFit& fit, int64_t ranks, double bytes);

// Whether the engines' peer kernels serve a group of `ranks` GPUs: 2, 4, 6 or 8.
bool peer_all_reduce_serves(int64_t ranks);

}  // namespace meshplan::serving
