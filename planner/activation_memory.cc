#include "planner/activation_memory.h"

#include <algorithm>
#include <vector>

#include "core/layer_geometry.h"
#include "planner/op_sac.h"

namespace meshplan {
namespace {

constexpr double kAct = 2;   // bytes per 16-bit activation element
constexpr double kMask = 1;  // bytes per dropout-mask element

// Per-GPU widths after tensor parallelism.
struct Widths {
  double q, k, v, attn_out;  // columns of Q, K, V and of the attention output
  double heads;              // attention heads on this GPU
};

Widths widths(const ModelSpec& m, int64_t tp) {
  Widths w;
  w.heads = static_cast<double>(m.heads) / static_cast<double>(tp);
  if (m.mla) {
    w.q = w.heads * static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
    w.k = w.q;
    w.v = w.heads * static_cast<double>(m.mla->v_head_dim);
  } else {
    double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / static_cast<double>(tp));
    w.q = w.heads * static_cast<double>(m.head_dim);
    w.k = kv_heads * static_cast<double>(m.head_dim);
    w.v = w.k;
  }
  w.attn_out = m.mla ? w.v : w.q;
  return w;
}

// Intermediates of one MLP of width `ffn` over `tokens` tokens, split by tp: the activation
// function's input (gate and up for SwiGLU) and the down-projection's input.
double ffn_intermediates(const ModelSpec& m, double tokens, double ffn, double tp, double lin) {
  double act_in = m.mlp == MlpKind::swiglu ? 2 * ffn : ffn;
  return tokens * (kAct * act_in + lin * ffn) / tp;
}

}  // namespace

ActivationShape activation_shape(const Layout& l, int64_t seq_len) {
  ActivationShape a{l.mbs, seq_len, l.tp, l.cp, l.ep, l.sp && l.tp > 1};
  a.etp = l.expert_tp();
  return a;
}

LayerActivations layer_activations(const ModelSpec& m, int64_t layer, const ActivationShape& a) {
  const double t = static_cast<double>(a.tp);
  const double s = static_cast<double>(a.seq_len) / static_cast<double>(a.cp);  // local queries
  const double s_kv = s;  // flash/ring attention holds one K/V block at a time
  const double tokens = s * static_cast<double>(a.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double rep = a.sp ? 1.0 / t : 1.0;  // share of a TP-replicated tensor kept per GPU
  const Widths w = widths(m, a.tp);
  LayerActivations out;
  out.layer_input = kAct * tokens * h * rep;
  // Bytes per stored linear-layer input element: its FP8 cast where the FP8 stack saves that.
  const bool fp8_inputs = a.fp8 && a.fp8_quantized_inputs;
  const double lin = fp8_inputs ? 1 : kAct;

  // Attention block: norm input, QKV input, Q, K, V, out-projection input, dropout mask.
  double attn = (kAct + lin) * tokens * h * rep + kAct * tokens * (w.q + w.k + w.v) +
                lin * tokens * w.attn_out;
  auto module = [&](RecomputeModule which) -> double& {
    return out.module_bytes[static_cast<size_t>(which)];
  };
  module(RecomputeModule::layernorm) = 2 * lin * tokens * h * rep;  // both norms' outputs
  if (m.mla) module(RecomputeModule::mla_up_proj) = kAct * tokens * (w.q + w.k + w.v);
  // Flash attention saves its BF16 output for its own backward (FusedAttnFunc.forward saves
  // q, k, v, out: transformer_engine/pytorch/attention/dot_product_attention/backends.py). In
  // BF16 the out-projection's saved input is that same tensor; under FP8 it keeps its own FP8
  // cast beside it ("linear_proj also saves the quantized tensor of this output",
  // megatron/core/transformer/attention.py, which turns on save_original_input to avoid it for
  // the non-delayed recipes with TE 2.6+; the presets here pair Transformer Engine with delayed
  // scaling). Recomputing the attention core (Megatron's core_attn) drops the BF16 output.
  if (fp8_inputs && m.attention == AttentionKind::flash)
    out.attention_scores = kAct * tokens * w.attn_out;
  if (m.mla) {  // compressed latents and their normalised copies (duplicated across TP)
    attn += 2 * kAct * tokens *
            static_cast<double>(m.mla->q_lora_rank + m.mla->kv_lora_rank + m.mla->qk_rope_head_dim);
  }
  attn += indexer_activation_bytes(m, a);  // 0 without sparse attention
  if (m.dropout) attn += kMask * tokens * h * rep;
  if (m.attention == AttentionKind::flash) {
    attn += 4 * tokens * w.heads;  // fp32 log-sum-exp per query and head
  } else {
    double scores = tokens * w.heads * s_kv;
    out.attention_scores = kAct * scores + (m.dropout ? (kMask + kAct) * scores : 0);
  }
  out.attention_other = attn;
  module(RecomputeModule::core_attn) = out.attention_scores;

  // MLP block: norm input, MLP input, intermediates, dropout mask.
  double mlp = (kAct + lin) * tokens * h * rep + (m.dropout ? kMask * tokens * h * rep : 0);
  if (!m.is_moe_layer(layer)) {
    const double intermediates =
        ffn_intermediates(m, tokens, static_cast<double>(m.ffn_hidden), t, lin);
    mlp += intermediates;
    module(RecomputeModule::mlp) = intermediates;
  } else {
    const MoeSpec& e = *m.moe;
    const double fe = static_cast<double>(e.expert_ffn_hidden);
    // Each EP rank receives, on average, top_k·capacity copies of its expert-TP group's tokens
    // (all-gathered over that group after dispatch when experts are TP-split): the TP group's
    // tokens when etp = tp, etp/tp of them under SP with etp < tp.
    const double etp = static_cast<double>(a.etp > 0 ? a.etp : a.tp);
    const double routed = tokens * (etp / t) * static_cast<double>(e.top_k) * e.capacity_factor;
    const double routed_bytes = 4 * tokens * static_cast<double>(e.experts) * rep +  // router
                                (lin + kAct) * routed * h +  // dispatched input, expert output
                                ffn_intermediates(m, routed, fe, etp, lin);
    const double shared =
        ffn_intermediates(m, tokens, fe * static_cast<double>(e.shared_experts), t, lin);
    mlp += routed_bytes + shared;
    module(RecomputeModule::moe) = routed_bytes;
    module(RecomputeModule::moe_act) = lin * routed * fe / etp;  // the down-projections' inputs
    module(RecomputeModule::shared_experts) = shared;
  }
  out.mlp = mlp;
  if (a.op_sac)
    module(RecomputeModule::core_attn) =
        std::max(0.0, out.no_recompute() - op_sac_stored_bytes(m, layer, a));
  return out;
}

double indexer_activation_bytes(const ModelSpec& m, const ActivationShape& a) {
  if (!m.sparse_attention) return 0;
  constexpr double kIndexBytes = 8;  // torch.topk's int64 indices
  const SparseAttentionSpec& d = *m.sparse_attention;
  const double heads = static_cast<double>(d.index_heads),
               dim = static_cast<double>(d.index_head_dim);
  const double b = static_cast<double>(a.micro_batch);
  const double local_rows = static_cast<double>(a.seq_len) / static_cast<double>(a.cp) * b;
  const double rows = a.sp ? local_rows / static_cast<double>(a.tp) : local_rows;
  const double keys = static_cast<double>(std::min(d.top_k, a.seq_len));
  double bytes = rows * (kAct * heads * dim + kAct * heads + kIndexBytes * keys) +
                 kAct * dim * (static_cast<double>(a.seq_len) * b + local_rows);
  if (a.sp && m.mla)
    bytes += kAct * local_rows * static_cast<double>(m.hidden + m.mla->q_lora_rank);
  return bytes;
}

double op_sac_stored_bytes(const ModelSpec& m, int64_t layer, const ActivationShape& a) {
  const double tokens = static_cast<double>(a.seq_len) / static_cast<double>(a.cp) *
                        static_cast<double>(a.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double rep = a.sp ? 1.0 / static_cast<double>(a.tp) : 1.0;
  const std::vector<LinearMap> maps = layer_linears(m, layer);
  double bytes = kAct * tokens * h * rep;  // the block's input
  for (const OpSacMm& mm : op_sac_mms(m, maps)) {
    if (!mm.saved) continue;
    const LinearMap& map = maps[mm.map];
    const double copies = map.role == LinearRole::shared ? static_cast<double>(map.copies) : 1.0;
    bytes += kAct * tokens * mm.share * map.rank_out(a.tp) * copies;
  }
  const Widths w = widths(m, a.tp);
  bytes += kAct * tokens * w.attn_out + 4 * tokens * w.heads;  // SDPA's output and log-sum-exp
  if (a.tp > 1) bytes += 2 * kAct * tokens * h * rep;          // attention's and the MLP's
  return bytes;
}

double LayerActivations::dropped(RecomputeModules modules) const {
  return sum_over(modules, module_bytes);
}

double LayerActivations::largest_module(RecomputeModules modules) const {
  double most = 0;
  for (size_t i = 0; i < kRecomputeModules; ++i)
    if (has(modules, static_cast<RecomputeModule>(i))) most = std::max(most, module_bytes[i]);
  return most;
}

bool attention_core_stores_activations(const ModelSpec& m, bool fp8, bool fp8_quantized_inputs) {
  ActivationShape unit;
  unit.seq_len = 1;
  unit.fp8 = fp8, unit.fp8_quantized_inputs = fp8_quantized_inputs;
  return layer_activations(m, 0, unit).attention_scores > 0;
}

double logits_bytes(const ModelSpec& m, const ActivationShape& a) {
  double tokens = static_cast<double>(a.seq_len / a.cp * a.micro_batch);
  return 6.0 * tokens * static_cast<double>(m.vocab) / static_cast<double>(a.tp) *
         static_cast<double>(1 + m.mtp_layers);
}

}  // namespace meshplan
