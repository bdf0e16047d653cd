// Whether an engine loads a block-quantized FP8 checkpoint (ModelSpec::fp8_weight_block) under a
// layout's tensor-parallel splits. SGLang refuses to start where a shard of a block-quantized
// weight is not whole blocks: its linear layers check every output partition against the block's
// n and the input partition against its k (validate_block_quant_shapes,
// python/sglang/srt/layers/quantization/fp8.py: "Weight output_partition_size = … is not
// divisible by weight quantization block_n = …"; DeepSeek-R1's dense 18432 / 32 = 576 on tp 32,
// sgl-project/sglang#3345), and its fused MoE checks the experts' intermediate shard, against k
// too where it is split (Fp8MoEMethod.create_weights: "The output_size of gate's and up's weight
// = 192 is not divisible by weight quantization block_n = 128"; still so in SGLang 0.5.21,
// 2026-10). vLLM had the same checks (Qwen3-235B-A22B-FP8 on tp 8, vllm-project/vllm#17569,
// 2025-05), but since PR 30836 (2025-12) lets merged QKV and gate/up layers mismatch, and
// AIConfigurator measured vLLM 0.18.0 serving MiniMax-M2.5's FP8 release on tp 8 H200s with
// 1536 / 8 = 192-wide expert shards (54 rows of silicon_sample.csv at 095f58a), so vLLM is not
// restricted here. TensorRT-LLM sizes its block scales by ceiling division
// (DeepSeekFP8BlockScalesFusedMoEMethod.create_weights, tensorrt_llm/_torch/modules/fused_moe)
// and is not restricted either. A weight left whole (tensor parallelism 1) is the checkpoint's
// own shape and is not checked.
#pragma once

#include <string>

#include "core/model_spec.h"
#include "serving/serving_options.h"

namespace meshplan::serving {

// Why `engine` would refuse to load `model`'s FP8 checkpoint in `weights` on one worker of
// layout `l` (its tp, ep and attention-DP; a disaggregated layout's prefill worker is asked
// apart, as its own prefill_worker()): the first split weight whose shard is not whole blocks,
// named with its sizes, as "refuses to load … split so: its … shard is …" (the caller names the
// engine); empty where it loads (no FP8 block checkpoint, weights not FP8, an engine other than
// SGLang, or every shard whole blocks).
std::string fp8_block_refusal(const ModelSpec& model, WeightFormat weights, Engine engine,
                              const ServingLayout& l);

}  // namespace meshplan::serving
