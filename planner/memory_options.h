// Documented defaults of the memory model; every field is printed in the report's assumptions.
#pragma once

#include <cstdint>

namespace meshplan {

struct MemoryOptions {
  // Mixed-precision Adam (Rajbhandari et al. 2019 §3.1): 2-byte weights, K = 12 bytes of
  // optimizer state per parameter (fp32 master weights, momentum, variance).
  double weight_bytes_per_param = 2;
  double optimizer_bytes_per_param = 12;
  // Gradients: Megatron-LM keeps fp32 "main" gradients for bf16 training
  // (accumulate_allreduce_grads_in_fp32), 4 bytes; ZeRO's paper assumes 2 (fp16 gradients).
  double grad_bytes_per_param = 4;
  // CUDA context plus cuBLAS/cuDNN handles and workspaces of a PyTorch process: about
  // 0.5-1 GiB on Hopper as nvidia-smi shows for an idle trainer; we take 1 GiB.
  int64_t cuda_context_bytes = int64_t{1} << 30;
  // NCCL buffers per communicator a rank belongs to (TP, CP, PP, DP, EP groups larger than
  // one): NCCL_BUFFSIZE 4 MiB × 2 directions × up to 32 channels = 256 MiB (NCCL defaults).
  int64_t nccl_bytes_per_communicator = int64_t{256} << 20;
  // PyTorch caching-allocator fragmentation: reserved exceeds allocated by a few percent in
  // long-running training; 5% of the tensor bytes.
  double allocator_slack_fraction = 0.05;
  // ZeRO-3 gathered parameters held at once. 0: two whole layers, the unit being computed and
  // the one prefetched (PyTorch FSDP wraps each transformer block as a unit). DeepSpeed bounds
  // them by stage3_max_live_parameters (default 1e9 parameters; deepspeed.ai/docs/config-json).
  double zero3_max_live_params = 0;
};

}  // namespace meshplan
