// One way to lay a training job out on the GPUs (DESIGN.md §2, "Layout").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/pipeline_placement.h"
#include "core/recompute_modules.h"
#include "core/result.h"
#include "core/schedule.h"
#include "core/stage_counts.h"

namespace meshplan {

enum class Recompute { none, selective, full };
// How context parallelism exchanges attention's inputs (Megatron-Core's cp_comm_type,
// TransformerEngine's attention/dot_product_attention/context_parallel.py):
//   ring: K/V blocks passed around a ring, overlapped with attention (p2p);
//   allgather: K and V all-gathered before attention, exposed (Llama 3's CP);
//   a2a: DeepSpeed-Ulysses all-to-all from sequence to head split and back;
//   hybrid: a2a inside groups of cp_a2a ranks (NVLink), a ring across them (a2a+p2p).
enum class CpKind { ring, allgather, a2a, hybrid };
// How MoE tokens reach their experts (Megatron-Core --moe-token-dispatcher-type):
//   alltoall: each token's top_k copies by all-to-all over the EP group, and back;
//   allgather: every rank's tokens all-gathered over the EP group, outputs reduce-scattered;
//   deepep: DeepEP (Megatron flex dispatcher): one copy per destination node over the network,
//     forwarded over NVLink to the experts there; with group-limited routing
//     (MoeSpec::group_limit) a token reaches fewer nodes.
enum class Dispatch { alltoall, allgather, deepep };
// Where the optimizer states (fp32 master weights, Adam moments) live: on the GPU, in host
// memory with the step on the CPU (ZeRO-Offload, Megatron-Core --optimizer-cpu-offload), or on
// the node's NVMe, streamed through host memory for a CPU step (ZeRO-Infinity).
enum class Offload { none, cpu, nvme };
// The four factors of the GPU count; `order` lists them innermost first.
enum class Dim { tp, cp, dp, pp };

struct Layout {
  int64_t dp = 0;  // 0: fill the GPUs left after tp·pp·cp (resolved by check_layout)
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t cp = 1;
  int64_t ep = 1;  // expert parallel; EP groups are carved out of the dp·cp ranks
  // Expert tensor parallel (Megatron-Core --expert-tensor-parallel-size): experts split over
  // etp ranks instead of tp. 0 (the default) means tp, the layout of dense layers; etp < tp
  // re-folds each pipeline stage's tp·cp·dp ranks as etp (innermost) × ep × expert-dp for the
  // experts, so EP groups may take ranks of the tensor-parallel group.
  int64_t etp = 0;
  int zero = 1;     // 0: none, 1: optimizer states sharded (Megatron distributed optimizer),
                    // 2: + gradients, 3: + parameters (FSDP / ZeRO-3)
  int64_t mbs = 1;  // micro-batch size, sequences
  int64_t vpp = 1;  // virtual pipeline stages (model chunks) per rank
  Recompute recompute = Recompute::none;
  // What recompute=selective rebuilds (Megatron-Core --recompute-modules; default core_attn).
  RecomputeModules recompute_modules = kDefaultRecomputeModules;
  int64_t recompute_layers = 0;  // layers per stage fully recomputed; the rest follow recompute
  // Per pipeline stage (issue 12): the layers each stage recomputes in full beside `recompute`
  // (the block method), stage 0 first; empty when every stage takes recompute_layers. When set
  // it has pp entries, not all equal, and recompute_layers is their largest. The first stages
  // hold the most micro-batches in flight, so they need the most (NeMo 1's
  // activations_checkpoint_layers_per_pipeline lowers the count by a step per stage).
  StageCounts recompute_stage_layers{};
  bool sp = true;  // sequence parallel (only meaningful with tp > 1)
  Schedule schedule = Schedule::one_f_one_b;
  bool tp_overlap = false;  // TP communication overlapped with GEMMs (userbuffers / async TP)
  bool uneven = false;      // allow layers not divisible by pp·vpp (first/last chunks get fewer)
  // ZeRO shard group (hybrid sharding, HSDP): 0 shards over all dp·cp ranks; N shards over
  // groups of the innermost N of them, each group holding a full replica of the sharded states
  // (PyTorch FSDP HYBRID_SHARD, torchtitan data_parallel_shard_degree, Megatron-Core
  // --num-distributed-optimizer-instances dp·cp/N).
  int64_t shard = 0;
  CpKind cp_kind = CpKind::ring;  // meaningful with cp > 1
  int64_t cp_a2a = 0;             // hybrid CP: ranks of each all-to-all group (0 otherwise)
  // MoE dispatch and combine all-to-alls overlapped with another micro-batch's compute
  // (Megatron-Core --overlap-moe-expert-parallel-comm; DeepSeek-V3's DualPipe overlap).
  bool ep_overlap = false;
  Dispatch dispatch = Dispatch::alltoall;  // meaningful with an MoE model and ep > 1
  Offload offload = Offload::none;
  // Layers per stage whose stored activations are copied to host memory in the forward and back
  // in the backward (Megatron-Core / Transformer Engine cpu_offloading_num_layers).
  int64_t act_offload = 0;
  std::array<Dim, 4> order = {Dim::tp, Dim::cp, Dim::dp, Dim::pp};  // innermost first

  int64_t model_parallel() const { return tp * pp * cp; }
  // Layers pipeline stage `stage` recomputes in full beside `recompute`: its entry of
  // recompute_stage_layers, else recompute_layers.
  int64_t recompute_layers_on(int64_t stage) const {
    const auto s = static_cast<size_t>(stage);
    return s < recompute_stage_layers.size() ? recompute_stage_layers[s] : recompute_layers;
  }
  // The experts' tensor-parallel degree (etp, or tp when unset).
  int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  // Whether the experts are laid out apart from the dense layers (etp < tp).
  bool folds_experts() const { return expert_tp() != tp; }
  // Data-parallel replicas of each expert: the stage's tp·cp·dp ranks over etp·ep.
  int64_t expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
  // Whether anything leaves the GPU: optimizer states (offload) or activations (act_offload).
  bool offloads() const { return offload != Offload::none || act_offload > 0; }
  // Ranks each ZeRO-sharded state is divided over: shard, or all dp·cp ranks.
  int64_t shard_size() const { return shard > 0 ? shard : dp * cp; }
  int64_t gpus() const { return dp * tp * pp * cp; }
  PipelineShape pipeline() const { return {pp, vpp, schedule}; }
  // CP ranks that exchange by all-to-all (cp for a2a, cp_a2a for hybrid, else 1) and those in
  // a ring (cp for ring, cp/cp_a2a for hybrid, else 1).
  int64_t cp_a2a_size() const {
    return cp_kind == CpKind::a2a ? cp : cp_kind == CpKind::hybrid ? cp_a2a : 1;
  }
  int64_t cp_ring_size() const {
    return cp_kind == CpKind::ring ? cp : cp_kind == CpKind::hybrid ? cp / cp_a2a : 1;
  }
  // Ranks between consecutive members of a `dim` group (product of the degrees inside it).
  int64_t stride(Dim dim) const;
  // stride() of every dim, indexed by Dim, in one pass over the order.
  std::array<int64_t, 4> strides() const;
  int64_t degree(Dim dim) const;
};

const char* to_string(Recompute recompute);
const char* to_string(Offload offload);
const char* to_string(Dispatch dispatch);
const char* to_string(Dim dim);
const char* to_string(CpKind kind);
// "tp=8,pp=4,dp=2,cp=1,ep=1,zero=1,mbs=1,vpp=1,recompute=none,..." (every field, parseable).
std::string to_string(const Layout& layout);
// Compact label for tables: "tp8 pp4 dp2 z1 mbs1 sel 1f1b" (defaults omitted).
std::string short_label(const Layout& layout);
// Labels for layouts shown as rows of one table: short_label, and where two or more rows
// would print the same, the "key=value" fields (to_string's) that differ inside that group,
// e.g. "tp8 pp4 dp2 z1 mbs1 1f1b order=tp-cp-pp-dp" (short_label omits rank order, overlap…).
std::vector<std::string> distinguishing_labels(const std::vector<Layout>& layouts);
// The fields (to_string's keys, in its order) on which `layouts` differ, each as
// "key=a/b/…" ("/", not "|", so Markdown table cells stay whole) with the values in order of first
// appearance; empty when they are all equal.
std::vector<std::string> differing_fields(const std::vector<Layout>& layouts);

// Parses "--layout tp=8,pp=4,..." (the keys of kLayoutFields in core/layout_fields.h: dp tp pp
// cp ep zero mbs vpp recompute recompute_layers sp schedule order tp_overlap uneven). Unset keys
// keep their defaults; sp defaults to tp > 1 and schedule to interleaved when vpp > 1. Errors
// carry the column.
Result<Layout> parse_layout(const std::string& text, const std::string& origin = "--layout");

// Gives each position-less diagnostic of `errors` whose field is a key of the layout `text`
// (as parse_layout read it) the column of that key, so check_layout's errors point into the
// string the user wrote. Fields the text does not name (dp left to fill) stay without one.
void locate_in_layout(std::vector<Diagnostic>& errors, const std::string& text);

// Checks `layout` against the model, cluster and batch (the predicates of core/layout_rules.h);
// resolves dp when 0. Returns every violation.
std::vector<Diagnostic> check_layout(Layout& layout, const ModelSpec& model, int64_t gpus,
                                     const TrainingSpec& training,
                                     const std::string& origin = "--layout");
// Checks a checked `layout` against the cluster's network: TP overlap within one NVLink domain
// (tp_overlap_within_domain). Returns every violation.
std::vector<Diagnostic> check_layout_on_cluster(const Layout& layout, const ClusterSpec& cluster,
                                                const std::string& origin = "--layout");

}  // namespace meshplan
