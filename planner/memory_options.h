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
  // FP8 training keeps each FP8 linear layer's weight cast to FP8 and its transpose (1 byte
  // each per parameter) from the first micro-batch of a step to the last: Transformer Engine's
  // Linear caches them when told is_first_microbatch ("allows caching of the FP8 versions of
  // the weights", te.Linear.forward docs), which Megatron-Core's TE layers pass
  // (megatron/core/extensions/transformer_engine.py). Only the transformer layers' linear
  // maps run in FP8 (embedding and LM head stay BF16); ZeRO-3 shards weights and casts what it
  // gathers, so nothing stays cached.
  double fp8_weight_cache_bytes_per_param = 2;
  // FP8 parameters (Megatron-LM --fp8-param-gather, NeMo fp8_params, TE fp8_model_init): the
  // linear layers' weights are stored in FP8 instead of BF16, so the FP8 weight (1 byte) and its
  // cached transpose (1 byte) take the place of the 2-byte weight: nothing extra. ZeRO's
  // parameter all-gathers move them as FP8 too (gathered_bytes_per_param, memory_model.h), as
  // torchtitan's float8.enable_fsdp_float8_all_gather does with FSDP2.
  bool fp8_params = false;
  // Delayed-scaling state of every FP8 GEMM, kept for the whole run: Transformer Engine gives
  // each GEMM of a module 3 forward quantizers (input, weight, output) and 2 backward ones
  // (grad output, grad input) (TransformerEngineBaseModule.set_meta_tensor, num_fp8_tensors in
  // transformer_engine/pytorch/module/base.py), each with an fp32 scale, its inverse and an
  // fp32 amax history of amax_history_len steps (DelayedScalingRecipeState in
  // transformer_engine/pytorch/quantization.py holds scale and amax_history; scale_inv travels
  // with each FP8 tensor, in TE 1.x's fp8_meta beside them): 5 × 4 × (2 + len) bytes per GEMM.
  // The history length is the framework's: Megatron-Core TransformerConfig.fp8_amax_history_len
  // = 1 (the default here), NeMo's bf16_with_fp8_mixed 1024, TE's DelayedScaling 1024. 0: the
  // recipe keeps no state (current scaling: Float8CurrentScalingQuantizer computes the amax of
  // every tensor it casts; torchao's dynamic scaling likewise).
  int64_t fp8_amax_history_len = 1;
  // What the linear layers save for the backward pass under FP8. Transformer Engine's Linear,
  // LayerNormLinear and LayerNormMLP save the FP8 cast of their input for the weight-gradient
  // GEMM (only its column-wise, transposed data, or the row-wise data that sequence
  // parallelism all-gathers again: 1 byte per element; save_original_input defaults to False;
  // _Linear.forward in module/linear.py). torchao's Float8Linear saves the BF16 input and casts
  // it again in the backward (matmul_with_hp_or_float8_args.forward, torchao/float8/
  // float8_linear.py): false for the PyTorch-native stacks (FSDP2, torchtitan).
  bool fp8_saves_quantized_inputs = true;
  // What recompute=selective saves and repeats: false, Megatron-Core's recompute modules
  // (Layout::recompute_modules); true, torchtitan's per-op policy (planner/op_sac.h), for which
  // the default module set stands (its launcher takes no other): the default set then drops what
  // op SAC does not save and repeats what it recomputes.
  bool selective_op_sac = false;
};

}  // namespace meshplan
