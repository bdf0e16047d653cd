// Step time, MFU and memory of one layout (DESIGN.md §3): per-stage compute from the
// calibrated GEMM/attention/HBM throughput, exposed communication under the overlap rules in
// planner_options.h, the pipeline bubble of the schedule, gradient sync and the optimizer step.
//
// Overlap rules (each a documented choice):
// - TP collectives are exposed unless the layout sets tp_overlap (then only the part longer
//   than the same pass's GEMMs is).
// - CP's K/V ring exchange hides behind attention compute; only the excess is exposed.
// - EP all-to-alls are exposed.
// - PP sends are asynchronous: only the chain along pipeline fill and drain is exposed,
//   2·(p − 1) transfers per step, 2·(p·v − 1) interleaved (plus 2·m·v when
//   CostOptions::overlap_p2p is off).
// - DP gradient reduction overlaps the backward pass of the last micro-batch except the last
//   bucket; ZeRO-1/2 parameter all-gathers overlap the first forward except the last bucket
//   (unless CostOptions::overlap_param_gather is off); ZeRO-2/3 reduce-scatter gradients after
//   every micro-batch's backward (unless CostOptions::zero_reduce_every_micro_batch is off,
//   then once per step, framework_preset.h); ZeRO-3 gathers each
//   layer's parameters one layer ahead in forward and backward.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/cluster_spec.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "core/pipeline_placement.h"
#include "core/profile.h"
#include "planner/attention_model.h"
#include "planner/collective_memo.h"
#include "planner/collective_model.h"
#include "planner/flat_cache_map.h"
#include "planner/flop_count.h"
#include "planner/gemm_model.h"
#include "planner/hash_mix.h"
#include "planner/last_key_cache.h"
#include "planner/layer_cost.h"
#include "planner/memory_model.h"
#include "planner/param_count.h"
#include "planner/planner_options.h"
#include "planner/shard_groups.h"
#include "planner/straggler.h"
#include "simulator/pipeline_graph.h"

namespace meshplan {

struct TimeBreakdown {
  double compute_s = 0, recompute_s = 0;
  double tp_s = 0, cp_s = 0, ep_s = 0, pp_s = 0, dp_s = 0;  // exposed communication
  double bubble_s = 0, optimizer_s = 0;
  double offload_s = 0;  // activation offload transfers not hidden behind compute
  double total_s() const {
    return compute_s + recompute_s + tp_s + cp_s + ep_s + pp_s + dp_s + bubble_s + optimizer_s +
           offload_s;
  }
};

// One pipeline stage, per micro-batch unless named otherwise.
struct StageTiming {
  int64_t stage = 0;
  double forward_s = 0, backward_s = 0, backward_weight_s = 0, recompute_s = 0;  // compute
  double tp_s = 0, cp_s = 0, ep_s = 0;  // exposed communication, all passes
  double offload_s = 0;                 // exposed activation offload transfers, both passes
  double dp_exposed_s = 0;              // per step
  double optimizer_s = 0;               // per step (with offload: transfers and the CPU step)
  double per_micro_batch_s() const {
    return forward_s + backward_s + recompute_s + tp_s + cp_s + ep_s + offload_s;
  }
};

struct Estimate {
  Layout layout;
  int64_t micro_batches = 0;
  double step_time_s = 0;
  double bubble_fraction = 0;
  double model_flops = 0, hardware_flops = 0;  // per step, whole job
  double mfu = 0, hfu = 0;
  double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
  double tokens_per_s = 0;
  TimeBreakdown breakdown;
  double peak_bytes = 0, capacity_bytes = 0;
  int64_t peak_stage = 0;
  bool fits() const { return peak_bytes <= capacity_bytes; }
  // Filled only when evaluate() is asked for detail:
  MemoryEstimate memory;
  std::vector<StageTiming> stages;
  double p2p_s = 0;             // one activation transfer between stages
  double simulated_step_s = 0;  // set when the simulator replayed this layout (0: not)
};

class CostModel {
  struct Shape;

 public:
  CostModel(const ModelSpec& m, const ClusterSpec& c, const CalibrationProfile& p,
            const TrainingSpec& t, const CostOptions& o = {});
  // A fresh model on the same inputs (caches are per instance: one per search thread).
  CostModel(const CostModel& other)
      : CostModel(other.model_, other.cluster_, other.profile_, other.training_, other.options_) {}
  CostModel& operator=(const CostModel&) = delete;

  // REQUIRES: check_layout passed for this model, GPU count and batch.
  // With detail, fills memory and stages; the search asks without (faster, same numbers).
  Estimate evaluate(const Layout& l, bool detail = true);
  // The same, given peak_stage_memory(l) already computed (the search's hot path).
  Estimate evaluate(const Layout& l, const StageMemory& peak, bool detail);
  // Memory only: the stage with the highest total; the search calls it before timing.
  StageMemory peak_stage_memory(const Layout& l);

  // The search's hot path (layout_search.cc). Layouts differing only in ZeRO stage, recompute
  // and schedule share one shape: shape_ref looks its costs up once and the calls below take
  // the handle instead of looking them up again. A handle stays valid for the model's lifetime
  // (the cache is a std::map, whose nodes never move) and belongs to this model only.
  class ShapeRef {
   public:
    ShapeRef() = default;

   private:
    friend class CostModel;
    explicit ShapeRef(const Shape* shape) : shape_(shape) {}
    const Shape* shape_ = nullptr;
  };
  ShapeRef shape_ref(const Layout& l);
  // Drops the cached shapes (invalidating every ShapeRef): the search calls it between work
  // items, which never share a shape, so its memory stays that of one item.
  void forget_shapes();
  // peak_stage_memory(l), for l of the handle's shape.
  StageMemory peak_stage_memory(const Layout& l, ShapeRef shape) const;
  // The sums of the peak stage alone (faster) for each ZeRO stage marked in `zeros` (l's own
  // zero ignored), into `out`. REQUIRES: !l.offloads().
  void peak_totals_by_zero(const Layout& l, ShapeRef shape, const std::array<bool, 4>& zeros,
                           std::array<StageTotals, 4>& out) const;
  // For l of the handle's shape recomputing by the block method (recompute none or selective,
  // one count on every stage): the least of the counts from_layers, from_layers + step, ... up
  // to to_layers from which on no stage class's activations (per micro-batch, recompute buffer)
  // grow. From there no ZeRO stage's peak total (peak_totals_by_zero) grows either: every sum
  // behind it is non-decreasing in them and rounding to nearest is monotone, so the search may
  // count those layouts without placing each (layout_search.cc: count_lost_tail). Above
  // to_layers where l is not of that kind or the allocator slack is negative.
  int64_t activations_settle(const Layout& l, ShapeRef shape, int64_t from_layers,
                             int64_t to_layers, int64_t step) const;
  // Whether under ZeRO stage `zero` the term `term` is the largest (largest_term) in every stage
  // class of l (of the handle's shape), so that it is a layout's dominant term whichever class
  // peaks. Over recompute counts where the activations settle (activations_settle) the states
  // stay, and neither the activations nor the other bytes grow: the states, largest in every
  // class at one count, are so at every larger count. The activations are asked with a margin
  // (above the states, and above the other bytes by a relative 1e-9, far above rounding) and only
  // with an allocator slack of at most one half, so that they were largest in every class at
  // every smaller count too: toward smaller counts they grow by at least twice what the other
  // bytes do (a slack's fraction of them). The other bytes: false. REQUIRES: !l.offloads().
  bool largest_in_every_class(const Layout& l, ShapeRef shape, int zero, MemoryTerm term) const;
  // largest_in_every_class of the states and of the activations at once, for each ZeRO stage
  // `zeros` marks: bit 1 << MemoryTerm set where that term is largest in every class.
  void largest_in_every_class_by_zero(const Layout& l, ShapeRef shape,
                                      const std::array<bool, 4>& zeros,
                                      std::array<uint8_t, 4>& out) const;

  // A step's timing before its two ZeRO-dependent terms (exposed data-parallel sync and the
  // optimizer step, both 0 in `breakdown`): per-class stage timings and the pipeline, which
  // depend on recompute and schedule only, so the search times them once for every ZeRO stage.
  // Buffers are reused: no allocation once grown.
  struct PipelineTiming {
    std::vector<StageTiming> per_class;
    TimeBreakdown breakdown;
    double p2p_s = 0;
    double floor_s = 0;  // breakdown.total_s() before finish_step: step_time_floor_s
  };
  void time_pipeline(const Layout& l, ShapeRef shape, PipelineTiming& out) const;
  // No ZeRO stage's step is shorter: the ZeRO-dependent terms are nonnegative and rounding to
  // nearest is monotone, so the bound holds in floating point too (the search prunes with it).
  static double step_time_floor_s(const PipelineTiming& t) { return t.floor_s; }
  // A lower bound on step_time_floor_s of every layout of the handle's shape, whichever schedule
  // of the shape's placement it runs, whatever it recomputes or offloads and whichever ZeRO stage
  // it takes, cheaper than timing one: the micro-batches each rank runs times the largest
  // per-micro-batch time of a stage class recomputing nothing. Every schedule's pipeline time is at
  // least that product (fill_pipeline: each adds a nonnegative bubble to it), recompute and offload
  // only add nonnegative terms to a class's time (rounding to nearest is monotone), and the floor's
  // sum of the breakdown rounds within far less than the relative 1e-12 taken off. Kept per shape:
  // it reads the schedule only through its placement of chunks on ranks (micro_batch_share,
  // holds_last_chunk), which is part of the shape's key.
  double step_time_lower_bound_s(const Layout& l, ShapeRef shape) const;
  // Adds l's ZeRO-dependent terms to `t` (per class and in the breakdown, replacing those of
  // an earlier call) and returns the step time: evaluate(l).step_time_s, bit for bit.
  double finish_step(const Layout& l, ShapeRef shape, PipelineTiming& t) const;
  // Whether what the layout offloads (StageMemory::host_bytes, nvme_bytes) fits the node: the
  // largest stage's share times the GPUs per node within ClusterSpec::host. True without offload.
  bool host_fits(const Layout& l);
  // For a layout with full recompute: the group size N of the uniform method
  // (recompute_layers, memory_model.cc) that least raises the largest stage's activations,
  // m·⌈L/N⌉ layer inputs plus N layers rebuilt at once; 1 when grouping saves nothing.
  int64_t uniform_recompute_group(const Layout& l);
  // The same for l of the handle's shape (the search's retries, without looking the shape up).
  int64_t uniform_recompute_group(const Layout& l, ShapeRef shape) const;
  // For a layout of the handle's shape recomputing by the block method (recompute none or
  // selective, no per-stage list, nothing offloaded): each pipeline stage's fewest layers
  // recomputed in full, in multiples of `step`, with which that stage fits the GPU under l's
  // ZeRO stage and schedule (issue 12: the first stages hold the most micro-batches in flight).
  // `peak_bytes`: the largest stage's total at those counts (peak_stage_memory's, bit for bit).
  // False when a stage does not fit even recomputing every layer it holds.
  bool least_recompute_by_stage(const Layout& l, ShapeRef shape, int64_t step,
                                std::vector<int64_t>& counts, double& peak_bytes) const;

  // The per-chunk costs the simulator replays (pipeline_problem.cc). The simulator issues a
  // chunk's gradient sync after its last backward, so it receives the part of the stage's
  // reduction (and ZeRO-1/2 weight gather) that the overlap rules leave exposed, split over the
  // stage's chunks by layers; ZeRO-3 gathers are replayed as operations (whole chunk per pass).
  // REQUIRES: check_layout passed.
  sim::PipelineProblem pipeline_problem(const Layout& l);

  const ModelSpec& model() const { return model_; }
  const ClusterSpec& cluster() const { return cluster_; }
  const TrainingSpec& training() const { return training_; }
  const CostOptions& options() const { return options_; }
  const CollectiveModel& collectives() const { return collectives_; }
  // Whether recompute=selective drops any stored activation for this model and precision
  // (attention_core_stores_activations).
  bool selective_recompute_saves() const { return selective_saves_; }
  const GemmModel& gemm() const { return gemm_; }
  const AttentionModel& attention() const { return attention_; }
  const CalibrationProfile& profile() const { return profile_; }
  const ResolvedCalibration& calibration() const { return calibration_; }

  // One micro-batch's per-layer costs of a layout (dense and MoE layers, the LM head); cached.
  struct LayerPair {
    LayerCost dense, moe;
    HeadCost head;
  };
  // Cached by their key and groups (the search asks for the same costs for every pipeline
  // depth, data-parallel degree and vpp of a shape); the reference stays valid until the next
  // call. The cache holds at most kLayerCostsCached entries (emptied when full: the search asks
  // in runs of a few keys), so its memory stays small.
  const LayerPair& layer_costs(const Layout& l);
  static constexpr size_t kLayerCostsCached = 4096;
  // layer_costs(l) op by op (planner/layer_cost.h layer_ops, head_ops): the dense layer's and the
  // MoE layer's (each empty where the model has no layer of its kind) and the LM head's, for one
  // micro-batch on one GPU.
  struct LayerOps {
    std::vector<OpCost> dense, moe, head;
  };
  LayerOps layer_ops(const Layout& l) const;
  // The terms of layer_costs(l) a step time grows with that tell a shape's CP variants apart,
  // bit for bit layer_costs' (layer_cost_cp_terms: the TP and EP communication, which cost the
  // most to price, left out), of the dense layer and the MoE layer (the dense one's again
  // without experts), in the order of CpTerms::Layer. Cached by the fields they read.
  struct CpTerms {
    // forward_s, backward_s, backward_weight_s, attention_forward_s, cp_forward_s, cp_backward_s
    using Layer = std::array<double, 6>;
    Layer dense{}, moe{};
  };
  const CpTerms& cp_terms(const Layout& l);

 private:
  // A dense and an MoE layer's compute (layer_compute) and the LM head's, shared by the layer
  // costs whose keys differ only in communication. The MoE layer's is kept by compute_of's whole
  // key; the dense layer's and the head's by the fields they read (dense_key), which leaves out
  // the expert degrees (ep, etp) where the model's first layer is dense: an MoE search asks the
  // same dense compute for every ep and etp of a shape.
  struct DenseCompute {
    LayerCompute dense;
    HeadCost head;  // the LM head and loss (no communication)
  };
  struct ComputeRefs {
    const LayerCompute* dense = nullptr;
    const LayerCompute* moe = nullptr;
    const HeadCost* head = nullptr;
  };
  ComputeRefs compute_of(const LayerCostKey& k);
  // layer_costs' cache key: the LayerCostKey's fields, then each LayerGroups group's dims,
  // two values a word (layer_costs).
  using LayerCostsKey = std::array<int64_t, 13>;
  struct LayerCostsHash {
    size_t operator()(const LayerCostsKey& k) const;
  };
  // Gradient-sync collective times of one data-parallel group, for one ZeRO stage.
  struct SyncTimes {
    double reduce = 0, reduce_last = 0, gather = 0, gather_last = 0, layer_gather = 0;
    double layer_reduce = 0;  // one layer's gradients (ZeRO-2/3 reducing every micro-batch)
    // Seconds of HBM traffic the NCCL kernels of each collective above cause (what they take
    // from compute they overlap: exposed_after_overlap).
    double reduce_hbm = 0, gather_hbm = 0, layer_gather_hbm = 0, layer_reduce_hbm = 0;
  };
  // Stages with identical layers and parameters (one stage each when the layout recomputes a
  // count per stage); `first` is the lowest stage index, which holds the most micro-batches in
  // flight, so it carries the class's peak memory.
  // take_classes (cost_model.cc) sets every field but `sync` one by one, for build_shape and
  // build_sibling_shape (a new field is set there too).
  struct StageClass {
    int64_t first = 0, count = 0;
    StageLayerMix mix;
    StageParams params;
    // [zero][dense, expert], computed when first asked for (sync_of): most layouts the search
    // generates are never timed in full.
    mutable std::array<std::array<SyncTimes, 2>, 4> sync{};
    mutable std::array<bool, 4> sync_ready{};
    // Tied input and output embeddings on different stages (first and last): their gradients
    // are all-reduced between the two after the backward pass, exposed.
    double embedding_sync_s = 0;
    // DualPipe: the two copies of each chunk (this rank's and its mirror rank's) add their
    // gradients after the backward pass, exposed (mirror_sync_s).
    double mirror_sync_s = 0;
  };
  // Everything that depends on the layout's shape (degrees, micro-batch, order) but not on
  // ZeRO, recompute or schedule: the search evaluates many layouts per shape.
  struct Shape {
    LayerPair costs;
    std::vector<StageClass> classes;
    std::vector<size_t> class_of_stage;
    double p2p_s = 0, logits_bytes = 0;
    // Without sequence parallelism the receiver all-gathers the TP-scattered activation over
    // its TP group (Narayanan et al. 2021 §4.1, scatter/gather optimisation).
    double p2p_gather_s = 0;
    int64_t micro_batches = 0;
    // One dense / MoE layer's stored activations per micro-batch without recompute: what
    // activation offload (Layout::act_offload) moves to the host and back.
    double dense_activation_bytes = 0, moe_activation_bytes = 0;
    // stage_memory_frame of each class per ZeRO stage, for the schedule last asked about
    // (peak_stage_memory's cache: the search asks for one schedule many times over).
    mutable std::array<std::vector<StageMemory>, 4> frames;
    // frame_sums of each class's frame per ZeRO stage (of `frames`, which need not be built).
    mutable std::array<std::vector<FrameSums>, 4> frame_sums;
    // A shape differing from this one in ep_overlap alone, whose frames (which do not depend on
    // it) this one shares; null: its own.
    const Shape* frames_owner = nullptr;
    // The shape holding this one's frames: frames_owner, or itself.
    const Shape& frames_home() const { return frames_owner ? *frames_owner : *this; }
    mutable Schedule frames_schedule = Schedule::one_f_one_b;
    // stage_activations of each class for the recompute choice last asked about (the same for
    // every ZeRO stage and schedule).
    mutable std::vector<StageActivations> activations;
    mutable Recompute activations_recompute = Recompute::none;
    mutable RecomputeModules activations_modules = kDefaultRecomputeModules;
    mutable int64_t activations_layers = -1;
    mutable StageCounts activations_stage_layers;
    // stage_activation_terms of each class for `terms_recompute` and `terms_modules` (empty: none
    // yet): activations_of combines them for each count of layers recomputed in full.
    mutable std::vector<StageActivationTerms> activation_terms;
    mutable Recompute terms_recompute = Recompute::none;
    mutable RecomputeModules terms_modules = kDefaultRecomputeModules;
    mutable double lower_bound_s = -1;  // step_time_lower_bound_s (negative: not yet asked)
    // uniform_recompute_group for `uniform_group_schedule` (0: not yet asked).
    mutable int64_t uniform_group = 0;
    mutable Schedule uniform_group_schedule = Schedule::one_f_one_b;
  };
  int64_t best_uniform_group(const Layout& l, const Shape& shape) const;
  // best_uniform_group's terms of one class, and its micro-batches in flight; the buffer is
  // reused from call to call.
  struct UniformClassTerms {
    UniformGroupTerms terms;
    double in_flight = 0;
  };
  mutable std::vector<UniformClassTerms> uniform_classes_;
  // best_uniform_group's answers by what it reads: each class's terms and micro-batches in
  // flight (the bits of layers, layer input, widest layer, in flight), for shapes of at most
  // kUniformKeyClasses classes. Shapes of other shard groups and items ask it again.
  static constexpr size_t kUniformKeyClasses = 6;
  using UniformGroupKey = std::array<uint64_t, 4 * kUniformKeyClasses>;
  // Entries each of the scans' memos keeps (best_uniform_group's, class_settles').
  static constexpr size_t kScanAnswersCached = 4096;
  mutable FlatCacheMap<UniformGroupKey, int64_t, WordsHash, kScanAnswersCached> uniform_group_memo_;
  // activations_settle's scan of one stage class's terms over the counts from, from + step, ...,
  // last: the count after the highest at which the next count's activations grow (`from` where
  // none does). Kept by the fields it reads (the terms stage_activations compares, the counts).
  int64_t class_settles(const StageActivationTerms& terms, int64_t from, int64_t last,
                        int64_t step) const;
  using SettleKey = std::array<uint64_t, 14>;
  mutable FlatCacheMap<SettleKey, int64_t, WordsHash, kScanAnswersCached> settle_memo_;
  const std::vector<StageActivations>& activations_of(const Layout& l, const Shape& shape) const;
  const std::vector<StageMemory>& frames_of(const Layout& l, const Shape& shape) const;
  // The shape holding `shape`'s frames and their sums, those of another schedule forgotten.
  static const Shape& frames_for_schedule(const Layout& l, const Shape& shape);
  // zero_terms of a stage class under each ZeRO stage (0-3), remembered by all they read: the
  // class's dense, expert and linear parameters per GPU, its layers and the state shards (fp8 and
  // the memory options are the model's). Shapes of other micro-batch sizes, schedules, chunk
  // counts and items ask for the same: llama3-405b on 16,384 GPUs asked 292,401 times for 738
  // distinct terms.
  const std::array<ZeroTerms, 4>& zero_terms_by_stage(const StageParams& params,
                                                      StateShards shards) const;
  using ZeroTermsKey = std::array<uint64_t, 6>;
  mutable FlatCacheMap<ZeroTermsKey, std::array<ZeroTerms, 4>, WordsHash, kScanAnswersCached>
      zero_terms_memo_;
  // frame_sums of frames_of(l, shape)'s frames, cached alike (from the frames' two parts, the
  // frames themselves not built).
  const std::vector<FrameSums>& sums_of(const Layout& l, const Shape& shape) const;
  // sums_of for each ZeRO stage `zeros` marks (l's own zero ignored), by ZeRO stage: one check
  // when all are cached already (the search asks for every recompute choice of a schedule).
  const std::array<std::vector<FrameSums>, 4>& sums_by_zero(const Layout& l, const Shape& shape,
                                                            const std::array<bool, 4>& zeros) const;
  // shape_of's key: the layout fields a shape reads, packed two or more a word (every count a
  // layout holds is below 2^32: GPU counts, micro-batch sizes and chunk counts are validated far
  // below it). Word 0 holds the fields a work item's shapes differ in (the shard group in its
  // low 32 bits, ep_overlap, the schedule's placement, per-stage recompute) and the small enums,
  // so that the map's comparisons of an item's shapes end at the first word.
  using ShapeKey = std::array<uint64_t, 6>;
  static constexpr uint64_t kShapeKeyShardBits = 0xffffffffULL;  // word 0: the shard group
  static constexpr uint64_t kShapeKeyEpOverlapBit = 1ULL << 32;  // word 0: ep_overlap
  static ShapeKey shape_key(const Layout& l);
  const Shape& shape_of(const Layout& l);
  // Builds l's shape into `shape`, a fresh or a forgotten one whose buffers it reuses.
  void build_shape(const Layout& l, Shape& shape);
  // Whether two shapes' keys differ at most in the shard group and ep_overlap, which change
  // only the memory frames and sync times (shard) and the layer costs (ep_overlap).
  static bool siblings(const ShapeKey& a, const ShapeKey& b);
  // build_shape for a shape whose key is a sibling of `sibling`'s (built): the fields neither
  // changes (the stage split, the micro-batch count, the point-to-point and embedding times, the
  // activations' bytes) taken from it, and the layer costs too where `same_costs` (the same
  // ep_overlap), else its own.
  void build_sibling_shape(const Layout& l, const Shape& sibling, bool same_costs, Shape& shape);
  double mirror_sync_s(const Layout& l, int64_t stage, const StageParams& params) const;
  // The memory of the stages of class `k` (one stage_memory call, with the shape's inputs).
  StageMemory class_memory(const Layout& l, const Shape& shape, const StageClass& k) const;
  double offloaded_optimizer_s(const Layout& l, double shard_params) const;
  double activation_offload_s(const Layout& l, const Shape& shape, const StageClass& k,
                              const LayerPair& c) const;
  const std::array<SyncTimes, 2>& sync_of(const Layout& l, const StageClass& k) const;
  // `gathered_bytes_per_param`: what gathering them moves per parameter (gathered_bytes_per_param).
  // Remembered by what it reads (sync_memo_): shapes of other micro-batch sizes, schedules and
  // chunk counts ask for the same groups, parameters and ZeRO stage.
  SyncTimes sync_times(const Layout& l, const GroupShape& whole, const ShardGroups& sharded,
                       double params, double gathered_bytes_per_param, int zero,
                       int64_t layers) const;
  SyncTimes priced_sync_times(int64_t dp, const GroupShape& whole, const ShardGroups& sharded,
                              double params, double gathered_bytes_per_param, int zero,
                              int64_t layers) const;
  // sync_times' inputs: the three groups' dims (size, stride) and dim counts, the parameters and
  // bytes per gathered parameter (bits), the ZeRO stage, the layers, the data-parallel degree.
  using SyncKey = std::array<uint64_t, 20>;
  static constexpr size_t kSyncTimesCached = 4096;
  mutable FlatCacheMap<SyncKey, SyncTimes, WordsHash, kSyncTimesCached> sync_memo_;
  const std::vector<StageParams>& params_of(const Layout& l);
  const std::vector<StageLayerMix>& mix_of(const Layout& l);
  // A class's timing per micro-batch, without the ZeRO-dependent terms (finish_step).
  StageTiming stage_timing(const Layout& l, const StageClass& c, const LayerPair& costs) const;
  double optimizer_step_s(const Layout& l, const StageClass& c) const;
  // Factor on compute time of a step over `gpus` GPUs: its slowest GPU sets the pace
  // (planner/straggler.h). Remembered for the last GPU count (a search asks for one count
  // millions of times; the cache is per instance, like the others: one model per thread).
  double compute_slowdown(int64_t gpus) const {
    if (gpus != straggler_gpus_) {
      straggler_gpus_ = gpus;
      straggler_factor_ = straggler_slowdown(calibration_.gpu_compute_spread.value, gpus);
    }
    return straggler_factor_;
  }
  double dp_exposed_s(const Layout& l, const StageClass& c, const StageTiming& st,
                      bool with_zero3_gathers) const;
  void fill_pipeline(const Layout& l, const Shape& shape, PipelineTiming& t) const;

  ModelSpec model_;
  ClusterSpec cluster_;
  CalibrationProfile profile_;
  TrainingSpec training_;
  CostOptions options_;
  ResolvedCalibration calibration_;  // the profile's scalars for this GPU and precision
  GemmModel gemm_;
  GemmMemo gemm_memo_{gemm_};  // the layer costs' GEMM times, asked again and again
  // The GEMMs kept in BF16 under FP8 (LayerCostContext::bf16_gemm): built for an FP8 job only.
  std::optional<GemmModel> bf16_gemm_;
  std::optional<GemmMemo> bf16_gemm_memo_;
  AttentionModel attention_;
  CollectiveModel collectives_;
  CollectiveMemo collective_memo_{collectives_};  // the layer costs' collective times, likewise
  LayerCostContext context_;
  mutable int64_t straggler_gpus_ = 0;
  mutable double straggler_factor_ = 1;
  bool selective_saves_ = false;        // attention_core_stores_activations, fixed by the inputs
  LayerFlops dense_flops_, moe_flops_;  // one layer's forward over the global batch
  double head_flops_ = 0;
  std::vector<LayerParams> layer_params_;  // model_layer_params: params_of's input
  // A layout's stage split: what its stage parameters and stage classes depend on.
  using ParamsKey = std::tuple<int64_t, int64_t, int64_t, int64_t, PlacementKind, int64_t>;
  static ParamsKey params_key(const Layout& l);
  // The stage classes of a split (params_of's key): each class's first stage, stage count, layers
  // and parameters (no syncs: build_shape adds them), and the class of each stage.
  struct ClassSplit {
    std::vector<StageClass> classes;
    std::vector<size_t> class_of_stage;
  };
  void split_classes(const Layout& l, bool per_stage, ClassSplit& out);
  // split_classes of a layout without per-stage recompute counts, cached by params_of's key.
  const ClassSplit& classes_of(const Layout& l);
  LastKeyCache<std::map<ParamsKey, ClassSplit>> classes_cache_;
  LastKeyCache<std::map<ParamsKey, std::vector<StageParams>>> params_cache_;
  using ComputeKey =
      std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int64_t>;
  ComputeKey dense_key(const LayerCostKey& k) const;
  const DenseCompute& dense_compute(const LayerCostKey& k);
  // An MoE layer's compute and, found once with it, the dense compute of its key.
  struct MoeCompute {
    LayerCompute moe;
    const DenseCompute* dense = nullptr;  // a node of dense_compute_cache_
  };
  // Node-based maps: a value's address holds while the model lives (MoeCompute::dense).
  LastKeyCache<std::unordered_map<ComputeKey, DenseCompute, WordsHash>> dense_compute_cache_;
  LastKeyCache<std::unordered_map<ComputeKey, MoeCompute, WordsHash>> moe_compute_cache_;
  // An MoE layer's compute that its expert degrees leave unchanged (shared_compute), by the
  // compute key with ep and etp zero: a search asks it for every ep and etp of a shape.
  LastKeyCache<std::unordered_map<ComputeKey, SharedCompute, WordsHash>> moe_shared_cache_;
  using MixKey = std::tuple<int64_t, int64_t, PlacementKind>;
  LastKeyCache<std::map<MixKey, std::vector<StageLayerMix>>> mix_cache_;
  // Bounded by the map itself (FlatCacheMap empties itself when full).
  LastKeyCache<FlatCacheMap<LayerCostsKey, LayerPair, LayerCostsHash, kLayerCostsCached>>
      layer_costs_cache_;
  // cp_terms' key: tp·cp, ep·etp, cp_a2a·cp_ring (two a word), mbs, sp and cp_kind, the CP
  // group's stride.
  using CpTermsKey = std::array<int64_t, 6>;
  struct CpTermsHash {
    size_t operator()(const CpTermsKey& k) const;
  };
  LastKeyCache<FlatCacheMap<CpTermsKey, CpTerms, CpTermsHash, kLayerCostsCached>> cp_terms_cache_;
  std::map<ShapeKey, Shape> shape_cache_;
  // The nodes forget_shapes took out of shape_cache_, reused (with their buffers) by shape_of:
  // the search builds a few shapes per work item, hundreds of thousands in all.
  std::vector<std::map<ShapeKey, Shape>::node_type> spare_shapes_;
  ShapeKey last_key_{};
  const Shape* last_shape_ = nullptr;
  // The shape shape_of built last and its key (build_sibling_shape's source); null after
  // forget_shapes.
  ShapeKey last_built_key_{};
  const Shape* last_built_ = nullptr;
  PipelineTiming timing_;  // evaluate's buffers
};

// The group of ranks of each kind under the layout's rank order.
GroupShape tp_group(const Layout& l);
GroupShape cp_group(const Layout& l);
GroupShape ep_group(const Layout& l);
GroupShape dp_group(const Layout& l);         // dense gradients: dp × cp
GroupShape expert_dp_group(const Layout& l);  // expert gradients: Layout::expert_dp()
// The experts' tensor-parallel group: tp's, or the innermost etp ranks when etp < tp.
GroupShape expert_tp_group(const Layout& l);

}  // namespace meshplan
