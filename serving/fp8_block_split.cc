#include "serving/fp8_block_split.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace meshplan::serving {
namespace {

// One tensor-parallel split of a weight: `width` columns (or rows) over `ways` ranks, checked
// against the block side `block` (the block's n for an output split, k for an input split);
// `routed`: a routed expert's, which a larger ep splits fewer ways.
struct Split {
  const char* what;
  int64_t width, ways, block;
  bool routed = false;
};

// The splits one worker of layout `l` makes. Attention, dense MLPs and shared experts split
// dense_tp() ways (whole under attention-DP); routed experts tp / ep ways. Output splits are
// checked against n, input splits (row-parallel: o_proj, down) against k.
std::vector<Split> splits_of(const ModelSpec& m, const WeightBlock& b, const ServingLayout& l) {
  std::vector<Split> out;
  const int64_t t = l.dense_tp();
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    out.push_back({m.mla->q_lora_rank > 0 ? "q_b_proj output" : "q_proj output",
                   m.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim), t, b.n});
    out.push_back({"kv_b_proj output", m.heads * (a.qk_nope_head_dim + a.v_head_dim), t, b.n});
    out.push_back({"o_proj input", m.heads * a.v_head_dim, t, b.k});
  } else {
    out.push_back({"q_proj output", m.q_width(), t, b.n});
    // KV heads fewer than the ranks are replicated: each rank holds one head.
    if (t <= m.kv_heads)
      out.push_back({"k_proj and v_proj output", m.kv_width(), t, b.n});
    else
      out.push_back(
          {"k_proj and v_proj output (one KV head per rank)", m.kv_width(), m.kv_heads, b.n});
    out.push_back({"o_proj input", m.q_width(), t, b.k});
  }
  if (!m.moe || m.dense_layers() > 0) {
    out.push_back({"dense MLP gate/up output", m.ffn_hidden, t, b.n});
    out.push_back({"dense MLP down input", m.ffn_hidden, t, b.k});
  }
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    if (e.shared_experts > 0) {
      out.push_back(
          {"shared experts' gate/up output", e.expert_ffn_hidden * e.shared_experts, t, b.n});
      out.push_back({"shared experts' down input", e.expert_ffn_hidden * e.shared_experts, t, b.k});
    }
    out.push_back({"experts' gate/up output", e.expert_ffn_hidden, l.tp / l.ep, b.n, true});
    out.push_back({"experts' down input", e.expert_ffn_hidden, l.tp / l.ep, b.k, true});
  }
  return out;
}

// The first split whose shard is not whole blocks, or empty.
std::string first_partial_shard(const ModelSpec& m, const WeightBlock& b, const ServingLayout& l) {
  for (const Split& s : splits_of(m, b, l)) {
    if (s.ways < 2 || s.width % s.ways != 0) continue;  // whole, or another rule's business
    const int64_t shard = s.width / s.ways;
    if (shard % s.block == 0) continue;
    return fmt::format("its {} shard is {} / {} = {}, not a multiple of {}{}", s.what, s.width,
                       s.ways, shard, s.block,
                       s.routed ? " (a larger ep splits each expert fewer ways)" : "");
  }
  return "";
}

}  // namespace

std::string fp8_block_refusal(const ModelSpec& model, WeightFormat weights, Engine engine,
                              const ServingLayout& l) {
  if (!model.fp8_weight_block || weights != WeightFormat::fp8 || engine != Engine::sglang)
    return "";
  const WeightBlock& b = *model.fp8_weight_block;
  const std::string why = first_partial_shard(model, b, l);
  if (why.empty()) return "";
  return fmt::format(
      "refuses to load the model's FP8 checkpoint, quantized in {} × {} blocks "
      "(fp8_weight_block), split so: {}",
      b.n, b.k, why);
}

}  // namespace meshplan::serving
