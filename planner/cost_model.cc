#include "planner/cost_model.h"

#include <algorithm>
#include <bit>
#include <tuple>

#include "planner/activation_memory.h"
#include "planner/calibration.h"
#include "planner/flop_count.h"
#include "planner/hash_mix.h"
#include "planner/param_count.h"
#include "planner/straggler.h"
#include "planner/zero_sharding.h"
#include "simulator/pipeline_schedule.h"

namespace meshplan {

namespace {

int64_t stride_of(const std::array<int64_t, 4>& strides, Dim d) {
  return strides[static_cast<size_t>(d)];
}

GroupShape tp_group(const Layout& l, const std::array<int64_t, 4>& strides) {
  return GroupShape::of(l.tp, stride_of(strides, Dim::tp));
}

GroupShape cp_group(const Layout& l, const std::array<int64_t, 4>& strides) {
  return GroupShape::of(l.cp, stride_of(strides, Dim::cp));
}

// EP groups are the innermost ep ranks of the combined cp × dp ranks (Megatron-core). With
// etp < tp the experts fold each stage's tp·cp·dp ranks (contiguous: the pipeline is outermost,
// core/layout_rules.h etp_fold_fits) as etp × ep × expert-dp, innermost first (Megatron-Core's
// expert rank order tp-ep-dp-pp, parallel_state.py's expert RankGenerator).
GroupShape ep_group(const Layout& l, const std::array<int64_t, 4>& strides) {
  if (l.folds_experts()) return GroupShape::of(l.ep, l.expert_tp());
  return GroupShape::of(l.ep, std::min(stride_of(strides, Dim::cp), stride_of(strides, Dim::dp)));
}

GroupShape expert_tp_group(const Layout& l, const std::array<int64_t, 4>& strides) {
  return l.folds_experts() ? GroupShape::of(l.expert_tp(), 1) : tp_group(l, strides);
}

}  // namespace

GroupShape tp_group(const Layout& l) { return tp_group(l, l.strides()); }
GroupShape cp_group(const Layout& l) { return cp_group(l, l.strides()); }
GroupShape ep_group(const Layout& l) { return ep_group(l, l.strides()); }
GroupShape expert_tp_group(const Layout& l) { return expert_tp_group(l, l.strides()); }

GroupShape dp_group(const Layout& l) {
  GroupShape g;
  g.dims[0] = {l.dp, l.stride(Dim::dp)};
  g.dims[1] = {l.cp, l.stride(Dim::cp)};
  g.dim_count = 2;
  return g;
}

GroupShape expert_dp_group(const Layout& l) {
  if (l.folds_experts()) return GroupShape::of(l.expert_dp(), l.expert_tp() * l.ep);
  return GroupShape::of(l.dp * l.cp / l.ep, std::min(l.stride(Dim::cp), l.stride(Dim::dp)) * l.ep);
}

CostModel::CostModel(const ModelSpec& m, const ClusterSpec& c, const CalibrationProfile& p,
                     const TrainingSpec& t, const CostOptions& o)
    : model_(m),
      cluster_(c),
      profile_(p),
      training_(t),
      options_(o),
      calibration_(resolve_calibration(profile_, cluster_.gpu, t.precision, o.fp8_recipe)),
      gemm_(profile_, cluster_.gpu, t.precision, calibration_),
      attention_(profile_, cluster_.gpu, o.attention_kernels, calibration_),
      collectives_(profile_, cluster_, calibration_, o.collective_algorithm, o.collective_rails) {
  context_.model = &model_;
  context_.gemm = &gemm_;
  context_.gemm_memo = &gemm_memo_;
  context_.kinds = std::array<KindLayers, 2>{kind_layers(m, false), kind_layers(m, true)};
  context_.maps = std::array<std::vector<LinearMap>, 2>{layer_maps(m, false), layer_maps(m, true)};
  context_.collectives = &collectives_;
  context_.collective_memo = &collective_memo_;
  context_.options = &options_;
  context_.hbm_bytes_per_s = calibration_.hbm_bytes_per_s.value;
  context_.fp8 = cluster_.gpu.runs_fp8(t.precision);
  if (context_.fp8) {
    context_.bf16_gemm = &bf16_gemm_.emplace(profile_, cluster_.gpu, Precision::bf16, o.fp8_recipe);
    context_.bf16_gemm_memo = &bf16_gemm_memo_.emplace(*bf16_gemm_);
  }
  context_.attention = &attention_;
  context_.seq_len = t.seq_len;
  const double tokens = static_cast<double>(t.global_batch * t.seq_len);
  const double seq = static_cast<double>(t.seq_len);
  FlopOptions flops = o.flops;
  flops.op_sac = o.memory.selective_op_sac;
  dense_flops_ = kind_forward_flops(m, false, tokens, seq, flops);
  moe_flops_ = m.moe ? kind_forward_flops(m, true, tokens, seq, flops) : dense_flops_;
  // Op SAC drops every intermediate but a few mm outputs.
  selective_saves_ =
      o.memory.selective_op_sac ||
      attention_core_stores_activations(m, context_.fp8, o.memory.fp8_saves_quantized_inputs);
  head_flops_ = lm_head_forward_flops(m, tokens);
  layer_params_ = model_layer_params(model_);
}

// FNV-1a over the values in four interleaved lanes (independent multiplies), then combined and
// mixed (hash_mix.h: a packed word's high half reaches the low bits).
size_t CostModel::LayerCostsHash::operator()(const LayerCostsKey& k) const {
  constexpr uint64_t kPrime = 1099511628211ull;
  std::array<uint64_t, 4> lanes{14695981039346656037ull, 1, 2, 3};
  for (size_t i = 0; i < k.size(); ++i) {
    uint64_t& h = lanes[i % lanes.size()];
    h = (h ^ static_cast<uint64_t>(k[i])) * kPrime;
  }
  uint64_t h = lanes[0];
  for (size_t i = 1; i < lanes.size(); ++i) h = (h ^ lanes[i] ^ (h >> 29)) * kPrime;
  return static_cast<size_t>(mixed(h));
}

namespace {

// Two values in one key word: every degree, size and stride is at most the GPU count, which a
// cluster keeps at or below kMaxClusterGpus (its outermost network level spans every GPU), so
// the packing is one to one. The micro-batch size keeps a word of its own.
static_assert(kMaxClusterGpus < (int64_t{1} << 31));
int64_t packed(int64_t high, int64_t low) {
  return static_cast<int64_t>(static_cast<uint64_t>(high) << 32 | static_cast<uint64_t>(low));
}

LayerCostKey layer_cost_key(const Layout& l) {
  return {l.tp,
          l.cp,
          l.ep,
          l.mbs,
          l.sp && l.tp > 1,
          l.tp_overlap,
          l.cp_kind,
          l.cp_a2a_size(),
          l.cp_ring_size(),
          l.ep_overlap,
          l.dispatch,
          l.expert_tp()};
}

}  // namespace

const CostModel::LayerPair& CostModel::layer_costs(const Layout& l) {
  const LayerCostKey k = layer_cost_key(l);
  const std::array<int64_t, 4> strides = l.strides();
  const LayerGroups groups{tp_group(l, strides), cp_group(l, strides), ep_group(l, strides),
                           expert_tp_group(l, strides)};
  // The key's fields (the flags and enums in one word with the groups' dimension counts), then
  // each group's two dimensions.
  int64_t flags = (k.sp ? 1 : 0) | (k.tp_overlap ? 2 : 0) | (k.ep_overlap ? 4 : 0) |
                  static_cast<int64_t>(k.cp_kind) << 3 | static_cast<int64_t>(k.dispatch) << 6;
  LayerCostsKey key{packed(k.tp, k.cp), packed(k.ep, k.etp), packed(k.cp_a2a, k.cp_ring), k.mbs};
  size_t at = 5;
  int shift = 9;
  for (const GroupShape* g : {&groups.tp, &groups.cp, &groups.ep, &groups.etp}) {
    for (const GroupShape::Dim& d : g->dims) key[at++] = packed(d.size, d.stride);
    flags |= static_cast<int64_t>(g->dim_count) << shift;
    shift += 2;
  }
  key[4] = flags;
  return layer_costs_cache_.get(key, [&] {
    const ComputeRefs compute = compute_of(k);
    LayerPair pair;
    pair.dense = layer_cost(context_, k, false, groups, *compute.dense);
    pair.moe = model_.moe ? layer_cost(context_, k, true, groups, *compute.moe) : pair.dense;
    pair.head = *compute.head;
    return pair;
  });
}

CostModel::LayerOps CostModel::layer_ops(const Layout& l) const {
  const LayerCostKey k = layer_cost_key(l);
  LayerOps out;
  if (model_.dense_layers() > 0) out.dense = meshplan::layer_ops(context_, k, false);
  if (model_.moe_layers() > 0) out.moe = meshplan::layer_ops(context_, k, true);
  out.head = head_ops(context_, k);
  return out;
}

size_t CostModel::CpTermsHash::operator()(const CpTermsKey& k) const {
  return static_cast<size_t>(hashed(k[0], k[1], k[2], k[3], k[4], k[5]));
}

const CostModel::CpTerms& CostModel::cp_terms(const Layout& l) {
  const LayerCostKey k = layer_cost_key(l);
  const GroupShape cp = cp_group(l);
  const CpTermsKey key{
      packed(k.tp, k.cp),
      packed(k.ep, k.etp),
      packed(k.cp_a2a, k.cp_ring),
      k.mbs,
      (k.sp ? 1 : 0) | static_cast<int64_t>(k.cp_kind) << 1 | static_cast<int64_t>(k.dispatch) << 8,
      cp.dims[0].stride};
  return cp_terms_cache_.get(key, [&] {
    const ComputeRefs compute = compute_of(k);
    auto terms = [&](const LayerCompute& c) {
      const LayerCost t = layer_cost_cp_terms(context_, k, cp, c);
      return CpTerms::Layer{t.forward_s,           t.backward_s,   t.backward_weight_s,
                            t.attention_forward_s, t.cp_forward_s, t.cp_backward_s};
    };
    CpTerms out;
    out.dense = terms(*compute.dense);
    out.moe = model_.moe ? terms(*compute.moe) : out.dense;
    return out;
  });
}

// A dense layer's compute reads the key's tp, cp, cp_a2a, mbs and sp (layer_cost.h), and the
// expert degrees only through the activations of the layer it is priced on, layer 0, where
// that layer is an MoE layer (an all-MoE model); the head reads tp, cp and mbs.
CostModel::ComputeKey CostModel::dense_key(const LayerCostKey& k) const {
  const bool experts = model_.moe && model_.is_moe_layer(0);
  return {k.tp, experts ? k.expert_tp() : 0, k.cp, k.cp_a2a, experts ? k.ep : 0, k.mbs, k.sp, 0};
}

const CostModel::DenseCompute& CostModel::dense_compute(const LayerCostKey& k) {
  return dense_compute_cache_.get(dense_key(k), [&] {
    DenseCompute d;
    d.dense = layer_compute(context_, k, false);
    d.head = lm_head_cost(context_, k);
    return d;
  });
}

CostModel::ComputeRefs CostModel::compute_of(const LayerCostKey& k) {
  // Layouts come in runs of one compute key (the CP variants and overlaps of a shape; an MoE
  // layer's dispatchers permute different rows): the last one found answers before the map. The
  // maps' nodes never move, so the pointers hold; an MoE model's dense compute is looked up only
  // where its MoE compute is made.
  if (!model_.moe) {
    const DenseCompute& d = dense_compute(k);
    return {&d.dense, &d.dense, &d.head};
  }
  const MoeCompute& c = moe_compute_cache_.get(
      {k.tp, k.expert_tp(), k.cp, k.cp_a2a, k.ep, k.mbs, k.sp, static_cast<int64_t>(k.dispatch)},
      [&] {
        MoeCompute made;
        made.dense = &dense_compute(k);
        const SharedCompute& shared =
            moe_shared_cache_.get({k.tp, 0, k.cp, k.cp_a2a, 0, k.mbs, k.sp, 0},
                                  [&] { return shared_compute(context_, k, true); });
        made.moe = layer_compute(context_, k, true, shared);
        return made;
      });
  return {&c.dense->dense, &c.moe, &c.dense->head};
}

CostModel::ParamsKey CostModel::params_key(const Layout& l) {
  return {l.tp, l.ep, l.pp, l.vpp, placement_kind(l.pipeline()), l.expert_tp()};
}

// A work item's shapes share their stage split: its parameters, layer mix and classes.
const std::vector<StageParams>& CostModel::params_of(const Layout& l) {
  return params_cache_.get(params_key(l), [&] { return stage_params(model_, l, layer_params_); });
}

const std::vector<StageLayerMix>& CostModel::mix_of(const Layout& l) {
  return mix_cache_.get(MixKey{l.pp, l.vpp, placement_kind(l.pipeline())},
                        [&] { return stage_layer_mix(model_, l); });
}

CostModel::SyncTimes CostModel::sync_times(const Layout& l, const GroupShape& whole,
                                           const ShardGroups& sharded, double params,
                                           double gathered_bytes_per_param, int zero,
                                           int64_t layers) const {
  SyncKey key{};
  size_t at = 0;
  for (const GroupShape* g : {&whole, &sharded.shard, &sharded.replicas}) {
    for (const GroupShape::Dim& d : g->dims) {
      key[at++] = static_cast<uint64_t>(d.size);
      key[at++] = static_cast<uint64_t>(d.stride);
    }
    key[at++] = static_cast<uint64_t>(g->dim_count);
  }
  key[at++] = std::bit_cast<uint64_t>(params);
  key[at++] = std::bit_cast<uint64_t>(gathered_bytes_per_param);
  key[at++] = static_cast<uint64_t>(zero);
  key[at++] = static_cast<uint64_t>(layers);
  key[at++] = static_cast<uint64_t>(l.dp);
  if (auto* known = sync_memo_.find(key)) return known->second;
  const SyncTimes t =
      priced_sync_times(l.dp, whole, sharded, params, gathered_bytes_per_param, zero, layers);
  sync_memo_.emplace(key, t);
  return t;
}

CostModel::SyncTimes CostModel::priced_sync_times(int64_t dp, const GroupShape& whole,
                                                  const ShardGroups& sharded, double params,
                                                  double gathered_bytes_per_param, int zero,
                                                  int64_t layers) const {
  SyncTimes t;
  if (whole.size() <= 1 || params <= 0) return t;
  // ZeRO-0 all-reduces over the whole group; a sharded state is reduce-scattered and gathered
  // inside its shard group, and with hybrid sharding each shard is all-reduced across the
  // replicas after its reduce-scatter (shard_groups.h).
  const GroupShape& g = zero > 0 ? sharded.shard : whole;
  const GroupShape replicas = zero > 0 ? sharded.replicas : GroupShape::of(1, 1);
  const MemoryOptions& mo = options_.memory;
  const double bucket =
      std::min(params, std::max(options_.dp_bucket_params, 1e6 * static_cast<double>(dp)));
  const ZeroSharding z = zero_sharding(zero);
  const Collective reduce =
      z.reduce_scatters_grads() ? Collective::reduce_scatter : Collective::all_reduce;
  auto hbm_s = [&](Collective c, const GroupShape& group, double bytes) {
    const CollectiveInfo& info = collective_info(c);
    return info.hbm_bytes_per_bus_byte * bytes *
           info.bus_factor(static_cast<double>(group.size())) / context_.hbm_bytes_per_s;
  };
  // Gradients of `bytes` (the whole group's buffer): reduced in the shard group, then each
  // shard all-reduced across the replicas.
  const double shards = static_cast<double>(g.size());
  const bool replicated = replicas.size() > 1;
  auto reduce_s = [&](double bytes) {
    return collectives_.time_s(reduce, g, bytes) +
           (replicated ? collectives_.time_s(Collective::all_reduce, replicas, bytes / shards) : 0);
  };
  const double grad_bytes = params * mo.grad_bytes_per_param;
  const double weight_bytes = params * gathered_bytes_per_param;
  t.reduce = reduce_s(grad_bytes);
  t.reduce_hbm = hbm_s(reduce, g, grad_bytes) +
                 (replicated ? hbm_s(Collective::all_reduce, replicas, grad_bytes / shards) : 0);
  t.reduce_last = reduce_s(bucket * mo.grad_bytes_per_param);
  if (z.gathers_updated_weights()) {
    t.gather = collectives_.time_s(Collective::all_gather, g, weight_bytes);
    t.gather_hbm = hbm_s(Collective::all_gather, g, weight_bytes);
    t.gather_last =
        collectives_.time_s(Collective::all_gather, g, bucket * gathered_bytes_per_param);
  }
  if (layers > 0) {  // one layer's share of the stage
    const double per = static_cast<double>(layers);
    t.layer_reduce = reduce_s(grad_bytes / per);
    t.layer_reduce_hbm = t.reduce_hbm / per;
    if (z.weights) {
      t.layer_gather = collectives_.time_s(Collective::all_gather, g, weight_bytes / per);
      t.layer_gather_hbm = hbm_s(Collective::all_gather, g, weight_bytes) / per;
    }
  }
  return t;
}

// sizeof(CostModel::Shape) with 8-byte pointers and libstdc++ or libc++ (24-byte vectors): a
// tripwire for reset_keeping_buffers, which resets each field by name.
constexpr size_t kShapeBytes = 872;

// `shape` as a fresh Shape, keeping its vectors' storage: each field set as a fresh Shape's but
// the vectors, emptied (the classes keep their elements: build_shape overwrites them), and the
// layer costs, which the builders set first; field by field rather than by assigning a fresh
// Shape, which zeroed it and moved every vector out and back (700 instructions a shape).
static void reset_keeping_buffers(auto& shape) {
  using Shape = std::remove_cvref_t<decltype(shape)>;
  static_assert(sizeof(Shape) == kShapeBytes,
                "a field added to CostModel::Shape: reset it here, then update kShapeBytes");
  shape.class_of_stage.clear();
  shape.p2p_s = 0, shape.logits_bytes = 0, shape.p2p_gather_s = 0;
  shape.micro_batches = 0;
  shape.dense_activation_bytes = 0, shape.moe_activation_bytes = 0;
  for (auto& f : shape.frames) f.clear();
  for (auto& f : shape.frame_sums) f.clear();
  shape.frames_owner = nullptr;
  shape.frames_schedule = Schedule::one_f_one_b;
  shape.activations.clear();
  shape.activations_recompute = Recompute::none;
  shape.activations_modules = kDefaultRecomputeModules;
  shape.activations_layers = -1;
  shape.activations_stage_layers = {};
  shape.activation_terms.clear();
  shape.terms_recompute = Recompute::none;
  shape.terms_modules = kDefaultRecomputeModules;
  shape.lower_bound_s = -1;
  shape.uniform_group = 0;
  shape.uniform_group_schedule = Schedule::one_f_one_b;
}

// The stage classes `from` into `to`, reusing its elements: each class's split fields and
// embedding and mirror syncs, with no sync times ready: those are computed when first asked
// (sync_of, behind sync_ready), so the stale ones a reused element holds are never read, and
// copying them, most of a StageClass, is skipped.
static void take_classes(const auto& from, auto& to) {
  to.resize(from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    const auto& f = from[i];
    auto& k = to[i];
    k.first = f.first, k.count = f.count, k.mix = f.mix, k.params = f.params;
    k.sync_ready = {};
    k.embedding_sync_s = f.embedding_sync_s, k.mirror_sync_s = f.mirror_sync_s;
  }
}

void CostModel::build_shape(const Layout& l, Shape& shape) {
  reset_keeping_buffers(shape);
  shape.costs = layer_costs(l);
  shape.micro_batches = training_.global_batch / (l.dp * l.mbs);
  shape.logits_bytes = logits_bytes(model_, activation_shape(l, training_.seq_len));
  // layer_compute's activations are layer_activations of this shape's layers, bit for bit.
  shape.dense_activation_bytes = shape.costs.dense.activations.no_recompute();
  shape.moe_activation_bytes = shape.costs.moe.activations.no_recompute();
  if (l.pp > 1) {
    const double tokens = static_cast<double>(l.mbs * training_.seq_len / l.cp);
    const double activation = 2 * tokens * static_cast<double>(model_.hidden);
    const bool scatter = options_.pp_scatter_gather || (l.sp && l.tp > 1);
    shape.p2p_s = collectives_.p2p_time_s(
        l.stride(Dim::pp), scatter ? activation / static_cast<double>(l.tp) : activation);
    if (scatter && l.tp > 1 && !l.sp) {
      shape.p2p_gather_s = collectives_.time_s(Collective::all_gather, tp_group(l), activation);
    }
  }
  // Megatron-LM's _allreduce_word_embedding_grads (finalize_model_grads) and DeepSpeed
  // PipelineEngine's _exec_reduce_tied_grads: the word embedding's vocab/tp × hidden gradients,
  // all-reduced between the first and the last stage, whose copy it is
  // (ModelSpec::head_stage_shares_embedding), once the backward pass is done.
  const bool shared_embedding = model_.head_stage_shares_embedding();
  double embedding_sync = 0;
  if (shared_embedding && l.pp > 1) {
    const double params = static_cast<double>(model_.vocab) / static_cast<double>(l.tp) *
                          static_cast<double>(model_.hidden);
    embedding_sync = collectives_.time_s(Collective::all_reduce,
                                         GroupShape::of(2, (l.pp - 1) * l.stride(Dim::pp)),
                                         params * options_.memory.grad_bytes_per_param);
  }
  // With a recompute count per stage (Layout::recompute_stage_layers) every stage is a class.
  const bool per_stage = !l.recompute_stage_layers.empty();
  ClassSplit own;
  if (per_stage) split_classes(l, true, own);
  const ClassSplit& split = per_stage ? own : classes_of(l);
  take_classes(split.classes, shape.classes);  // no embedding or mirror sync in a split's
  shape.class_of_stage = split.class_of_stage;
  for (StageClass& k : shape.classes) {
    const bool first = holds_first_chunk(l.pipeline(), k.first);
    const bool last = holds_last_chunk(l.pipeline(), k.first);
    if (shared_embedding && l.pp > 1 && first != last) k.embedding_sync_s = embedding_sync;
    if (placement_kind(l.pipeline()) == PlacementKind::mirrored)
      k.mirror_sync_s = mirror_sync_s(l, k.first, k.params);
  }
}

void CostModel::build_sibling_shape(const Layout& l, const Shape& twin, bool same_costs,
                                    Shape& shape) {
  reset_keeping_buffers(shape);
  shape.costs = same_costs ? twin.costs : layer_costs(l);
  shape.micro_batches = twin.micro_batches;
  shape.logits_bytes = twin.logits_bytes;
  shape.dense_activation_bytes = shape.costs.dense.activations.no_recompute();
  shape.moe_activation_bytes = shape.costs.moe.activations.no_recompute();
  shape.p2p_s = twin.p2p_s;
  shape.p2p_gather_s = twin.p2p_gather_s;
  take_classes(twin.classes, shape.classes);
  shape.class_of_stage = twin.class_of_stage;
  // The activations' terms of the sibling's last recompute mode (neither field changes them):
  // the next count of that mode often comes to this shape.
  shape.activation_terms = twin.activation_terms;
  shape.terms_recompute = twin.terms_recompute;
  shape.terms_modules = twin.terms_modules;
}

void CostModel::split_classes(const Layout& l, bool per_stage, ClassSplit& out) {
  const std::vector<StageParams>& params = params_of(l);
  const std::vector<StageLayerMix>& mix = mix_of(l);
  out.classes.clear();
  out.class_of_stage.clear();
  for (size_t i = 0; i < params.size(); ++i) {
    const bool last = holds_last_chunk(l.pipeline(), static_cast<int64_t>(i));
    size_t c = 0;
    for (; c < out.classes.size(); ++c) {
      const StageClass& k = out.classes[c];
      // The last stage (LM head, logits) always forms its own class.
      if (!last && !per_stage && k.mix.dense_layers == mix[i].dense_layers &&
          k.mix.moe_layers == mix[i].moe_layers &&
          k.params.dense_per_gpu == params[i].dense_per_gpu &&
          k.params.expert_per_gpu == params[i].expert_per_gpu)
        break;
    }
    if (c == out.classes.size()) {
      StageClass k;
      k.first = static_cast<int64_t>(i);
      k.mix = mix[i];
      k.params = params[i];
      out.classes.push_back(k);
    }
    out.classes[c].count += 1;
    out.class_of_stage.push_back(c);
  }
}

const CostModel::ClassSplit& CostModel::classes_of(const Layout& l) {
  return classes_cache_.get(params_key(l), [&] {
    ClassSplit split;
    split_classes(l, false, split);
    return split;
  });
}

const std::array<CostModel::SyncTimes, 2>& CostModel::sync_of(const Layout& l,
                                                              const StageClass& k) const {
  const auto zero = static_cast<size_t>(l.zero);
  if (!k.sync_ready[zero]) {
    const auto dense = static_cast<double>(k.params.dense_per_gpu);
    const auto experts = static_cast<double>(k.params.expert_per_gpu);
    const auto dense_linear = static_cast<double>(k.params.linear_per_gpu) - experts;
    const MemoryOptions& mo = options_.memory;
    k.sync[zero][0] = sync_times(l, dp_group(l), dense_shard_groups(l), dense,
                                 gathered_bytes_per_param(dense, dense_linear, context_.fp8, mo),
                                 l.zero, k.mix.layers());
    k.sync[zero][1] = sync_times(l, expert_dp_group(l), expert_shard_groups(l), experts,
                                 gathered_bytes_per_param(experts, experts, context_.fp8, mo),
                                 l.zero, k.mix.layers());
    k.sync_ready[zero] = true;
  }
  return k.sync[zero];
}

// DualPipe keeps two copies of every chunk, on ranks s and pp − 1 − s (DeepSeek-V3 report
// §3.2.1), each accumulating the gradients of the half of the batch that passes it: the pair
// all-reduces this rank's gradients once the backward is done, over the pipeline link between
// the two (an approximation: sharded gradients would halve it, and a framework may fold it
// into the data-parallel reduction).
double CostModel::mirror_sync_s(const Layout& l, int64_t stage, const StageParams& params) const {
  const int64_t distance = std::abs(l.pp - 1 - 2 * stage);
  if (distance == 0) return 0;
  const double grads = static_cast<double>(params.dense_per_gpu + params.expert_per_gpu) *
                       options_.memory.grad_bytes_per_param;
  return collectives_.time_s(Collective::all_reduce,
                             GroupShape::of(2, distance * l.stride(Dim::pp)), grads);
}

bool CostModel::siblings(const ShapeKey& a, const ShapeKey& b) {
  constexpr uint64_t others = ~(kShapeKeyShardBits | kShapeKeyEpOverlapBit);
  if ((a[0] & others) != (b[0] & others)) return false;
  for (size_t i = 1; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

CostModel::ShapeKey CostModel::shape_key(const Layout& l) {
  auto pair = [](int64_t low, int64_t high) {
    return static_cast<uint64_t>(static_cast<uint32_t>(low)) | static_cast<uint64_t>(high) << 32;
  };
  auto bits = [](auto value, int shift) {
    return static_cast<uint64_t>(static_cast<int64_t>(value)) << shift;
  };
  uint64_t head = static_cast<uint32_t>(l.shard) | (l.ep_overlap ? kShapeKeyEpOverlapBit : 0) |
                  bits(placement_kind(l.pipeline()), 33) |
                  bits(!l.recompute_stage_layers.empty(), 36) | bits(l.sp && l.tp > 1, 37) |
                  bits(l.tp_overlap, 38) | bits(l.cp_kind, 39) | bits(l.dispatch, 42);
  for (int i = 0; i < 4; ++i) head |= bits(l.order[static_cast<size_t>(i)], 45 + 3 * i);
  return {head,
          pair(l.tp, l.cp),
          pair(l.pp, l.dp),
          pair(l.vpp, l.ep),
          pair(l.mbs, l.cp_a2a),
          static_cast<uint64_t>(l.expert_tp())};
}

const CostModel::Shape& CostModel::shape_of(const Layout& l) {
  const ShapeKey key = shape_key(l);
  if (last_shape_ && key == last_key_) return *last_shape_;
  auto it = shape_cache_.find(key);
  if (it == shape_cache_.end()) {
    if (spare_shapes_.empty()) {
      it = shape_cache_.emplace(key, Shape{}).first;
    } else {
      std::map<ShapeKey, Shape>::node_type node = std::move(spare_shapes_.back());
      spare_shapes_.pop_back();
      node.key() = key;
      it = shape_cache_.insert(std::move(node)).position;
    }
    if (last_built_ && siblings(key, last_built_key_))
      build_sibling_shape(
          l, *last_built_,
          (key[0] & kShapeKeyEpOverlapBit) == (last_built_key_[0] & kShapeKeyEpOverlapBit),
          it->second);
    else
      build_shape(l, it->second);
    last_built_ = &it->second;
    last_built_key_ = key;
    ShapeKey twin = key;
    twin[0] ^= kShapeKeyEpOverlapBit;
    if (auto t = shape_cache_.find(twin); t != shape_cache_.end())
      it->second.frames_owner = &t->second.frames_home();
  }
  last_key_ = key;
  last_shape_ = &it->second;
  return it->second;
}

StageTiming CostModel::stage_timing(const Layout& l, const StageClass& k,
                                    const LayerPair& c) const {
  const StageLayerMix& mix = k.mix;
  const double nd = static_cast<double>(mix.dense_layers), nm = static_cast<double>(mix.moe_layers);
  const FullRecompute full = full_recompute(l, mix, k.first);
  const double fd = static_cast<double>(full.dense), fm = static_cast<double>(full.moe);
  StageTiming s;
  s.stage = k.first;
  s.forward_s = nd * c.dense.forward_s + nm * c.moe.forward_s;
  s.backward_s = nd * c.dense.backward_s + nm * c.moe.backward_s;
  s.backward_weight_s = nd * c.dense.backward_weight_s + nm * c.moe.backward_weight_s;
  s.recompute_s = fd * c.dense.forward_s + fm * c.moe.forward_s;
  // Selectively recomputed layers repeat their modules' forward (and moe its dispatch, as op
  // SAC does: it saves no all-to-all output).
  const bool selective = l.recompute == Recompute::selective;
  const double moe_redispatch = selective && (has(l.recompute_modules, RecomputeModule::moe) ||
                                              options_.memory.selective_op_sac)
                                    ? nm - fm
                                    : 0;
  if (selective) {
    s.recompute_s += (nd - fd) * c.dense.selective_forward_s(l.recompute_modules) +
                     (nm - fm) * c.moe.selective_forward_s(l.recompute_modules);
  }
  // Communication of the forward, the backward, and the recomputed forward.
  s.tp_s = (nd + fd) * c.dense.tp_forward_s + nd * c.dense.tp_backward_s +
           (nm + fm) * c.moe.tp_forward_s + nm * c.moe.tp_backward_s;
  s.cp_s = (nd + fd) * c.dense.cp_forward_s + nd * c.dense.cp_backward_s +
           (nm + fm) * c.moe.cp_forward_s + nm * c.moe.cp_backward_s;
  s.ep_s = (nm + fm + moe_redispatch) * c.moe.ep_forward_s + nm * c.moe.ep_backward_s;
  if (holds_last_chunk(l.pipeline(), k.first)) {
    s.forward_s += c.head.forward_s;
    s.backward_s += c.head.backward_s;
  }
  // Stragglers: the step runs at the pace of its slowest GPU (planner/straggler.h).
  const double slow = compute_slowdown(l.gpus());
  s.forward_s *= slow;
  s.backward_s *= slow;
  s.backward_weight_s *= slow;
  s.recompute_s *= slow;
  return s;
}

double CostModel::optimizer_step_s(const Layout& l, const StageClass& k) const {
  const double shards = zero_sharding(l.zero).optimizer_shards(l.shard_size());
  const double shard_params = static_cast<double>(k.params.per_gpu()) / shards;
  return l.offload == Offload::none
             ? options_.optimizer_bytes_per_param * shard_params / context_.hbm_bytes_per_s
             : offloaded_optimizer_s(l, shard_params);
}

// The optimizer step with its states off the GPU (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity,
// Rajbhandari et al. 2021; Megatron-Core --optimizer-cpu-offload): the rank's gradient shard
// copied to the host over its PCIe link, the step on the CPU moving the same bytes per
// parameter through host memory as the GPU step does through HBM (optimizer_bytes_per_param),
// shared by the node's ranks, with NVMe reading and writing the states (nvme) also shared by
// the node, and the updated weights copied back. In sequence: the step waits for every
// gradient, and the weights for the step (a framework pipelining them by sub-group, Megatron's
// --overlap-cpu-optimizer-d2h-h2d, would hide part of it; not modelled).
double CostModel::offloaded_optimizer_s(const Layout& l, double shard_params) const {
  const HostSpec& h = cluster_.host;
  const MemoryOptions& mem = options_.memory;
  const double node = static_cast<double>(cluster_.gpus_per_node);
  double t =
      shard_params * (mem.grad_bytes_per_param + mem.weight_bytes_per_param) / h.pcie_bytes_per_s +
      node * shard_params * options_.optimizer_bytes_per_param / h.memory_bytes_per_s;
  if (l.offload == Offload::nvme)
    t += 2 * node * shard_params * mem.optimizer_bytes_per_param / h.nvme_bytes_per_s;
  return t;
}

// Activation offload (Transformer Engine's CPU offload, Megatron-Core cpu_offloading_num_layers):
// each offloaded layer's stored activations go to the host over PCIe while the next layer's
// forward runs, and come back while the layer after it in the backward runs; what the compute
// does not cover is exposed, at the data-parallel overlap efficiency (copy engines share HBM).
double CostModel::activation_offload_s(const Layout& l, const Shape& shape, const StageClass& k,
                                       const LayerPair& c) const {
  const int64_t layers = std::min(l.act_offload, k.mix.layers());
  if (layers <= 0 || cluster_.host.pcie_bytes_per_s <= 0) return 0;
  const int64_t dense = std::min(layers, k.mix.dense_layers);
  const double eta = options_.dp_overlap_efficiency;
  auto one = [&](double bytes, const LayerCost& layer) {
    const double copy = bytes / cluster_.host.pcie_bytes_per_s;
    return exposed_after_overlap(copy, layer.forward_s, eta) +
           exposed_after_overlap(copy, layer.backward_s, eta);
  };
  return static_cast<double>(dense) * one(shape.dense_activation_bytes, c.dense) +
         static_cast<double>(layers - dense) * one(shape.moe_activation_bytes, c.moe);
}

double CostModel::dp_exposed_s(const Layout& l, const StageClass& k, const StageTiming& st,
                               bool with_zero3_gathers) const {
  const double m = static_cast<double>(training_.global_batch / (l.dp * l.mbs));
  // Gradients of a chunk are final after its last micro-batch's backward. Without interleaving
  // that is the last backward of the step; with v chunks per stage the chunks finish one after
  // another through the cool-down, which leaves (p·(v − 1) + 1)/v micro-batch backwards to
  // hide the reduction behind (Megatron-LM reduces each chunk's buckets as they complete).
  const double p = static_cast<double>(l.pp), v = static_cast<double>(l.vpp);
  const bool interleaved =
      l.schedule == Schedule::interleaved || l.schedule == Schedule::zb_interleaved;
  const double stagger = interleaved ? (p * (v - 1) + 1) / v : 1.0;
  const double per_mb_window = options_.overlap_grad_reduce ? st.backward_s + st.recompute_s : 0;
  const double last_window = stagger * per_mb_window;
  const double layers = static_cast<double>(k.mix.layers());
  const double eta = options_.dp_overlap_efficiency;
  auto hidden_behind = [eta](double comm, double compute, double hbm) {
    return exposed_after_overlap(comm, compute, eta, hbm);
  };
  // ZeRO-3: each layer gathered one layer ahead (prefetch) in forward and backward, hidden
  // behind the layer before it, with `bwd_reduce` (the gradient reduction that queues in each
  // backward layer, if any) beside the backward gather. Without prefetch
  // (CostOptions::zero3_prefetch) both gathers wait on the compute stream, exposed, and only
  // the reduction hides behind the backward.
  auto gathered_layers = [&](const SyncTimes& t, double bwd_reduce, double bwd_reduce_hbm,
                             double bwd_window) {
    const double window = bwd_window / layers;
    if (!options_.zero3_prefetch)
      return (layers - 1) *
             (2 * t.layer_gather + hidden_behind(bwd_reduce, window, bwd_reduce_hbm));
    return (layers - 1) *
           (hidden_behind(t.layer_gather, st.forward_s / layers, t.layer_gather_hbm) +
            hidden_behind(t.layer_gather + bwd_reduce, window,
                          t.layer_gather_hbm + bwd_reduce_hbm));
  };
  double exposed = k.embedding_sync_s + k.mirror_sync_s;
  for (const SyncTimes& t : sync_of(l, k)) {
    if (t.reduce <= 0) continue;
    const double once = std::max(t.reduce_last, hidden_behind(t.reduce, last_window, t.reduce_hbm));
    // ZeRO-2/3 reduce-scatter gradients after every micro-batch's backward where the framework
    // does (CostOptions::zero_reduce_every_micro_batch); otherwise once per step, like ZeRO-0/1.
    const bool every = zero_sharding(l.zero).grads && options_.zero_reduce_every_micro_batch;
    if (every && with_zero3_gathers && t.layer_gather > 0 && layers > 0) {
      // ZeRO-3 reducing every micro-batch: in the backward pass each layer's gradient
      // reduce-scatter and the next layer's parameter all-gather queue on one communicator
      // (one NCCL stream per process group: DeepSpeed and PyTorch FSDP issue both on the data-
      // parallel group), so they hide together behind one layer's backward and recompute. The
      // first layer's gather and the last layer's reduction have nothing to hide behind.
      // Without overlap_grad_reduce the reductions wait for the backward pass, exposed.
      const bool overlap = options_.overlap_grad_reduce;
      exposed +=
          m * (t.layer_gather + (overlap ? t.layer_reduce : t.reduce) +
               gathered_layers(t, overlap ? t.layer_reduce : 0, overlap ? t.layer_reduce_hbm : 0,
                               st.backward_s + st.recompute_s));
      continue;
    }
    exposed += every ? (m - 1) * hidden_behind(t.reduce, per_mb_window, t.reduce_hbm) + once : once;
    // ZeRO-1/2: updated weights gathered behind the next step's first forward
    // (CostOptions::overlap_param_gather), else after the optimizer step, all exposed.
    if (t.gather > 0) {
      exposed += options_.overlap_param_gather
                     ? std::max(t.gather_last, hidden_behind(t.gather, st.forward_s, t.gather_hbm))
                     : t.gather;
    }
    // ZeRO-3 reducing once per step: only the gathers, hidden behind the backward alone; the
    // first layer's gather has nothing to hide behind.
    if (with_zero3_gathers && t.layer_gather > 0 && layers > 0) {
      exposed += m * (t.layer_gather + gathered_layers(t, 0, 0, st.backward_s));
    }
  }
  return exposed;
}

void CostModel::fill_pipeline(const Layout& l, const Shape& shape, PipelineTiming& out) const {
  const std::vector<StageTiming>& st = out.per_class;
  const double m = static_cast<double>(shape.micro_batches);
  size_t critical = 0;
  double t_max = 0, t_sum = 0, zb_bubble = 0, dual_bubble = 0, zb_floor = 0, zb_v_bubble = 0;
  TimeBreakdown& b = out.breakdown;
  b = TimeBreakdown{};
  for (size_t i = 0; i < st.size(); ++i) {
    const double t = st[i].per_micro_batch_s();
    if (t > t_max) {
      t_max = t;
      critical = i;
    }
    t_sum += static_cast<double>(shape.classes[i].count) * t;
    const double w = st[i].backward_weight_s;
    zb_bubble = std::max(zb_bubble, t - 2 * w);
    // F the forward, B the rest but W (input gradient, recompute, exposed communication).
    const double f = st[i].forward_s, bi = t - f - w;
    zb_floor = std::max({zb_floor, f, bi});
    zb_v_bubble = std::max({zb_v_bubble, 3 * f - 2 * bi, 3 * bi - 2 * f, 2 * f + bi - 2 * w, w});
    dual_bubble =
        std::max(dual_bubble,
                 std::max(st[i].forward_s, t + st[i].backward_s + st[i].recompute_s - 3 * w) / 2);
  }
  const double p = static_cast<double>(l.pp);
  // The micro-batches each rank runs through its chunks: all of them, or half with DualPipe.
  const double runs = m * micro_batch_share(l.pipeline());
  double pipe = runs * t_max;
  if (l.pp > 1) {
    pipe = sim::schedule_info(l.schedule)
               .pipeline_time_s({m, p, static_cast<double>(l.vpp), t_max, t_sum, zb_bubble,
                                 dual_bubble, zb_floor, zb_v_bubble});
  }
  const StageTiming& c = st[critical];
  b.compute_s = runs * (c.forward_s + c.backward_s);
  b.recompute_s = runs * c.recompute_s;
  b.tp_s = runs * c.tp_s;
  b.cp_s = runs * c.cp_s;
  b.ep_s = runs * c.ep_s;
  b.offload_s = runs * c.offload_s;
  b.bubble_s = pipe - runs * t_max;
  out.p2p_s = shape.p2p_s + shape.p2p_gather_s;
  if (l.pp > 1) {
    // The fill and drain chains cross every chunk boundary once each way: p − 1 transfers in
    // 1F1B, p·v − 1 when each stage holds v chunks (interleaving multiplies pipeline transfers
    // by v; Narayanan et al. 2021 §2.2). Megatron-LM blocks on them in warm-up and cool-down.
    // A V (dualpipev, zb-v) crosses 2(p − 1) boundaries: its turn stays on the last rank.
    const bool interleaved =
        l.schedule == Schedule::interleaved || l.schedule == Schedule::zb_interleaved;
    const double chain = interleaved ? p * static_cast<double>(l.vpp) - 1
                         : placement_kind(l.pipeline()) == PlacementKind::v_shape ? 2 * (p - 1)
                                                                                  : p - 1;
    b.pp_s = 2 * chain * out.p2p_s;
    if (!options_.overlap_p2p) b.pp_s += 2 * m * static_cast<double>(l.vpp) * out.p2p_s;
  }
}

CostModel::ShapeRef CostModel::shape_ref(const Layout& l) { return ShapeRef(&shape_of(l)); }

void CostModel::forget_shapes() {
  while (!shape_cache_.empty()) spare_shapes_.push_back(shape_cache_.extract(shape_cache_.begin()));
  last_shape_ = nullptr;
  last_built_ = nullptr;
}

void CostModel::time_pipeline(const Layout& l, ShapeRef ref, PipelineTiming& out) const {
  const Shape& shape = *ref.shape_;
  out.per_class.clear();
  for (const StageClass& k : shape.classes) {
    StageTiming t = stage_timing(l, k, shape.costs);
    t.offload_s = activation_offload_s(l, shape, k, shape.costs);
    out.per_class.push_back(t);
  }
  fill_pipeline(l, shape, out);
  out.floor_s = out.breakdown.total_s();
}

double CostModel::step_time_lower_bound_s(const Layout& l, ShapeRef ref) const {
  const Shape& shape = *ref.shape_;
  if (shape.lower_bound_s >= 0) return shape.lower_bound_s;
  Layout bare = l;  // the same shape and schedule, recomputing nothing
  bare.recompute = Recompute::none;
  bare.recompute_layers = 0;
  bare.recompute_stage_layers = {};
  double t_max = 0;
  for (const StageClass& k : shape.classes)
    t_max = std::max(t_max, stage_timing(bare, k, shape.costs).per_micro_batch_s());
  const double runs = static_cast<double>(shape.micro_batches) * micro_batch_share(l.pipeline());
  constexpr double kRounding = 1e-12;
  shape.lower_bound_s = runs * t_max * (1 - kRounding);
  return shape.lower_bound_s;
}

double CostModel::finish_step(const Layout& l, ShapeRef ref, PipelineTiming& t) const {
  const Shape& shape = *ref.shape_;
  TimeBreakdown& b = t.breakdown;
  b.dp_s = 0, b.optimizer_s = 0;
  for (size_t i = 0; i < t.per_class.size(); ++i) {
    StageTiming& st = t.per_class[i];
    st.dp_exposed_s = dp_exposed_s(l, shape.classes[i], st, /*with_zero3_gathers=*/true);
    st.optimizer_s = optimizer_step_s(l, shape.classes[i]);
    b.dp_s = std::max(b.dp_s, st.dp_exposed_s);
    b.optimizer_s = std::max(b.optimizer_s, st.optimizer_s);
  }
  return b.total_s();
}

StageMemory CostModel::class_memory(const Layout& l, const Shape& shape,
                                    const StageClass& k) const {
  return stage_memory(k.params, k.mix, shape.costs.dense.activations, shape.costs.moe.activations,
                      l, shape.micro_batches, shape.logits_bytes, context_.fp8, options_.memory);
}

StageMemory CostModel::peak_stage_memory(const Layout& l) {
  return peak_stage_memory(l, shape_ref(l));
}

const CostModel::Shape& CostModel::frames_for_schedule(const Layout& l, const Shape& shape) {
  const Shape& owner = shape.frames_home();
  if (owner.frames_schedule != l.schedule) {
    for (auto& f : owner.frames) f.clear();
    for (auto& f : owner.frame_sums) f.clear();
    owner.frames_schedule = l.schedule;
  }
  return owner;
}

const std::vector<StageMemory>& CostModel::frames_of(const Layout& l, const Shape& shape) const {
  const Shape& owner = frames_for_schedule(l, shape);
  std::vector<StageMemory>& frames = owner.frames[static_cast<size_t>(l.zero)];
  if (!frames.empty()) return frames;
  // Another ZeRO stage's frames of this schedule differ only in the ZeRO stage's terms.
  const auto built = std::find_if(owner.frames.begin(), owner.frames.end(),
                                  [](const std::vector<StageMemory>& f) { return !f.empty(); });
  if (built != owner.frames.end()) {
    frames = *built;
    for (size_t i = 0; i < frames.size(); ++i)
      set_zero_terms(frames[i], shape.classes[i].params, l, context_.fp8, options_.memory);
    return frames;
  }
  for (const StageClass& k : shape.classes)
    frames.push_back(stage_memory_frame(k.params, l, shape.micro_batches, shape.logits_bytes,
                                        context_.fp8, options_.memory));
  return frames;
}

const std::vector<StageActivations>& CostModel::activations_of(const Layout& l,
                                                               const Shape& shape) const {
  if (shape.activations_recompute != l.recompute ||
      shape.activations_layers != l.recompute_layers ||
      shape.activations_modules != l.recompute_modules ||
      shape.activations_stage_layers != l.recompute_stage_layers) {
    const size_t n = shape.classes.size();
    shape.activations.resize(n);
    const LayerActivations& dense = shape.costs.dense.activations;
    const LayerActivations& moe = shape.costs.moe.activations;
    // One count on every stage, not in uniform groups: the terms serve every count.
    if (l.recompute_stage_layers.empty() &&
        !(l.recompute == Recompute::full && l.recompute_layers > 1)) {
      if (shape.activation_terms.empty() || shape.terms_recompute != l.recompute ||
          shape.terms_modules != l.recompute_modules) {
        shape.activation_terms.resize(n);
        for (size_t i = 0; i < n; ++i)
          shape.activation_terms[i] = stage_activation_terms(shape.classes[i].mix, dense, moe,
                                                             l.recompute, l.recompute_modules);
        shape.terms_recompute = l.recompute;
        shape.terms_modules = l.recompute_modules;
      }
      for (size_t i = 0; i < n; ++i)
        shape.activations[i] = stage_activations(shape.activation_terms[i], l.recompute_layers);
    } else {
      for (size_t i = 0; i < n; ++i)
        shape.activations[i] =
            stage_activations(shape.classes[i].mix, dense, moe, l, shape.classes[i].first);
    }
    shape.activations_recompute = l.recompute;
    shape.activations_layers = l.recompute_layers;
    shape.activations_modules = l.recompute_modules;
    shape.activations_stage_layers = l.recompute_stage_layers;
  }
  return shape.activations;
}

const std::vector<FrameSums>& CostModel::sums_of(const Layout& l, const Shape& shape) const {
  std::array<bool, 4> zeros{};
  zeros[static_cast<size_t>(l.zero)] = true;
  return sums_by_zero(l, shape, zeros)[static_cast<size_t>(l.zero)];
}

// The first class with the largest total wins, as in a scan keeping the strictly larger.
// REQUIRES: the layout offloads nothing (stage_totals).
static std::pair<size_t, StageTotals> largest_class(
    const std::vector<FrameSums>& frames, const std::vector<StageActivations>& activations,
    const MemoryOptions& o) {
  size_t peak = 0;
  StageTotals most = stage_totals(frames[0], activations[0], o);
  for (size_t i = 1; i < frames.size(); ++i) {
    const StageTotals t = stage_totals(frames[i], activations[i], o);
    if (t.total > most.total) peak = i, most = t;
  }
  return {peak, most};
}

const std::array<std::vector<FrameSums>, 4>& CostModel::sums_by_zero(
    const Layout& l, const Shape& shape, const std::array<bool, 4>& zeros) const {
  const Shape& owner = frames_for_schedule(l, shape);
  bool cached = true;
  for (size_t zero = 0; zero < zeros.size(); ++zero)
    cached = cached && (!zeros[zero] || !owner.frame_sums[zero].empty());
  if (cached) return owner.frame_sums;
  // frame_sums of frames_of's frames, from their two parts: the part every ZeRO stage shares,
  // and each asked ZeRO stage's terms (remembered), class by class.
  std::array<bool, 4> todo{};
  for (size_t zero = 0; zero < zeros.size(); ++zero)
    todo[zero] = zeros[zero] && owner.frame_sums[zero].empty();
  const StateShards shards = state_shards(l);
  for (const StageClass& k : shape.classes) {
    const FrameFixed fixed = frame_fixed(k.params, l, shape.micro_batches, shape.logits_bytes,
                                         context_.fp8, options_.memory);
    const std::array<ZeroTerms, 4>& terms = zero_terms_by_stage(k.params, shards);
    for (size_t zero = 0; zero < todo.size(); ++zero)
      if (todo[zero]) owner.frame_sums[zero].push_back(frame_sums(fixed, terms[zero]));
  }
  return owner.frame_sums;
}

const std::array<ZeroTerms, 4>& CostModel::zero_terms_by_stage(const StageParams& params,
                                                               StateShards shards) const {
  const ZeroTermsKey key{
      static_cast<uint64_t>(params.dense_per_gpu),  static_cast<uint64_t>(params.expert_per_gpu),
      static_cast<uint64_t>(params.linear_per_gpu), static_cast<uint64_t>(params.layers),
      static_cast<uint64_t>(shards.dense),          static_cast<uint64_t>(shards.expert)};
  if (auto* known = zero_terms_memo_.find(key)) return known->second;
  std::array<ZeroTerms, 4> terms;
  for (size_t zero = 0; zero < terms.size(); ++zero)
    terms[zero] = zero_terms(params, static_cast<int>(zero), shards, context_.fp8, options_.memory);
  return zero_terms_memo_.emplace(key, terms).first->second;
}

void CostModel::peak_totals_by_zero(const Layout& l, ShapeRef ref, const std::array<bool, 4>& zeros,
                                    std::array<StageTotals, 4>& out) const {
  const Shape& shape = *ref.shape_;
  const std::vector<StageActivations>& activations = activations_of(l, shape);
  const std::array<std::vector<FrameSums>, 4>& sums = sums_by_zero(l, shape, zeros);
  // largest_class(sums[zero], activations, ...).second for each marked stage, the stages
  // scanned side by side: the same totals, kept by the same comparisons.
  const MemoryOptions& o = options_.memory;
  for (size_t zero = 0; zero < zeros.size(); ++zero)
    if (zeros[zero]) out[zero] = stage_totals(sums[zero][0], activations[0], o);
  for (size_t i = 1; i < activations.size(); ++i) {
    const StageActivations& a = activations[i];
    for (size_t zero = 0; zero < zeros.size(); ++zero) {
      if (!zeros[zero]) continue;
      const StageTotals t = stage_totals(sums[zero][i], a, o);
      if (t.total > out[zero].total) out[zero] = t;
    }
  }
}

// Whether two classes' terms give the same per-micro-batch bytes and recompute buffer at every
// count (stage_activations reads only these; the first layer's bytes are not compared).
static bool same_activation_terms(const StageActivationTerms& a, const StageActivationTerms& b) {
  return a.recompute == b.recompute && a.dense_layers == b.dense_layers &&
         a.moe_layers == b.moe_layers && a.dense_full == b.dense_full &&
         a.dense_policy == b.dense_policy && a.moe_full == b.moe_full &&
         a.moe_policy == b.moe_policy && a.dense_whole == b.dense_whole &&
         a.moe_whole == b.moe_whole && a.dense_largest == b.dense_largest &&
         a.moe_largest == b.moe_largest;
}

int64_t CostModel::activations_settle(const Layout& l, ShapeRef ref, int64_t from_layers,
                                      int64_t to_layers, int64_t step) const {
  const int64_t never = to_layers + 1;
  if (l.recompute == Recompute::full || !l.recompute_stage_layers.empty() || step < 1 ||
      !(options_.memory.allocator_slack_fraction >= 0))
    return never;
  const Shape& shape = *ref.shape_;
  Layout probe = l;
  probe.recompute_layers = from_layers;
  activations_of(probe, shape);  // takes the terms of l's recompute mode and modules
  if (shape.activation_terms.size() != shape.classes.size() ||
      shape.terms_recompute != l.recompute || shape.terms_modules != l.recompute_modules)
    return never;
  // The run settles past every class's last growth.
  const int64_t last = from_layers + (to_layers - from_layers) / step * step;
  int64_t settled = from_layers;
  const StageActivationTerms* previous = nullptr;
  for (const StageActivationTerms& terms : shape.activation_terms) {
    // A class with the previous one's terms has its activations, scanned already.
    if (previous && same_activation_terms(terms, *previous)) continue;
    previous = &terms;
    settled = std::max(settled, class_settles(terms, from_layers, last, step));
  }
  return settled;
}

int64_t CostModel::class_settles(const StageActivationTerms& terms, int64_t from, int64_t last,
                                 int64_t step) const {
  const SettleKey key{static_cast<uint64_t>(terms.recompute),
                      static_cast<uint64_t>(terms.dense_layers),
                      static_cast<uint64_t>(terms.moe_layers),
                      std::bit_cast<uint64_t>(terms.dense_full),
                      std::bit_cast<uint64_t>(terms.dense_policy),
                      std::bit_cast<uint64_t>(terms.moe_full),
                      std::bit_cast<uint64_t>(terms.moe_policy),
                      std::bit_cast<uint64_t>(terms.dense_whole),
                      std::bit_cast<uint64_t>(terms.moe_whole),
                      std::bit_cast<uint64_t>(terms.dense_largest),
                      std::bit_cast<uint64_t>(terms.moe_largest),
                      static_cast<uint64_t>(from),
                      static_cast<uint64_t>(last),
                      static_cast<uint64_t>(step)};
  if (auto* known = settle_memo_.find(key)) return known->second;
  // Scanned down from the last count: the first growth met is the highest.
  int64_t settled = from;
  StageActivations later = stage_activations(terms, last);
  for (int64_t rl = last - step; rl >= from; rl -= step) {
    const StageActivations a = stage_activations(terms, rl);
    if (!(later.per_micro_batch <= a.per_micro_batch &&
          later.recompute_buffer <= a.recompute_buffer)) {
      settled = rl + step;
      break;
    }
    later = a;
  }
  settle_memo_.emplace(key, settled);
  return settled;
}

// A relative margin far above rounding (largest_in_every_class, the activations).
constexpr double kTermMargin = 1e-9;

constexpr uint8_t kStatesBit = 1U << static_cast<unsigned>(MemoryTerm::states);
constexpr uint8_t kActivationsBit = 1U << static_cast<unsigned>(MemoryTerm::activations);

// The terms largest_in_every_class finds largest in one class's totals.
static uint8_t largest_terms(const StageTotals& t, bool activations_asked) {
  uint8_t bits = 0;
  if (largest_term(t) == MemoryTerm::states) bits |= kStatesBit;
  if (activations_asked && t.activations > t.states && t.activations >= t.other * (1 + kTermMargin))
    bits |= kActivationsBit;
  return bits;
}

void CostModel::largest_in_every_class_by_zero(const Layout& l, ShapeRef ref,
                                               const std::array<bool, 4>& zeros,
                                               std::array<uint8_t, 4>& out) const {
  const bool activations_asked = options_.memory.allocator_slack_fraction <= 0.5;
  const Shape& shape = *ref.shape_;
  const std::vector<StageActivations>& activations = activations_of(l, shape);
  const std::array<std::vector<FrameSums>, 4>& sums = sums_by_zero(l, shape, zeros);
  for (size_t zero = 0; zero < zeros.size(); ++zero) {
    if (!zeros[zero]) continue;
    uint8_t bits = activations.empty() ? 0 : kStatesBit | kActivationsBit;
    for (size_t i = 0; i < activations.size() && bits != 0; ++i)
      bits &= largest_terms(stage_totals(sums[zero][i], activations[i], options_.memory),
                            activations_asked);
    out[zero] = bits;
  }
}

bool CostModel::largest_in_every_class(const Layout& l, ShapeRef ref, int zero,
                                       MemoryTerm term) const {
  std::array<bool, 4> marked{};
  marked[static_cast<size_t>(zero)] = true;
  std::array<uint8_t, 4> bits{};
  largest_in_every_class_by_zero(l, ref, marked, bits);
  return (bits[static_cast<size_t>(zero)] >> static_cast<unsigned>(term)) & 1U;
}

// Only the peak class is built in full; a layout offloading anything takes the general path.
StageMemory CostModel::peak_stage_memory(const Layout& l, ShapeRef ref) const {
  const Shape& shape = *ref.shape_;
  const std::vector<StageMemory>& frames = frames_of(l, shape);
  const std::vector<StageActivations>& activations = activations_of(l, shape);
  if (!l.offloads()) {
    const size_t peak = largest_class(sums_of(l, shape), activations, options_.memory).first;
    return with_activations(frames[peak], activations[peak], l, options_.memory);
  }
  StageMemory most;
  for (size_t i = 0; i < frames.size(); ++i) {
    StageMemory s = with_activations(frames[i], activations[i], l, options_.memory);
    if (i == 0 || s.total_bytes() > most.total_bytes()) most = s;
  }
  return most;
}

int64_t CostModel::uniform_recompute_group(const Layout& l) {
  return uniform_recompute_group(l, shape_ref(l));
}

int64_t CostModel::uniform_recompute_group(const Layout& l, ShapeRef ref) const {
  const Shape& shape = *ref.shape_;
  // The group depends on the shape and the schedule (micro-batches in flight) alone.
  if (shape.uniform_group > 0 && shape.uniform_group_schedule == l.schedule)
    return shape.uniform_group;
  shape.uniform_group = best_uniform_group(l, shape);
  shape.uniform_group_schedule = l.schedule;
  return shape.uniform_group;
}

// Scans a stage's counts upward; a stage of one kind of layer is bisected instead: from one
// layer on, each further layer recomputed stores its input instead of all its activations while
// the rebuilt layer's buffer stays the same, so the totals fall with the count.
bool CostModel::least_recompute_by_stage(const Layout& l, ShapeRef ref, int64_t step,
                                         std::vector<int64_t>& counts, double& peak_bytes) const {
  const Shape& shape = *ref.shape_;
  const std::vector<StageMemory>& frames = frames_of(l, shape);
  const double hbm = static_cast<double>(cluster_.gpu.hbm_bytes);
  Layout probe = l;
  probe.recompute_stage_layers.clear();
  counts.assign(static_cast<size_t>(l.pp), 0);
  peak_bytes = 0;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    const size_t c = shape.class_of_stage[static_cast<size_t>(stage)];
    const StageLayerMix& mix = shape.classes[c].mix;
    StageMemory frame = frames[c];  // the class's first stage's, but for the micro-batches held
    frame.in_flight_micro_batches = in_flight_micro_batches(l, shape.micro_batches, stage);
    auto total_at = [&](int64_t count) {
      probe.recompute_layers = count;
      return stage_totals(frame,
                          stage_activations(mix, shape.costs.dense.activations,
                                            shape.costs.moe.activations, probe, stage),
                          options_.memory)
          .total;
    };
    const int64_t most = mix.layers() / step;  // in steps
    int64_t count = 0;
    double total = total_at(0);
    if (total > hbm && mix.dense_layers > 0 && mix.moe_layers > 0) {
      for (count = step; count <= most * step; count += step)
        if ((total = total_at(count)) <= hbm) break;
      if (count > most * step) return false;
    } else if (total > hbm) {
      if (most == 0 || (total = total_at(most * step)) > hbm) return false;
      int64_t lo = 1, hi = most;  // hi fits, with `total`
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const double at_mid = total_at(mid * step);
        if (at_mid <= hbm)
          hi = mid, total = at_mid;
        else
          lo = mid + 1;
      }
      count = hi * step;
    }
    peak_bytes = std::max(peak_bytes, total);
    counts[static_cast<size_t>(stage)] = count;
  }
  return true;
}

int64_t CostModel::best_uniform_group(const Layout& l, const Shape& shape) const {
  const LayerActivations& dense = shape.costs.dense.activations;
  const LayerActivations& moe = shape.costs.moe.activations;
  // Each class's terms and micro-batches in flight, the same for every group size.
  std::vector<UniformClassTerms>& classes = uniform_classes_;
  classes.clear();
  for (const StageClass& k : shape.classes) {
    if (k.mix.layers() == 0) continue;
    classes.push_back({uniform_group_terms(k.mix, dense, moe),
                       in_flight_micro_batches(l, shape.micro_batches, k.first)});
  }
  // The scan below reads these alone: an answer found for the same bits is this one.
  UniformGroupKey key{};
  const bool keyed = classes.size() <= kUniformKeyClasses;
  if (keyed) {
    for (size_t i = 0; i < classes.size(); ++i) {
      const UniformClassTerms& c = classes[i];
      key[4 * i] = static_cast<uint64_t>(c.terms.layers);
      key[4 * i + 1] = std::bit_cast<uint64_t>(c.terms.layer_input);
      key[4 * i + 2] = std::bit_cast<uint64_t>(c.terms.widest);
      key[4 * i + 3] = std::bit_cast<uint64_t>(c.in_flight);
    }
    if (auto* known = uniform_group_memo_.find(key)) return known->second;
  }
  auto largest = [&](int64_t group) {
    double worst = 0;
    for (const UniformClassTerms& c : classes)
      worst = std::max(worst, uniform_group_activation_bytes(c.terms, group, c.in_flight));
    return worst;
  };
  int64_t best = 1;
  double best_bytes = largest(1);
  int64_t most_layers = 0;
  for (const StageClass& k : shape.classes) most_layers = std::max(most_layers, k.mix.layers());
  for (int64_t group = 2; group <= most_layers;) {
    const double bytes = largest(group);
    if (bytes < best_bytes) best = group, best_bytes = bytes;
    // On to the next size at which some class's group count ⌈L/N⌉ falls (⌈L/(k − 1)⌉ for count
    // k): up to it every class keeps its count and rebuilds no fewer layers at once, so no size
    // in between is strictly smaller than this one (the same products, addends no smaller: exact
    // in floating point) and the scan keeps the same best.
    int64_t next = most_layers + 1;
    for (const UniformClassTerms& c : classes) {
      const int64_t count = (c.terms.layers + group - 1) / group;
      if (count > 1) next = std::min(next, (c.terms.layers + count - 2) / (count - 1));
    }
    group = std::max(group + 1, next);
  }
  if (keyed) uniform_group_memo_.emplace(key, best);
  return best;
}

bool CostModel::host_fits(const Layout& l) {
  if (!l.offloads()) return true;
  const Shape& shape = shape_of(l);
  double host = 0, nvme = 0;
  for (const StageClass& k : shape.classes) {
    const StageMemory s = class_memory(l, shape, k);
    host = std::max(host, s.host_bytes);
    nvme = std::max(nvme, s.nvme_bytes);
  }
  const double node = static_cast<double>(cluster_.gpus_per_node);
  return node * host <= cluster_.host.memory_bytes && node * nvme <= cluster_.host.nvme_bytes;
}

Estimate CostModel::evaluate(const Layout& l, bool detail) {
  return evaluate(l, peak_stage_memory(l), detail);
}

Estimate CostModel::evaluate(const Layout& l, const StageMemory& peak, bool detail) {
  const Shape& shape = shape_of(l);
  const LayerPair& costs = shape.costs;
  Estimate e;
  e.layout = l;
  e.micro_batches = shape.micro_batches;
  e.capacity_bytes = static_cast<double>(cluster_.gpu.hbm_bytes);
  e.peak_bytes = peak.total_bytes();
  e.peak_stage = peak.stage;
  const ShapeRef ref(&shape);
  time_pipeline(l, ref, timing_);
  e.step_time_s = finish_step(l, ref, timing_);
  e.breakdown = timing_.breakdown;
  e.bubble_fraction = e.breakdown.bubble_s / e.step_time_s;
  e.p2p_s = timing_.p2p_s;
  double recomputed_flops = 0;
  for (const StageClass& k : shape.classes) {
    const FullRecompute full = full_recompute(l, k.mix, k.first);
    double flops = static_cast<double>(full.dense) * dense_flops_.total() +
                   static_cast<double>(full.moe) * moe_flops_.total();
    if (l.recompute == Recompute::selective) {
      flops += static_cast<double>(k.mix.dense_layers - full.dense) *
                   dense_flops_.selective(l.recompute_modules) +
               static_cast<double>(k.mix.moe_layers - full.moe) *
                   moe_flops_.selective(l.recompute_modules);
    }
    recomputed_flops += static_cast<double>(k.count) * flops;
  }
  const double moe_layers = static_cast<double>(model_.moe_layers_in(0, model_.trained_layers()));
  const double dense_layers = static_cast<double>(model_.trained_layers()) - moe_layers;
  e.model_flops =
      3 * (dense_layers * dense_flops_.total() + moe_layers * moe_flops_.total() + head_flops_);
  e.hardware_flops = e.model_flops + recomputed_flops;
  const double gpus = static_cast<double>(l.gpus());
  const double peak_flops = cluster_.gpu.peak_flops_per_s(training_.precision);
  e.model_tflops_per_gpu = e.model_flops / (e.step_time_s * gpus) / 1e12;
  e.hardware_tflops_per_gpu = e.hardware_flops / (e.step_time_s * gpus) / 1e12;
  e.mfu = e.model_flops / (e.step_time_s * gpus * peak_flops);
  e.hfu = e.hardware_flops / (e.step_time_s * gpus * peak_flops);
  e.tokens_per_s = static_cast<double>(training_.global_batch * training_.seq_len) / e.step_time_s;
  if (!detail) return e;
  const std::vector<StageParams>& params = params_of(l);
  e.memory.params_total = total_params(model_);
  for (size_t i = 0; i < params.size(); ++i) {
    const StageClass& k = shape.classes[shape.class_of_stage[i]];
    e.memory.stages.push_back(stage_memory(params[i], k.mix, costs.dense.activations,
                                           costs.moe.activations, l, shape.micro_batches,
                                           shape.logits_bytes, context_.fp8, options_.memory));
    StageTiming t = timing_.per_class[shape.class_of_stage[i]];
    t.stage = static_cast<int64_t>(i);
    e.stages.push_back(t);
  }
  e.memory.peak_bytes = e.peak_bytes;
  e.memory.peak_stage = e.peak_stage;
  e.memory.capacity_bytes = e.capacity_bytes;
  return e;
}

}  // namespace meshplan
