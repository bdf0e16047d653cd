#include "planner/layer_cost.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention_span.h"
#include "core/layer_geometry.h"
#include "planner/memory_bound_ops.h"
#include "planner/op_sac.h"

namespace meshplan {
namespace {

// A collective's seconds, remembered where the context keeps a memo (CollectiveMemo).
double collective_s(const LayerCostContext& ctx, Collective c, const GroupShape& group,
                    double bytes) {
  return ctx.collective_memo ? ctx.collective_memo->time_s(c, group, bytes)
                             : ctx.collectives->time_s(c, group, bytes);
}

// Forward, input-gradient and weight-gradient time of `count` GEMMs C[m×n] = A[m×k]·W[k×n].
struct GemmTimes {
  double forward = 0, input_grad = 0, weight_grad = 0;
  // `count` GEMMs of the same shape run as one batched or grouped kernel. `row_tiles`: the
  // row tiles they run over those of `m` rows each (routed_row_tile_factor), which the forward
  // and input-gradient GEMMs pay (m is their output rows); the weight gradient reduces over the
  // rows, so its tiles do not depend on them.
  // `bf16`: one of the GEMMs kept in BF16 under FP8 (LayerCostContext::bf16_gemm).
  void add(const LayerCostContext& ctx, double m, double n, double k, double count = 1,
           double row_tiles = 1, bool bf16 = false) {
    if (count <= 0) return;
    m = std::max(m, 1.0);
    const bool apart = bf16 && ctx.bf16_gemm;
    const GemmModel* gemm = apart ? ctx.bf16_gemm : ctx.gemm;
    GemmMemo* memo = apart ? ctx.bf16_gemm_memo : ctx.gemm_memo;
    auto time_s = [&](double rows, double cols, double inner) {
      return memo ? memo->time_s(rows, cols, inner, count) : gemm->time_s(rows, cols, inner, count);
    };
    forward += row_tiles * time_s(m, n, k);
    input_grad += row_tiles * time_s(m, k, n);
    weight_grad += time_s(k, n, m);
  }
};

// A rank's routed experts: `rows` rows each (mean) over `local` experts, split `tp` ways, their
// row tiles over equal groups' (routed_row_tile_factor; 1 for equal groups).
struct ExpertGemms {
  double rows = 0, local = 0;
  int64_t tp = 1;
  double row_tiles = 1;
};

// The GEMMs of `map` on one TP rank (core/layer_geometry.h, rank_gemm), whose shape it returns.
// The router's and the LM head's (`lm_head`) in BF16 under FP8 (LayerCostContext::bf16_gemm).
RankGemm add_linear(GemmTimes& g, const LayerCostContext& ctx, const LinearMap& map, int64_t tp,
                    double tokens, const ExpertGemms& experts = {}, bool lm_head = false) {
  const bool routed = map.role == LinearRole::expert;
  const RankGemm r = rank_gemm(map, routed ? experts.tp : tp, tokens, experts.rows, experts.local);
  g.add(ctx, r.rows, r.out, r.in, r.count, routed ? experts.row_tiles : 1.0,
        lm_head || map.stays_bf16());
  return r;
}

// `map`'s GEMMs as one op of layer_ops (add_linear's times, its shape on this rank).
OpCost gemm_op(const LayerCostContext& ctx, const LinearMap& map, int64_t tp, double tokens,
               const ExpertGemms& experts = {}, bool lm_head = false) {
  GemmTimes g;
  const RankGemm r = add_linear(g, ctx, map, tp, tokens, experts, lm_head);
  OpCost op;
  op.name = map.name;
  op.bf16 = (lm_head || map.stays_bf16()) && ctx.bf16_gemm;
  op.rows = r.rows, op.cols = r.out, op.inner = r.in, op.count = r.count;
  op.forward_flops = 2 * r.rows * r.out * r.in * r.count;
  op.forward_s = g.forward;
  op.backward_s = g.input_grad + g.weight_grad;
  op.weight_grad_s = g.weight_grad;
  return op;
}

// Memory-bound ops as ops of layer_ops, each at the context's HBM bandwidth.
void add_memory_ops(std::vector<OpCost>& out, const LayerCostContext& ctx,
                    const std::vector<MemoryBoundOp>& ops) {
  for (const MemoryBoundOp& m : ops) {
    OpCost op;
    op.name = m.name;
    op.kind = OpKind::memory_bound;
    op.forward_bytes = m.forward_bytes, op.backward_bytes = m.backward_bytes;
    op.forward_s = m.forward_bytes / ctx.hbm_bytes_per_s;
    op.backward_s = m.backward_bytes / ctx.hbm_bytes_per_s;
    out.push_back(op);
  }
}

MemoryBoundShape memory_bound_shape(const LayerCostKey& key, bool moe_layer, double tokens) {
  return {key.tp, key.sp, moe_layer, tokens, key.expert_tp(), key.ep, key.dispatch};
}

// Core attention (scores, softmax, values) forward and backward seconds.
struct AttentionTimes {
  double forward = 0, backward = 0;
  double forward_flops = 0;  // as priced (causal halves them): LayerCostContext's ops report it
};

// Causal attention over context parallelism as Transformer Engine runs it
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py at d0067d0d):
// the sequence is split into 2·cp chunks of c tokens, rank r holding chunks r and 2·cp − 1 − r,
// so that every rank does the same work.
//   ring of `ring` ranks (AttnFuncWithCPAndKVP2P; `block` = 2c, the rank's tokens): step 0, the
//     "diagonal" section, is a causal kernel over the block; every later step runs without a
//     mask, the rank's queries against half the arriving keys ("lower-triangle") or half its
//     queries against all of them ("upper-triangle"). The steps do equal work: 1/ring of the
//     FLOPs at causal efficiency over the block, the rest unmasked over half of it (the shorter
//     side).
//   all-gather (AttnFuncWithCPAndKVAllGather): one kernel per local chunk, its c queries against
//     the gathered keys up to the chunk's end under a bottom-right causal mask: only each call's
//     last c×c tile is triangular. 2·c²/2 of the rank's 2·cp·c² pairs, 1/(2·cp) of the FLOPs, at
//     causal efficiency over c tokens, the rest unmasked over c.
// Unmasked kernels are the faster (no partly masked tiles). Anything else (no causal mask, no
// CP, a window inside the block, Ulysses' all-to-all): one kernel over the block.
AttentionModel::Times cp_attention_time(const LayerCostContext& ctx, const LayerCostKey& key,
                                        double flops, int64_t head_dim, int64_t block,
                                        bool whole_block, bool causal) {
  // `causal_share` of the FLOPs causal over `causal_len` tokens, the rest unmasked over half
  // the block.
  const auto split = [&](double causal_share, int64_t causal_len) {
    const double masked = flops * causal_share;
    const AttentionModel::Times d =
        ctx.attention->time(masked, head_dim, std::max<int64_t>(1, causal_len), true);
    const AttentionModel::Times u =
        ctx.attention->time(flops - masked, head_dim, std::max<int64_t>(1, block / 2), false);
    return AttentionModel::Times{d.forward_s + u.forward_s, d.backward_s + u.backward_s};
  };
  if (causal && whole_block) {
    if (key.cp_ring > 1) return split(1 / static_cast<double>(key.cp_ring), block);
    if (key.cp_kind == CpKind::allgather && key.cp > 1)
      return split(1 / static_cast<double>(2 * key.cp), block / 2);
  }
  return ctx.attention->time(flops, head_dim, block, causal);
}

// Flash attention on `layer` (a layer of its kind, local or global: ModelSpec::window).
AttentionTimes flash_attention_times(const LayerCostContext& ctx, const LayerCostKey& key,
                                     double tokens, int64_t layer) {
  const ModelSpec& m = *ctx.model;
  const double heads = static_cast<double>(m.heads) / static_cast<double>(key.tp);
  const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                          : static_cast<double>(m.head_dim);
  const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
  const bool causal = ctx.options->causal_attention_time;
  const double keys = mean_keys_per_query(m, layer, static_cast<double>(ctx.seq_len), causal);
  const double flops = 2 * tokens * keys * heads * (qk + v);
  // Each kernel call sees the query block of this CP rank against key blocks of the same
  // length (ring attention), so its efficiency is that of a seq_len/cp sequence; an
  // all-to-all group of cp_a2a ranks gives each the whole of their sequence (fewer heads). A
  // local layer's kernel spans its window at most.
  const int64_t cp_block = ctx.seq_len * key.cp_a2a / key.cp;
  const int64_t block = std::min(cp_block, attention_kernel_span(m, layer, ctx.seq_len));
  const AttentionModel::Times a =
      cp_attention_time(ctx, key, flops, static_cast<int64_t>(qk), std::max<int64_t>(1, block),
                        block == cp_block, causal);
  if (!m.sparse_attention) return {a.forward_s, a.backward_s, flops};
  // A sparse-attention indexer scores every key of the sequence (its whole CP block) for the
  // rank's tokens at every index head, as one more attention-shaped kernel at the profile's
  // attention efficiency for its head dim (DeepGEMM's FP8 logits kernel is not measured); its
  // backward (the indexer's KL loss, Megatron-Core --dsa-indexer-loss-coeff) as attention's.
  const double index_flops =
      tokens * indexer_flops_per_query(m, static_cast<double>(ctx.seq_len), causal);
  const AttentionModel::Times i = ctx.attention->time(
      index_flops, m.sparse_attention->index_head_dim, std::max<int64_t>(1, cp_block), causal);
  return {a.forward_s + i.forward_s, a.backward_s + i.backward_s, flops + index_flops};
}

// Every layer of a kind is priced alike (kind_forward_flops): with a window, at the mean of its
// local and global layers' times, weighted by how many of each the kind has.
AttentionTimes attention_times(const LayerCostContext& ctx, const LayerCostKey& key, double tokens,
                               bool moe_layer) {
  const ModelSpec& m = *ctx.model;
  const double heads = static_cast<double>(m.heads) / static_cast<double>(key.tp);
  const double qk = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
                          : static_cast<double>(m.head_dim);
  const double v = m.mla ? static_cast<double>(m.mla->v_head_dim) : static_cast<double>(m.head_dim);
  const double s_kv = static_cast<double>(ctx.seq_len);
  AttentionTimes t;
  if (m.attention == AttentionKind::flash) {
    const KindLayers k = ctx.kinds ? (*ctx.kinds)[moe_layer ? 1 : 0] : kind_layers(m, moe_layer);
    const AttentionTimes g = flash_attention_times(ctx, key, tokens, k.global);
    if (k.local_share == 0) return g;
    const AttentionTimes l = flash_attention_times(ctx, key, tokens, k.local);
    return {g.forward + k.local_share * (l.forward - g.forward),
            g.backward + k.local_share * (l.backward - g.backward),
            g.forward_flops + k.local_share * (l.forward_flops - g.forward_flops)};
  }
  // Standard attention: batched GEMMs per sequence and head, and the s×s scores through HBM
  // (softmax read+write, dropout mask and output when dropout is on).
  const double q_len = static_cast<double>(ctx.seq_len * key.cp_a2a / key.cp);
  const double batch = heads / static_cast<double>(key.cp_a2a) * static_cast<double>(key.mbs);
  GemmTimes g;
  g.add(ctx, q_len, s_kv, qk, batch);
  g.add(ctx, q_len, v, s_kv, batch);
  const double scores = batch * q_len * s_kv;
  const double bytes = scores * (4 + (m.dropout ? 5 : 0));
  t.forward = g.forward + bytes / ctx.hbm_bytes_per_s;
  t.backward = g.input_grad + g.weight_grad + 2 * bytes / ctx.hbm_bytes_per_s;
  t.forward_flops = 2 * batch * q_len * s_kv * (qk + v);
  return t;
}

// A rank's routed experts in an MoE layer: each expert-TP rank computes the tokens its etp group
// dispatched (gathered over the group after the all-to-all), at 1/etp of the expert width; etp
// = tp gives the TP group's tokens.
ExpertGemms routed_experts(const LayerCostContext& ctx, const LayerCostKey& key, double tokens) {
  const MoeSpec& e = *ctx.model->moe;
  ExpertGemms experts;
  experts.tp = key.expert_tp();
  experts.rows = expert_rows(e, expert_group_tokens(tokens, key.tp, experts.tp, key.sp), key.ep);
  experts.local = static_cast<double>(e.experts / key.ep);
  // Dropless routing (capacity factor 1) gives each expert a random count; a capacity above 1
  // pads every expert to it (Megatron-Core --moe-pad-expert-input-to-capacity), equal groups.
  if (e.capacity_factor == 1.0)
    experts.row_tiles = ctx.gemm_memo ? ctx.gemm_memo->row_tile_factor(experts.rows)
                                      : routed_row_tile_factor(experts.rows);
  return experts;
}

// One linear map of a layer and its GEMMs' times on one TP rank.
struct MapGemms {
  LinearMap map;
  GemmTimes times;
};

// The linear maps of the layer (the context's, else built into `built`).
const std::vector<LinearMap>& maps_of(const LayerCostContext& ctx, bool moe_layer,
                                      std::vector<LinearMap>& built) {
  if (ctx.maps) return (*ctx.maps)[moe_layer ? 1 : 0];
  built = layer_maps(*ctx.model, moe_layer);
  return built;
}

// Each map's GEMMs, in layer order (attention projections, then the dense MLP or router,
// experts and shared experts), timed once for the layer's total and its recompute modules: the
// routed experts' here, the others' from `shared`.
std::vector<MapGemms> map_gemms(const LayerCostContext& ctx, const LayerCostKey& key,
                                bool moe_layer, double tokens, const SharedCompute& shared) {
  const ExpertGemms experts = moe_layer ? routed_experts(ctx, key, tokens) : ExpertGemms{};
  std::vector<LinearMap> built;
  const std::vector<LinearMap>& maps = maps_of(ctx, moe_layer, built);
  std::vector<MapGemms> out;
  out.reserve(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    const LinearMap& map = maps[i];
    out.push_back({map, {}});
    if (map.role == LinearRole::expert) {
      add_linear(out.back().times, ctx, map, key.tp, tokens, experts);
    } else {
      const std::array<double, 3>& t = shared.map_s[i];
      out.back().times = {t[0], t[1], t[2]};
    }
  }
  return out;
}

// The sum, in layer order, of the maps `keep` selects.
template <class Keep>
GemmTimes sum_of(const std::vector<MapGemms>& maps, Keep keep) {
  GemmTimes g;
  for (const MapGemms& m : maps) {
    if (!keep(m.map)) continue;
    g.forward += m.times.forward;
    g.input_grad += m.times.input_grad;
    g.weight_grad += m.times.weight_grad;
  }
  return g;
}

// The forward seconds selective recompute of each module repeats (LayerCompute::
// module_forward_s), but the EP dispatch the moe module also repeats (added with
// communication): the attention core; the two norms (each reads and writes its 2-byte rows);
// MLA's up-projections (q_b, kv_b); a dense MLP's GEMMs and activation; the routed experts'
// activation; router and routed experts with their activation and permutation; the shared
// experts' GEMMs and activation. `permute_forward_s`: the MoE permutation's forward
// (moe_permute_op), which layer_compute prices.
std::array<double, kRecomputeModules> module_forward_times(
    const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer, double tokens,
    const std::vector<MapGemms>& maps, const AttentionTimes& attn, double permute_forward_s) {
  const ModelSpec& m = *ctx.model;
  const double hbm = ctx.hbm_bytes_per_s, h = static_cast<double>(m.hidden);
  const double tp = static_cast<double>(key.tp);
  const double act = activation_bytes_per_element(m);
  auto forward = [&](auto keep) { return sum_of(maps, keep).forward; };
  auto role = [](LinearRole r) { return [r](const LinearMap& map) { return map.role == r; }; };
  std::array<double, kRecomputeModules> t{};
  auto module = [&](RecomputeModule which) -> double& { return t[static_cast<size_t>(which)]; };
  module(RecomputeModule::core_attn) = attn.forward;
  module(RecomputeModule::layernorm) = 2 * (2 + 2) * tokens * h / (key.sp ? tp : 1.0) / hbm;
  if (m.mla) {
    module(RecomputeModule::mla_up_proj) = forward([](const LinearMap& map) {
      return std::string_view(map.name) == "q_b" || std::string_view(map.name) == "kv_b";
    });
  }
  if (!moe_layer) {
    module(RecomputeModule::mlp) =
        forward([](const LinearMap& map) {
          return map.role == LinearRole::dense && std::string_view(map.name).starts_with("mlp");
        }) +
        act * tokens * static_cast<double>(m.ffn_hidden) / tp / hbm;
    return t;
  }
  const MoeSpec& e = *m.moe;
  const double routed = tokens * static_cast<double>(e.top_k) * e.capacity_factor;
  const double fe = static_cast<double>(e.expert_ffn_hidden);
  module(RecomputeModule::moe_act) = act * routed * fe / tp / hbm;
  module(RecomputeModule::moe) = forward(role(LinearRole::router)) +
                                 forward(role(LinearRole::expert)) +
                                 module(RecomputeModule::moe_act) + permute_forward_s;
  if (e.shared_experts > 0)
    module(RecomputeModule::shared_experts) =
        forward(role(LinearRole::shared)) +
        act * tokens * fe * static_cast<double>(e.shared_experts) / tp / hbm;
  return t;
}

// The forward seconds torchtitan's op SAC repeats in the backward (planner/op_sac.h), for which
// core_attn's entry stands under MemoryOptions::selective_op_sac: the mm's it does not save (each
// the share of its map's forward GEMM time its output columns are), the routed experts' grouped
// GEMMs, and every memory-bound op of the forward (norms, RoPE, the activation function, MoE
// permutation); not the attention core, whose output it saves.
// `linears` are the layer's maps (maps_of), in `maps`' order.
double op_sac_forward_s(const ModelSpec& m, const std::vector<LinearMap>& linears,
                        const std::vector<MapGemms>& maps, double memory_forward_s) {
  const std::vector<double> shares = op_sac_recomputed_shares(m, linears);
  double s = 0;
  for (size_t i = 0; i < maps.size(); ++i) s += shares[i] * maps[i].times.forward;
  return s + memory_forward_s;
}

// Bytes per token of one TP rank's attention inputs and output, 2-byte (BF16) elements.
struct AttentionTokenBytes {
  double q = 0, kv = 0, out = 0;  // query; key and value; attention output
};

AttentionTokenBytes attention_token_bytes(const ModelSpec& m, int64_t tp) {
  const double heads = static_cast<double>(m.heads) / static_cast<double>(tp);
  AttentionTokenBytes b;
  if (m.mla) {  // per-head keys (nope + rope parts) and values: nothing is shared between heads
    const double qk = static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
    const double v = static_cast<double>(m.mla->v_head_dim);
    b.q = 2 * heads * qk, b.kv = 2 * heads * (qk + v), b.out = 2 * heads * v;
    return b;
  }
  const double d = static_cast<double>(m.head_dim);
  const double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / static_cast<double>(tp));
  b.q = b.out = 2 * heads * d;
  b.kv = 2 * 2 * kv_heads * d;
  return b;
}

// Exposed context-parallel exchange of one layer for `tokens` tokens on this rank, by
// Layout::cp_kind (Megatron-Core's cp_comm_type, implemented by TransformerEngine's
// attention/dot_product_attention/context_parallel.py):
//   ring (p2p, AttnFuncWithCPAndKVP2P): cp−1 steps passing this rank's K and V to the next,
//     each hidden behind an attention block (overlap efficiency as TP's); the backward passes
//     K, V and their gradients: twice the bytes.
//   allgather (AttnFuncWithCPAndKVAllGather): K and V all-gathered before attention, exposed
//     ("not async, and cannot be overlapped", Megatron-Core transformer_config.py); the
//     backward gathers them again and reduce-scatters dK and dV.
//   a2a (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses): Q, K and V all-to-all from the sequence
//     split to a head split before attention, the output back after it; exposed; the
//     backward the same on the gradients.
//   hybrid (a2a+p2p): the all-to-all inside groups of cp_a2a ranks (the innermost, e.g. one
//     node), then a ring over the cp/cp_a2a groups; a ring step moves the same bytes (cp_a2a
//     times the tokens, 1/cp_a2a of the heads).
void add_cp_exchange(LayerCost& c, const LayerCostContext& ctx, const LayerCostKey& key,
                     double tokens, const AttentionTimes& attn, const GroupShape& cp_group) {
  const CollectiveModel& net = *ctx.collectives;
  const AttentionTokenBytes b = attention_token_bytes(*ctx.model, key.tp);
  const GroupShape::Dim d = cp_group.dims[0];
  const double kv_bytes = tokens * b.kv;
  if (key.cp_kind == CpKind::allgather) {
    const double gathered = static_cast<double>(key.cp) * kv_bytes;
    c.cp_forward_s = collective_s(ctx, Collective::all_gather, cp_group, gathered);
    c.cp_backward_s =
        c.cp_forward_s + collective_s(ctx, Collective::reduce_scatter, cp_group, gathered);
    return;
  }
  if (key.cp_a2a > 1) {
    const GroupShape a2a = GroupShape::of(key.cp_a2a, d.stride);
    const double pass = collective_s(ctx, Collective::all_to_all, a2a, tokens * (b.q + b.kv)) +
                        collective_s(ctx, Collective::all_to_all, a2a, tokens * b.out);
    c.cp_forward_s += pass;
    c.cp_backward_s += pass;
  }
  if (key.cp_ring > 1) {
    const GroupShape ring_group = GroupShape::of(key.cp_ring, d.stride * key.cp_a2a);
    const double ring =
        static_cast<double>(key.cp_ring - 1) * net.ring_step_time_s(ring_group, kv_bytes);
    const double eta = ctx.options->tp_overlap_efficiency;
    c.cp_forward_s += exposed_after_overlap(ring, attn.forward, eta);
    c.cp_backward_s += exposed_after_overlap(2 * ring, attn.backward, eta);
  }
}

// One pass's dispatch and combine over the EP group (Layout::dispatch; Megatron-Core's
// token_dispatcher.py):
//   alltoall: each token's top_k·capacity copies all-to-all, and back;
//   allgather: every rank's tokens all-gathered over the group, the outputs reduce-scattered;
//   deepep: DeepEP (DeepSeek-V3 report §3.2.2): one copy per remote node over the network,
//     forwarded over NVLink once to each rank holding any of the token's experts (DeepEP's
//     dispatch layout: is_token_in_rank, num_tokens_per_rank), not once per expert; the network
//     and NVLink stages pipeline, so the slower one sets the time.
// `tokens`: the TP group's tokens; each rank dispatches its rank_tokens of them.
double ep_pass_s(const LayerCostContext& ctx, const LayerCostKey& key, double tokens,
                 const GroupShape& ep_group) {
  const MoeSpec& e = *ctx.model->moe;
  const CollectiveModel& net = *ctx.collectives;
  const double token_bytes = 2 * static_cast<double>(ctx.model->hidden);
  tokens = rank_tokens(tokens, key.tp, key.sp);
  const double copies = tokens * static_cast<double>(e.top_k) * e.capacity_factor * token_bytes;
  switch (key.dispatch) {
    case Dispatch::alltoall:
      return 2 * collective_s(ctx, Collective::all_to_all, ep_group, copies);
    case Dispatch::allgather: {
      const double gathered = tokens * token_bytes * static_cast<double>(ep_group.size());
      return collective_s(ctx, Collective::all_gather, ep_group, gathered) +
             collective_s(ctx, Collective::reduce_scatter, ep_group, gathered);
    }
    case Dispatch::deepep: {
      const int64_t inside = net.members_within(ep_group, 0);
      const int64_t nodes = ep_group.size() / inside;
      const double per_rank =
          tokens * e.capacity_factor * token_bytes * parts_per_token(e, ep_group.size());
      const double nvlink =
          inside > 1 ? collective_s(ctx, Collective::all_to_all,
                                    GroupShape::of(inside, ep_group.dims[0].stride), per_rank)
                     : 0;
      if (nodes <= 1) return 2 * nvlink;
      const double n = static_cast<double>(nodes);
      const double remote = parts_per_token(e, nodes) * (n - 1) / n;
      // Bytes whose cross-node share, (n − 1)/n, is one copy per remote node.
      const double network =
          collective_s(ctx, Collective::all_to_all, ep_group,
                       tokens * e.capacity_factor * token_bytes * remote * n / (n - 1));
      return 2 * std::max(nvlink, network);
    }
  }
  return 0;
}

// Exposed TP, CP and EP communication of one layer under the overlap rules of cost_model.h.
// One pass's TP collectives: two per pass of 2·T·h bytes each, all-reduces, or under sequence
// parallelism an all-gather and a reduce-scatter (Korthikanti et al. 2022), one for attention
// and one for the MLP. Under SP an MoE layer's MLP half is its experts': the routed tokens of
// the expert-TP group gathered and reduce-scattered over it (none with etp = 1), and shared
// experts' input over tp as a dense MLP's (Megatron-Core token_dispatcher.py: the all-to-all,
// then gather_from_sequence_parallel_region over the expert-TP group).
double tp_pass_s(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                 double tokens, const LayerGroups& groups) {
  const ModelSpec& m = *ctx.model;
  const double bytes = 2 * tokens * static_cast<double>(m.hidden);
  if (!key.sp) return 2 * collective_s(ctx, Collective::all_reduce, groups.tp, bytes);
  auto gather_scatter = [&](const GroupShape& group, double gathered) {
    return collective_s(ctx, Collective::all_gather, group, gathered) +
           collective_s(ctx, Collective::reduce_scatter, group, gathered);
  };
  if (!moe_layer) return 2 * gather_scatter(groups.tp, bytes);
  const MoeSpec& e = *m.moe;
  double pass = gather_scatter(groups.tp, bytes);
  if (e.shared_experts > 0) pass += gather_scatter(groups.tp, bytes);
  const int64_t etp = key.expert_tp();
  if (etp > 1) {
    // The top_k·capacity copies of each of the group's etp ranks' SP shares (bytes / tp).
    const double routed = bytes / static_cast<double>(key.tp) * static_cast<double>(etp) *
                          static_cast<double>(e.top_k) * e.capacity_factor;
    pass += gather_scatter(groups.etp, routed);
  }
  return pass;
}

// The TP and EP communication (the CP exchange is layer_cost_cp_terms').
void add_tp_ep_communication(LayerCost& c, const LayerCostContext& ctx, const LayerCostKey& key,
                             bool moe_layer, double tokens, const GemmTimes& g,
                             const AttentionTimes& attn, const LayerGroups& groups) {
  if (key.tp > 1) {
    const double pass = tp_pass_s(ctx, key, moe_layer, tokens, groups);
    // With TP overlap the communication hides behind the GEMMs of the same pass.
    const double eta = ctx.options->tp_overlap_efficiency;
    c.tp_forward_s = key.tp_overlap ? exposed_after_overlap(pass, g.forward, eta) : pass;
    c.tp_backward_s =
        key.tp_overlap ? exposed_after_overlap(pass, g.input_grad + g.weight_grad, eta) : pass;
  }
  if (moe_layer && key.ep > 1) {  // dispatch and combine all-to-alls, each pass
    const double pass = ep_pass_s(ctx, key, tokens, groups.ep);
    c.ep_forward_s = c.ep_backward_s = pass;
    if (key.ep_overlap) {
      // Overlapped with another micro-batch (Megatron-Core's 1F1B A2A overlap pairs one
      // micro-batch's forward with another's backward, as DualPipe does): the forward's
      // all-to-alls run beside that layer's backward compute and the backward's beside its
      // forward, at the overlap efficiency of TP's (SMs shared with the communication).
      const double eta = ctx.options->tp_overlap_efficiency;
      c.ep_forward_s =
          exposed_after_overlap(pass, g.input_grad + g.weight_grad + attn.backward, eta);
      c.ep_backward_s = exposed_after_overlap(pass, g.forward + attn.forward, eta);
    }
  }
}

}  // namespace

std::vector<LinearMap> layer_maps(const ModelSpec& m, bool moe_layer) {
  std::vector<LinearMap> maps = attention_linears(m);
  for (const LinearMap& map :
       moe_layer ? ffn_linears(m, m.first_moe_layer()) : mlp_linears(m, m.ffn_hidden))
    maps.push_back(map);
  return maps;
}

SharedCompute shared_compute(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer) {
  const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
  std::vector<LinearMap> built;
  const std::vector<LinearMap>& maps = maps_of(ctx, moe_layer, built);
  SharedCompute out;
  out.map_s.reserve(maps.size());
  for (const LinearMap& map : maps) {
    GemmTimes g;
    if (map.role != LinearRole::expert) add_linear(g, ctx, map, key.tp, tokens);
    out.map_s.push_back({g.forward, g.input_grad, g.weight_grad});
  }
  const AttentionTimes attn = attention_times(ctx, key, tokens, moe_layer);
  out.attention_forward_s = attn.forward;
  out.attention_backward_s = attn.backward;
  const std::vector<MemoryBoundOp> ops =
      shared_memory_bound_ops(*ctx.model, *ctx.options, memory_bound_shape(key, moe_layer, tokens));
  out.memory_forward_s = forward_bytes(ops) / ctx.hbm_bytes_per_s;
  out.memory_backward_s = backward_bytes(ops) / ctx.hbm_bytes_per_s;
  return out;
}

LayerCompute layer_compute(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                           const SharedCompute& shared) {
  const ModelSpec& m = *ctx.model;
  const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
  const std::vector<MapGemms> maps = map_gemms(ctx, key, moe_layer, tokens, shared);
  const GemmTimes g = sum_of(maps, [](const LinearMap&) { return true; });
  const AttentionTimes attn{shared.attention_forward_s, shared.attention_backward_s};
  LayerCompute out;
  out.gemm_forward_s = g.forward;
  out.gemm_input_grad_s = g.input_grad;
  out.gemm_weight_grad_s = g.weight_grad;
  out.attention_forward_s = attn.forward;
  out.attention_backward_s = attn.backward;
  out.memory_forward_s = shared.memory_forward_s;
  out.memory_backward_s = shared.memory_backward_s;
  double permute_forward_s = 0;
  if (moe_layer) {
    const MemoryBoundOp permute = moe_permute_op(m, memory_bound_shape(key, moe_layer, tokens));
    permute_forward_s = permute.forward_bytes / ctx.hbm_bytes_per_s;
    out.memory_forward_s += permute_forward_s;
    out.memory_backward_s += permute.backward_bytes / ctx.hbm_bytes_per_s;
  }
  out.module_forward_s =
      module_forward_times(ctx, key, moe_layer, tokens, maps, attn, permute_forward_s);
  if (ctx.options->memory.selective_op_sac) {
    std::vector<LinearMap> built;
    out.module_forward_s[static_cast<size_t>(RecomputeModule::core_attn)] =
        op_sac_forward_s(*ctx.model, maps_of(ctx, moe_layer, built), maps, out.memory_forward_s);
  }
  out.activations = layer_activations(m, moe_layer ? m.first_moe_layer() : 0,
                                      {key.mbs, ctx.seq_len, key.tp, key.cp, key.ep, key.sp,
                                       ctx.fp8, ctx.options->memory.fp8_saves_quantized_inputs,
                                       key.etp, ctx.options->memory.selective_op_sac});
  return out;
}

LayerCompute layer_compute(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer) {
  return layer_compute(ctx, key, moe_layer, shared_compute(ctx, key, moe_layer));
}

LayerCost layer_cost_cp_terms(const LayerCostContext& ctx, const LayerCostKey& key,
                              const GroupShape& cp_group, const LayerCompute& compute) {
  const AttentionTimes attn{compute.attention_forward_s, compute.attention_backward_s};
  LayerCost c;
  c.attention_forward_s = attn.forward;
  c.forward_s = compute.gemm_forward_s + attn.forward + compute.memory_forward_s;
  c.backward_weight_s = compute.gemm_weight_grad_s;
  c.backward_s = compute.gemm_input_grad_s + compute.gemm_weight_grad_s + attn.backward +
                 compute.memory_backward_s;
  if (key.cp > 1) {
    const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
    add_cp_exchange(c, ctx, key, tokens, attn, cp_group);
  }
  return c;
}

LayerCost layer_cost(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                     const LayerGroups& groups, const LayerCompute& compute) {
  LayerCost c = layer_cost_cp_terms(ctx, key, groups.cp, compute);
  const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
  GemmTimes g;
  g.forward = compute.gemm_forward_s;
  g.input_grad = compute.gemm_input_grad_s;
  g.weight_grad = compute.gemm_weight_grad_s;
  const AttentionTimes attn{compute.attention_forward_s, compute.attention_backward_s};
  add_tp_ep_communication(c, ctx, key, moe_layer, tokens, g, attn, groups);
  c.module_forward_s = compute.module_forward_s;
  c.activations = compute.activations;
  return c;
}

double LayerCost::selective_forward_s(RecomputeModules modules) const {
  return sum_over(modules, module_forward_s);
}

LayerCost layer_cost(const LayerCostContext& ctx, const LayerCostKey& key, bool moe_layer,
                     const LayerGroups& groups) {
  return layer_cost(ctx, key, moe_layer, groups, layer_compute(ctx, key, moe_layer));
}

std::vector<OpCost> layer_ops(const LayerCostContext& ctx, const LayerCostKey& key,
                              bool moe_layer) {
  const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
  const ExpertGemms experts = moe_layer ? routed_experts(ctx, key, tokens) : ExpertGemms{};
  std::vector<LinearMap> built;
  std::vector<OpCost> out;
  for (const LinearMap& map : maps_of(ctx, moe_layer, built))
    out.push_back(map.role == LinearRole::expert ? gemm_op(ctx, map, key.tp, tokens, experts)
                                                 : gemm_op(ctx, map, key.tp, tokens));
  const AttentionTimes attn = attention_times(ctx, key, tokens, moe_layer);
  OpCost core;
  core.name = "attention core";
  core.kind = OpKind::attention;
  core.forward_flops = attn.forward_flops;
  core.forward_s = attn.forward, core.backward_s = attn.backward;
  out.push_back(core);
  add_memory_ops(
      out, ctx,
      layer_memory_bound_ops(*ctx.model, *ctx.options, memory_bound_shape(key, moe_layer, tokens)));
  return out;
}

std::vector<OpCost> head_ops(const LayerCostContext& ctx, const LayerCostKey& key) {
  const ModelSpec& m = *ctx.model;
  const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
  std::vector<OpCost> out;
  // The model's logits and loss, then each multi-token-prediction module's projection, logits
  // and loss (its layer is priced as a layer of its kind).
  for (int64_t depth = 0; depth <= m.mtp_layers; ++depth) {
    if (depth > 0) out.push_back(gemm_op(ctx, mtp_projection_linear(m), key.tp, tokens));
    out.push_back(gemm_op(ctx, lm_head_linear(m), key.tp, tokens, {}, true));
    add_memory_ops(out, ctx, loss_memory_bound_ops(m, key.tp, tokens));
  }
  return out;
}

HeadCost lm_head_cost(const LayerCostContext& ctx, const LayerCostKey& key) {
  const ModelSpec& m = *ctx.model;
  const double tokens = static_cast<double>(key.mbs * ctx.seq_len / key.cp);
  GemmTimes g;
  add_linear(g, ctx, lm_head_linear(m), key.tp, tokens, {}, true);
  const std::vector<MemoryBoundOp> loss = loss_memory_bound_ops(m, key.tp, tokens);
  HeadCost c;
  c.forward_s = g.forward + forward_bytes(loss) / ctx.hbm_bytes_per_s;
  c.backward_s = g.input_grad + g.weight_grad + backward_bytes(loss) / ctx.hbm_bytes_per_s;
  if (m.mtp_layers == 0) return c;
  // Each multi-token-prediction module runs the head and loss again on its own hidden states,
  // behind its projection (its layer is priced as a layer of its kind).
  GemmTimes p;
  add_linear(p, ctx, mtp_projection_linear(m), key.tp, tokens);
  const auto mtp = static_cast<double>(m.mtp_layers);
  c.forward_s += mtp * (c.forward_s + p.forward);
  c.backward_s += mtp * (c.backward_s + p.input_grad + p.weight_grad);
  return c;
}

}  // namespace meshplan
