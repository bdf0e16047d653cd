#include "planner/cost_model.h"

#include <algorithm>

#include "planner/activation_memory.h"
#include "planner/flop_count.h"
#include "planner/param_count.h"
#include "planner/profile_defaults.h"

namespace meshplan {

GroupShape tp_group(const Layout& l) { return GroupShape::of(l.tp, l.stride(Dim::tp)); }
GroupShape cp_group(const Layout& l) { return GroupShape::of(l.cp, l.stride(Dim::cp)); }

// EP groups are the innermost ep ranks of the combined cp × dp ranks (Megatron-core).
GroupShape ep_group(const Layout& l) {
  return GroupShape::of(l.ep, std::min(l.stride(Dim::cp), l.stride(Dim::dp)));
}

GroupShape dp_group(const Layout& l) {
  GroupShape g;
  g.dims[0] = {l.dp, l.stride(Dim::dp)};
  g.dims[1] = {l.cp, l.stride(Dim::cp)};
  g.dim_count = 2;
  return g;
}

GroupShape expert_dp_group(const Layout& l) {
  return GroupShape::of(l.dp * l.cp / l.ep, std::min(l.stride(Dim::cp), l.stride(Dim::dp)) * l.ep);
}

CostModel::CostModel(const ModelSpec& m, const ClusterSpec& c, const CalibrationProfile& p,
                     const TrainingSpec& t, const CostOptions& o)
    : model_(m),
      cluster_(c),
      profile_(p),
      training_(t),
      options_(o),
      gemm_(profile_, cluster_.gpu, t.precision),
      collectives_(profile_, cluster_, o.collective_algorithm) {
  context_.model = &model_;
  context_.gemm = &gemm_;
  context_.collectives = &collectives_;
  context_.options = &options_;
  context_.hbm_bytes_per_s = hbm_bandwidth(profile_, cluster_.gpu);
  context_.attention_flops_per_s =
      attention_efficiency(profile_) * cluster_.gpu.peak_flops_per_s(t.precision);
  context_.seq_len = t.seq_len;
  const double tokens = static_cast<double>(t.global_batch * t.seq_len);
  const double seq = static_cast<double>(t.seq_len);
  LayerFlops dense = layer_forward_flops(m, 0, tokens, seq, o.flops);
  LayerFlops moe = m.moe ? layer_forward_flops(m, m.moe->first_dense_layers, tokens, seq, o.flops) : dense;
  dense_layer_flops_ = dense.total();
  dense_attention_flops_ = dense.attention_core;
  moe_layer_flops_ = moe.total();
  moe_attention_flops_ = moe.attention_core;
  head_flops_ = lm_head_forward_flops(m, tokens);
}

const CostModel::LayerPair& CostModel::layer_costs(const Layout& l) {
  const GroupShape ep = ep_group(l);
  auto key = std::make_tuple(l.tp, l.cp, l.ep, l.mbs, l.stride(Dim::cp), ep.dims[0].stride,
                             l.sp && l.tp > 1, l.tp_overlap);
  auto it = layer_cache_.find(key);
  if (it != layer_cache_.end()) return it->second;
  LayerCostKey k{l.tp, l.cp, l.ep, l.mbs, l.sp && l.tp > 1, l.tp_overlap};
  LayerPair pair;
  pair.dense = layer_cost(context_, k, false, tp_group(l), cp_group(l), ep);
  pair.moe = model_.moe ? layer_cost(context_, k, true, tp_group(l), cp_group(l), ep) : pair.dense;
  return layer_cache_.emplace(key, pair).first->second;
}

const std::vector<StageParams>& CostModel::params_of(const Layout& l) {
  auto key = std::make_tuple(l.tp, l.ep, l.pp, l.vpp);
  auto it = params_cache_.find(key);
  if (it != params_cache_.end()) return it->second;
  return params_cache_.emplace(key, stage_params(model_, l)).first->second;
}

const std::vector<StageLayerMix>& CostModel::mix_of(const Layout& l) {
  auto key = std::make_pair(l.pp, l.vpp);
  auto it = mix_cache_.find(key);
  if (it != mix_cache_.end()) return it->second;
  return mix_cache_.emplace(key, stage_layer_mix(model_, l)).first->second;
}

namespace {

// Layers of a stage recomputed in full: dense ones first (they come first in the model).
struct FullRecompute {
  int64_t dense = 0, moe = 0;
};

FullRecompute full_recompute(const Layout& l, const StageLayerMix& mix) {
  const int64_t full = l.recompute == Recompute::full ? mix.layers()
                                                      : std::min(l.recompute_layers, mix.layers());
  const int64_t dense = std::min(full, mix.dense_layers);
  return {dense, full - dense};
}

}  // namespace

StageTiming CostModel::stage_timing(const Layout& l, const StageLayerMix& mix, const LayerPair& c,
                                    int64_t stage) const {
  const double nd = static_cast<double>(mix.dense_layers), nm = static_cast<double>(mix.moe_layers);
  const FullRecompute full = full_recompute(l, mix);
  const double fd = static_cast<double>(full.dense), fm = static_cast<double>(full.moe);
  StageTiming s;
  s.stage = stage;
  s.forward_s = nd * c.dense.forward_s + nm * c.moe.forward_s;
  s.backward_s = nd * c.dense.backward_s + nm * c.moe.backward_s;
  s.backward_weight_s = nd * c.dense.backward_weight_s + nm * c.moe.backward_weight_s;
  s.recompute_s = fd * c.dense.forward_s + fm * c.moe.forward_s;
  if (l.recompute == Recompute::selective) {
    s.recompute_s += (nd - fd) * c.dense.attention_forward_s + (nm - fm) * c.moe.attention_forward_s;
  }
  // Communication of the forward, the backward, and the recomputed forward.
  s.tp_s = (nd + fd) * c.dense.tp_forward_s + nd * c.dense.tp_backward_s +
           (nm + fm) * c.moe.tp_forward_s + nm * c.moe.tp_backward_s;
  s.cp_s = (nd + fd) * c.dense.cp_forward_s + nd * c.dense.cp_backward_s +
           (nm + fm) * c.moe.cp_forward_s + nm * c.moe.cp_backward_s;
  s.ep_s = (nm + fm) * c.moe.ep_forward_s + nm * c.moe.ep_backward_s;
  if (stage == l.pp - 1) {
    LayerCostKey key{l.tp, l.cp, l.ep, l.mbs, l.sp && l.tp > 1, l.tp_overlap};
    HeadCost head = lm_head_cost(context_, key);
    s.forward_s += head.forward_s;
    s.backward_s += head.backward_s;
  }
  return s;
}

double CostModel::dp_exposed_s(const Layout& l, const StageParams& p, const StageTiming& st,
                               const StageLayerMix& mix, int64_t micro_batches) const {
  if (l.dp * l.cp == 1) return 0;
  const MemoryOptions& mo = options_.memory;
  const double bucket = std::max(options_.dp_bucket_params, 1e6 * static_cast<double>(l.dp));
  double exposed = 0;
  auto sync = [&](const GroupShape& g, double params) {
    if (g.size() <= 1 || params <= 0) return;
    const double grads = params * mo.grad_bytes_per_param;
    const double last_grads = std::min(params, bucket) * mo.grad_bytes_per_param;
    const double weights = params * mo.weight_bytes_per_param;
    const double last_weights = std::min(params, bucket) * mo.weight_bytes_per_param;
    const Collective reduce = l.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
    const double t_reduce = collectives_.time_s(reduce, g, grads);
    const double t_last = collectives_.time_s(reduce, g, last_grads);
    const double per_mb_window = options_.overlap_grad_reduce ? st.backward_s + st.recompute_s : 0;
    if (l.zero <= 1) {
      exposed += std::max(t_last, t_reduce - per_mb_window);
    } else {  // reduce-scatter after every micro-batch's backward
      exposed += static_cast<double>(micro_batches - 1) * std::max(0.0, t_reduce - per_mb_window) +
                 std::max(t_last, t_reduce - per_mb_window);
    }
    if (l.zero == 1 || l.zero == 2) {  // updated weights gathered behind the next forward
      const double t_gather = collectives_.time_s(Collective::all_gather, g, weights);
      exposed += std::max(collectives_.time_s(Collective::all_gather, g, last_weights),
                          t_gather - st.forward_s);
    }
    if (l.zero == 3 && mix.layers() > 0) {  // per layer, prefetched one ahead, fwd and bwd
      const double layers = static_cast<double>(mix.layers());
      const double t_layer = collectives_.time_s(Collective::all_gather, g, weights / layers);
      const double fwd_layer = st.forward_s / layers, bwd_layer = st.backward_s / layers;
      exposed += static_cast<double>(micro_batches) *
                 (t_layer + (layers - 1) * (std::max(0.0, t_layer - fwd_layer) +
                                            std::max(0.0, t_layer - bwd_layer)));
    }
  };
  sync(dp_group(l), static_cast<double>(p.dense_per_gpu));
  sync(expert_dp_group(l), static_cast<double>(p.expert_per_gpu));
  return exposed;
}

void CostModel::fill_pipeline(const Layout& l, const std::vector<StageTiming>& st, Estimate& e) const {
  const double m = static_cast<double>(e.micro_batches);
  size_t critical = 0;
  double t_max = 0, t_sum = 0, zb_bubble = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    const double t = st[i].per_micro_batch_s();
    if (t > t_max) {
      t_max = t;
      critical = i;
    }
    t_sum += t;
    zb_bubble = std::max(zb_bubble, t - 2 * st[i].backward_weight_s);
  }
  const double p = static_cast<double>(l.pp);
  double pipe = m * t_max;
  if (l.pp > 1) {
    switch (l.schedule) {
      case Schedule::gpipe:
      case Schedule::one_f_one_b: pipe = (m - 1) * t_max + t_sum; break;
      case Schedule::interleaved: pipe = m * t_max + (t_sum - t_max) / static_cast<double>(l.vpp); break;
      case Schedule::zb_h1: pipe = m * t_max + (p - 1) * std::max(0.0, zb_bubble); break;
    }
  }
  const StageTiming& c = st[critical];
  TimeBreakdown& b = e.breakdown;
  b.compute_s = m * (c.forward_s + c.backward_s);
  b.recompute_s = m * c.recompute_s;
  b.tp_s = m * c.tp_s;
  b.cp_s = m * c.cp_s;
  b.ep_s = m * c.ep_s;
  b.bubble_s = pipe - m * t_max;
  if (l.pp > 1) {
    const double tokens = static_cast<double>(l.mbs * training_.seq_len / l.cp);
    const double bytes = 2 * tokens * static_cast<double>(model_.hidden) / static_cast<double>(l.tp);
    e.p2p_s = collectives_.p2p_time_s(l.stride(Dim::pp), bytes);
    b.pp_s = 2 * (p - 1) * e.p2p_s;
    if (!options_.overlap_p2p) b.pp_s += 2 * m * static_cast<double>(l.vpp) * e.p2p_s;
  }
  for (const StageTiming& s : st) {
    b.dp_s = std::max(b.dp_s, s.dp_exposed_s);
    b.optimizer_s = std::max(b.optimizer_s, s.optimizer_s);
  }
  e.step_time_s = b.total_s();
  e.bubble_fraction = b.bubble_s / e.step_time_s;
}

StageMemory CostModel::peak_stage_memory(const Layout& l) {
  const LayerPair& costs = layer_costs(l);
  const std::vector<StageParams>& params = params_of(l);
  const std::vector<StageLayerMix>& mix = mix_of(l);
  const int64_t micro_batches = training_.global_batch / (l.dp * l.mbs);
  const double logits = logits_bytes(model_, activation_shape(l, training_.seq_len));
  StageMemory peak;
  for (size_t i = 0; i < params.size(); ++i) {
    StageMemory s = stage_memory(params[i], mix[i], costs.dense.activations, costs.moe.activations,
                                 l, micro_batches, logits, options_.memory);
    if (i == 0 || s.total_bytes() > peak.total_bytes()) peak = s;
  }
  return peak;
}

Estimate CostModel::evaluate(const Layout& l, bool detail) {
  Estimate e;
  e.layout = l;
  e.micro_batches = training_.global_batch / (l.dp * l.mbs);
  e.capacity_bytes = static_cast<double>(cluster_.gpu.hbm_bytes);
  const LayerPair& costs = layer_costs(l);
  const std::vector<StageParams>& params = params_of(l);
  const std::vector<StageLayerMix>& mix = mix_of(l);
  const double logits = logits_bytes(model_, activation_shape(l, training_.seq_len));
  std::vector<StageTiming> timings;
  timings.reserve(params.size());
  double recomputed_flops = 0;
  if (detail) e.memory.params_total = total_params(model_);
  for (size_t i = 0; i < params.size(); ++i) {
    const StageMemory mem = stage_memory(params[i], mix[i], costs.dense.activations,
                                         costs.moe.activations, l, e.micro_batches, logits,
                                         options_.memory);
    if (mem.total_bytes() > e.peak_bytes) {
      e.peak_bytes = mem.total_bytes();
      e.peak_stage = static_cast<int64_t>(i);
    }
    if (detail) e.memory.stages.push_back(mem);
    StageTiming t = stage_timing(l, mix[i], costs, static_cast<int64_t>(i));
    t.dp_exposed_s = dp_exposed_s(l, params[i], t, mix[i], e.micro_batches);
    const double shards = l.zero >= 1 ? static_cast<double>(l.dp * l.cp) : 1.0;
    t.optimizer_s = options_.optimizer_bytes_per_param * static_cast<double>(params[i].per_gpu()) /
                    shards / context_.hbm_bytes_per_s;
    timings.push_back(t);
    const FullRecompute full = full_recompute(l, mix[i]);
    recomputed_flops += static_cast<double>(full.dense) * dense_layer_flops_ +
                        static_cast<double>(full.moe) * moe_layer_flops_;
    if (l.recompute == Recompute::selective) {
      recomputed_flops += static_cast<double>(mix[i].dense_layers - full.dense) * dense_attention_flops_ +
                          static_cast<double>(mix[i].moe_layers - full.moe) * moe_attention_flops_;
    }
  }
  fill_pipeline(l, timings, e);
  const double dense_layers = static_cast<double>(model_.dense_layers());
  const double moe_layers = static_cast<double>(model_.moe_layers());
  e.model_flops = 3 * (dense_layers * dense_layer_flops_ + moe_layers * moe_layer_flops_ + head_flops_);
  e.hardware_flops = e.model_flops + recomputed_flops;
  const double gpus = static_cast<double>(l.gpus());
  const double peak = cluster_.gpu.peak_flops_per_s(training_.precision);
  e.model_tflops_per_gpu = e.model_flops / (e.step_time_s * gpus) / 1e12;
  e.hardware_tflops_per_gpu = e.hardware_flops / (e.step_time_s * gpus) / 1e12;
  e.mfu = e.model_flops / (e.step_time_s * gpus * peak);
  e.hfu = e.hardware_flops / (e.step_time_s * gpus * peak);
  e.tokens_per_s = static_cast<double>(training_.global_batch * training_.seq_len) / e.step_time_s;
  if (detail) {
    e.stages = std::move(timings);
    e.memory.peak_bytes = e.peak_bytes;
    e.memory.peak_stage = e.peak_stage;
    e.memory.capacity_bytes = e.capacity_bytes;
  }
  return e;
}

}  // namespace meshplan
