#include "serving/serving_options.h"

#include <fmt/format.h>

#include <algorithm>

namespace meshplan::serving {

const char* to_string(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16:
      return "bf16";
    case WeightFormat::fp8:
      return "fp8";
    case WeightFormat::int4:
      return "int4";
    case WeightFormat::mxfp4:
      return "mxfp4";
  }
  return "?";
}

const char* to_string(KvFormat f) { return f == KvFormat::fp8 ? "fp8" : "bf16"; }

const char* to_string(Engine e) {
  switch (e) {
    case Engine::vllm:
      return "vllm";
    case Engine::sglang:
      return "sglang";
    case Engine::trtllm:
      return "trtllm";
  }
  return "?";
}

// AWQ (mit-han-lab/llm-awq) and GPTQ (AutoGPTQ) quantize in groups of 128 weights, each with an
// FP16 scale (zero points packed in 4 bits are ignored here).
constexpr double kInt4GroupSize = 128;
constexpr double kInt4ScaleBytes = 2;
// OCP Microscaling Formats (MX) v1.0 §5: MXFP4 blocks of 32 E2M1 elements, one E8M0 scale each.
constexpr double kMxBlockSize = 32;
constexpr double kMxScaleBytes = 1;
constexpr double kBf16Bytes = 2;

double bytes_per_weight(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16:
      return 2;
    case WeightFormat::fp8:
      return 1;
    case WeightFormat::int4:
      return 0.5 + kInt4ScaleBytes / kInt4GroupSize;
    case WeightFormat::mxfp4:
      return 0.5 + kMxScaleBytes / kMxBlockSize;
  }
  return 2;
}

double bytes_per_weight(WeightFormat f, const LinearMap& map) {
  if (map.stays_bf16()) return kBf16Bytes;
  if (f == WeightFormat::mxfp4 && map.role != LinearRole::expert) return kBf16Bytes;
  return bytes_per_weight(f);
}

double bytes_per_kv_element(KvFormat f) { return f == KvFormat::fp8 ? 1 : 2; }

ServingLayout ServingLayout::prefill_worker() const {
  ServingLayout p;
  p.tp = prefill_tp;
  p.ep = std::min(ep, prefill_tp);
  return p;
}

std::string short_text(const ServingLayout& l) {
  return fmt::format("tp{} pp{} ep{} x{} b{}{}{}", l.tp, l.pp, l.ep, l.replicas, l.max_batch,
                     l.attention_dp ? " adp" : "",
                     l.disaggregated()
                         ? fmt::format(" | prefill tp{} x{}", l.prefill_tp, l.prefill_replicas)
                         : "");
}

std::string layout_text(const ServingLayout& l) {
  return fmt::format("tp={},pp={},ep={},replicas={},max_batch={}{}{}", l.tp, l.pp, l.ep, l.replicas,
                     l.max_batch, l.attention_dp ? ",attention_dp=1" : "",
                     l.disaggregated() ? fmt::format(",prefill_tp={},prefill_replicas={}",
                                                     l.prefill_tp, l.prefill_replicas)
                                       : "");
}

}  // namespace meshplan::serving
