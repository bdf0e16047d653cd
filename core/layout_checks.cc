// Whether a layout can run this model on these GPUs with this batch (every rule, every
// violation). The rules are Megatron-LM's where it has one; each is a named predicate
// (core/layout_rules.h) that the layout search calls too.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "core/layout.h"
#include "core/layout_fields.h"
#include "core/layout_rules.h"

namespace meshplan {

bool tp_splits_heads(const Layout& layout, const ModelSpec& model) {
  return model.heads % layout.tp == 0;
}

bool tp_splits_kv_heads(const Layout& layout, const ModelSpec& model) {
  return model.kv_heads % layout.tp == 0 || layout.tp % model.kv_heads == 0;
}

bool tp_splits_ffn(const Layout& layout, const ModelSpec& model) {
  return model.dense_layers() == 0 || model.ffn_hidden <= 0 || model.ffn_hidden % layout.tp == 0;
}

bool tp_splits_expert_ffn(const Layout& layout, const ModelSpec& model) {
  return !model.moe || layout.folds_experts() || model.moe->expert_ffn_hidden % layout.tp == 0;
}

bool ep_splits_experts(const Layout& layout, const ModelSpec& model) {
  return model.moe ? model.moe->experts % layout.ep == 0 : layout.ep == 1;
}

bool ep_fits_dp_cp(const Layout& layout) {
  const int64_t folded = layout.folds_experts() ? layout.tp / layout.expert_tp() : 1;
  return (folded * layout.dp * layout.cp) % layout.ep == 0;
}

bool etp_divides_tp(const Layout& layout) { return layout.tp % layout.expert_tp() == 0; }

bool etp_splits_expert_ffn(const Layout& layout, const ModelSpec& model) {
  return !model.moe || model.moe->expert_ffn_hidden % layout.expert_tp() == 0;
}

bool etp_needs_moe(const Layout& layout, const ModelSpec& model) {
  return !layout.folds_experts() || model.moe.has_value();
}

bool etp_fold_fits(const Layout& layout) {
  return !layout.folds_experts() || (layout.sp && layout.order[3] == Dim::pp && layout.shard == 0);
}

bool shard_divides_dp_cp(const Layout& layout) {
  if (layout.shard == 0) return true;
  const bool cp_inner = layout.stride(Dim::cp) < layout.stride(Dim::dp);
  const int64_t inner = cp_inner ? layout.cp : layout.dp, outer = cp_inner ? layout.dp : layout.cp;
  if (layout.shard <= inner) return inner % layout.shard == 0;
  return layout.shard % inner == 0 && outer % (layout.shard / inner) == 0;
}

bool shard_needs_zero(const Layout& layout) { return layout.shard == 0 || layout.zero >= 1; }

bool shard_holds_expert_groups(const Layout& layout) {
  return layout.shard == 0 || layout.shard % layout.ep == 0;
}

bool chunks_divide_layers(const Layout& layout, const ModelSpec& model) {
  return layout.uneven || model.layers % (layout.pp * layout.vpp) == 0;
}

bool chunks_within_layers(const Layout& layout, const ModelSpec& model) {
  return model.layers + kEmbeddingAndLossChunks >= layout.pp * layout.vpp;
}

bool batch_splits(const Layout& layout, const TrainingSpec& training) {
  return training.global_batch % (layout.dp * layout.mbs) == 0;
}

bool interleaving_fills_pipeline(const Layout& layout, const TrainingSpec& training) {
  const int64_t per_step = layout.dp * layout.mbs;
  const bool interleaved =
      layout.schedule == Schedule::interleaved || layout.schedule == Schedule::zb_interleaved;
  if (!interleaved || per_step <= 0 || training.global_batch % per_step != 0) return true;
  return (training.global_batch / per_step) % layout.pp == 0;
}

bool recompute_modules_need_selective(const Layout& layout) {
  return layout.recompute_modules == kDefaultRecomputeModules ||
         layout.recompute == Recompute::selective;
}

bool recompute_modules_fit_model(const Layout& layout, const ModelSpec& model) {
  const RecomputeModules m = layout.recompute_modules;
  const bool experts = model.moe.has_value();
  return (!has(m, RecomputeModule::mla_up_proj) || model.mla.has_value()) &&
         (!has(m, RecomputeModule::moe_act) || experts) &&
         (!has(m, RecomputeModule::moe) || experts) &&
         (!has(m, RecomputeModule::shared_experts) || (experts && model.moe->shared_experts > 0)) &&
         (!has(m, RecomputeModule::mlp) || model.dense_layers() > 0);
}

bool offload_needs_zero(const Layout& layout) {
  return layout.offload == Offload::none || layout.zero >= 1;
}

bool act_offload_within_stage(const Layout& layout, const ModelSpec& model) {
  const int64_t chunks = layout.pp * layout.vpp;
  return layout.act_offload <= (model.layers + chunks - 1) / chunks * layout.vpp;
}

bool stage_recompute_counts_match_pp(const Layout& layout) {
  return layout.recompute_stage_layers.empty() ||
         static_cast<int64_t>(layout.recompute_stage_layers.size()) == layout.pp;
}

bool stage_recompute_needs_block(const Layout& layout) {
  return layout.recompute_stage_layers.empty() || layout.recompute != Recompute::full;
}

bool schedule_fits_vpp(const Layout& layout) {
  return schedule_takes_vpp(layout.schedule, layout.vpp);
}

bool dual_pipe_fits(const Layout& layout, const TrainingSpec& training) {
  const int64_t per_step = layout.dp * layout.mbs;
  if (per_step <= 0 || training.global_batch % per_step != 0) return true;
  return dual_pipe_runs(layout.schedule, layout.pp, training.global_batch / per_step);
}

bool cp_splits_sequence(const Layout& layout, const TrainingSpec& training) {
  return layout.cp == 1 || training.seq_len % (2 * layout.cp) == 0;
}

bool sp_splits_sequence(const Layout& layout, const TrainingSpec& training) {
  return !layout.sp || layout.tp == 1 || (training.seq_len / layout.cp) % layout.tp == 0;
}

bool cp_kind_needs_cp(const Layout& layout) {
  return layout.cp_kind == CpKind::ring || layout.cp > 1;
}

bool cp_a2a_splits_cp(const Layout& layout) {
  if (layout.cp_kind != CpKind::hybrid) return layout.cp_a2a == 0;
  return layout.cp_a2a > 1 && layout.cp_a2a < layout.cp && layout.cp % layout.cp_a2a == 0;
}

bool cp_a2a_splits_heads(const Layout& layout, const ModelSpec& model) {
  const int64_t a2a = layout.cp_a2a_size();
  if (a2a <= 1) return true;
  const int64_t heads = model.heads / layout.tp;
  const int64_t kv_heads = std::max<int64_t>(1, model.kv_heads / layout.tp);
  return heads % a2a == 0 && kv_heads % a2a == 0;
}

bool dispatch_needs_ep(const Layout& layout, const ModelSpec& model) {
  return layout.dispatch == Dispatch::alltoall || (model.moe && layout.ep > 1);
}

bool tp_overlap_within_domain(const Layout& layout, int64_t domain_gpus) {
  if (!layout.tp_overlap || layout.tp <= 1) return true;
  const int64_t extent = layout.tp * layout.stride(Dim::tp);  // ranks a group's block spans
  return extent <= domain_gpus && domain_gpus % extent == 0;
}

bool ep_overlap_needs_ep(const Layout& layout, const ModelSpec& model) {
  return !layout.ep_overlap || (model.moe && layout.ep > 1);
}

namespace {

// The product of `factors`, or nothing when it exceeds int64_t. REQUIRES: every factor ≥ 0.
std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product)) return std::nullopt;
  return product;
}

class Checker {
 public:
  explicit Checker(std::string origin) : origin_(std::move(origin)) {}
  void require(bool ok, const std::string& field, int64_t value, const std::string& rule) {
    require(ok, field, std::to_string(value), rule);
  }
  void require(bool ok, const std::string& field, const std::string& value,
               const std::string& rule) {
    if (!ok) errors.push_back(Diagnostic{{origin_, 0, 0, ""}, field, value, rule});
  }
  std::vector<Diagnostic> errors;

 private:
  std::string origin_;
};

// The degrees multiply to the GPU count; resolves dp when it was left to fill.
void check_gpu_count(Checker& checker, Layout& layout, int64_t gpus) {
  const int64_t mp = layout.tp * layout.pp * layout.cp;
  if (layout.dp == 0) {
    checker.require(
        gpus % mp == 0, "tp", layout.tp,
        fmt::format("tp·pp·cp = {} must divide the GPU count ({}) so dp can fill it", mp, gpus));
    layout.dp = std::max<int64_t>(1, gpus / mp);  // keep checking the other rules
  } else {
    const std::optional<int64_t> product =
        checked_product({layout.dp, layout.tp, layout.pp, layout.cp});
    checker.require(product == gpus, "dp", layout.dp,
                    fmt::format("dp·tp·pp·cp = {}·{}·{}·{} = {} must equal the GPU count ({})",
                                layout.dp, layout.tp, layout.pp, layout.cp,
                                product ? std::to_string(*product) : "more than 2^63", gpus));
  }
}

// Tensor and expert parallelism split the model's heads, widths and experts evenly.
void check_model_split(Checker& checker, const Layout& layout, const ModelSpec& model) {
  checker.require(tp_splits_heads(layout, model), "tp", layout.tp,
                  fmt::format("must divide heads ({})", model.heads));
  checker.require(tp_splits_kv_heads(layout, model), "tp", layout.tp,
                  fmt::format("must divide kv_heads ({}) or be a multiple of it (KV heads are "
                              "then replicated tp/kv_heads times)",
                              model.kv_heads));
  checker.require(tp_splits_ffn(layout, model), "tp", layout.tp,
                  fmt::format("must divide ffn_hidden ({})", model.ffn_hidden));
  if (model.moe) {
    checker.require(tp_splits_expert_ffn(layout, model), "tp", layout.tp,
                    fmt::format("must divide moe.expert_ffn_hidden ({}) (experts are split by tp)",
                                model.moe->expert_ffn_hidden));
    checker.require(ep_splits_experts(layout, model), "ep", layout.ep,
                    fmt::format("must divide moe.experts ({})", model.moe->experts));
    checker.require(etp_divides_tp(layout), "etp", layout.expert_tp(),
                    fmt::format("must divide tp ({}) (expert tensor-parallel groups are "
                                "sub-groups of the tensor-parallel ranks)",
                                layout.tp));
    if (etp_divides_tp(layout)) {
      checker.require(
          etp_splits_expert_ffn(layout, model), "etp", layout.expert_tp(),
          fmt::format("must divide moe.expert_ffn_hidden ({})", model.moe->expert_ffn_hidden));
      checker.require(etp_fold_fits(layout), "etp", layout.expert_tp(),
                      "below tp needs sp=true, the pipeline outermost in the rank order "
                      "(order=…-pp) and shard=0 (the experts' etp × ep × expert-dp fold of "
                      "each stage's ranks)");
      checker.require(
          ep_fits_dp_cp(layout), "ep", layout.ep,
          layout.folds_experts()
              ? fmt::format("must divide tp/etp·dp·cp ({}) (expert groups are carved from each "
                            "stage's ranks outside the expert tensor-parallel groups)",
                            layout.tp / layout.expert_tp() * layout.dp * layout.cp)
              : fmt::format("must divide dp·cp ({}) (expert groups are carved from the data- "
                            "and context-parallel ranks)",
                            layout.dp * layout.cp));
    }
  } else {
    checker.require(
        etp_needs_moe(layout, model), "etp", layout.expert_tp(),
        fmt::format("must equal tp ({}) for a dense model (it has no experts)", layout.tp));
    checker.require(ep_splits_experts(layout, model), "ep", layout.ep,
                    "must be 1 for a dense model (it has no experts)");
  }
  checker.require(ep_overlap_needs_ep(layout, model), "ep_overlap", "true",
                  "needs an MoE model with ep > 1 (no expert all-to-all to overlap)");
  checker.require(dispatch_needs_ep(layout, model), "dispatch", to_string(layout.dispatch),
                  "needs an MoE model with ep > 1 (no tokens to dispatch across ranks)");
}

// Hybrid sharding's group fits the data-parallel ranks.
void check_sharding(Checker& checker, const Layout& layout) {
  checker.require(shard_divides_dp_cp(layout), "shard", layout.shard,
                  fmt::format("must divide dp·cp = {}·{} along the rank order (a divisor of the "
                              "inner of the two, or a multiple of it)",
                              layout.dp, layout.cp));
  checker.require(shard_needs_zero(layout), "shard", layout.shard,
                  "needs zero ≥ 1 (with zero=0 nothing is sharded)");
  checker.require(shard_holds_expert_groups(layout), "shard", layout.shard,
                  fmt::format("must be a multiple of ep ({}) (each shard group holds whole "
                              "expert-parallel groups)",
                              layout.ep));
}

// Layers split over pp·vpp chunks, and the schedule's own rules.
void check_pipeline(Checker& checker, const Layout& layout, const ModelSpec& model) {
  const int64_t chunks = layout.pp * layout.vpp;
  checker.require(chunks_divide_layers(layout, model), "pp", layout.pp,
                  fmt::format("pp·vpp = {} must divide layers ({}); add uneven=true to let the "
                              "first and last stages hold fewer layers",
                              chunks, model.layers));
  checker.require(
      chunks_within_layers(layout, model), "pp", layout.pp,
      fmt::format("pp·vpp = {} must not exceed layers + {} ({}: the embedding and the "
                  "loss may each fill a chunk of their own)",
                  chunks, kEmbeddingAndLossChunks, model.layers + kEmbeddingAndLossChunks));
  if (layout.vpp > 1) {
    checker.require(schedule_fits_vpp(layout) || layout.schedule == Schedule::dualpipev ||
                        layout.schedule == Schedule::zb_v,
                    "vpp", layout.vpp,
                    "vpp > 1 needs schedule=interleaved or zb-interleaved (or dualpipev or zb-v "
                    "with vpp=2)");
    checker.require(layout.pp > 1, "vpp", layout.vpp, "vpp > 1 needs pp > 1");
  }
  if (layout.schedule == Schedule::interleaved || layout.schedule == Schedule::zb_interleaved) {
    checker.require(layout.vpp > 1, "vpp", layout.vpp,
                    fmt::format("schedule={} needs vpp ≥ 2", to_string(layout.schedule)));
  }
  if (layout.schedule == Schedule::dualpipev || layout.schedule == Schedule::zb_v) {
    checker.require(layout.vpp == 2, "vpp", layout.vpp,
                    fmt::format("schedule={} needs vpp=2 (each rank holds two chunks in a V)",
                                to_string(layout.schedule)));
  }
  const int64_t stage_layers =
      (model.layers + chunks - 1) / chunks * layout.vpp;  // the largest stage
  checker.require(offload_needs_zero(layout), "offload", to_string(layout.offload),
                  "needs zero ≥ 1 (the optimizer states offloaded are the ZeRO-sharded ones)");
  checker.require(act_offload_within_stage(layout, model), "act_offload", layout.act_offload,
                  fmt::format("must not exceed the layers per stage ({})", stage_layers));
  checker.require(recompute_modules_need_selective(layout), "recompute_modules",
                  to_string(layout.recompute_modules), "needs recompute=selective");
  checker.require(recompute_modules_fit_model(layout, model), "recompute_modules",
                  to_string(layout.recompute_modules),
                  "names a module the model does not have (mla_up_proj needs MLA; moe_act and moe "
                  "routed experts; shared_experts shared experts; mlp a dense layer)");
  const std::string counts = find_layout_field("recompute_layers")->print(layout);
  checker.require(layout.recompute_layers <= stage_layers, "recompute_layers", counts,
                  fmt::format("must not exceed the layers per stage ({})", stage_layers));
  checker.require(stage_recompute_counts_match_pp(layout), "recompute_layers", counts,
                  fmt::format("gives {} counts: a per-stage list needs one per pipeline stage "
                              "(pp={})",
                              layout.recompute_stage_layers.size(), layout.pp));
  checker.require(stage_recompute_needs_block(layout), "recompute_layers", counts,
                  "a per-stage list needs recompute none or selective (the block method); "
                  "recompute=full recomputes every layer");
}

// The batch splits into micro-batches, and the sequence into CP and SP shards.
void check_batch_and_sequence(Checker& checker, const Layout& layout,
                              const TrainingSpec& training) {
  const int64_t per_step = layout.dp * layout.mbs;
  checker.require(batch_splits(layout, training), "mbs", layout.mbs,
                  fmt::format("dp·mbs = {}·{} = {} must divide the global batch ({} sequences)",
                              layout.dp, layout.mbs, per_step, training.global_batch));
  if (!interleaving_fills_pipeline(layout, training)) {
    checker.require(false, "pp", layout.pp,
                    fmt::format("the {} schedule needs the micro-batch count ({}) to be "
                                "a multiple of pp ({})",
                                to_string(layout.schedule), training.global_batch / per_step,
                                layout.schedule == Schedule::interleaved
                                    ? "Megatron-LM"
                                    : "one round of pp micro-batches per chunk, as "
                                      "torch.distributed.pipelining runs it"));
  }
  if (!dual_pipe_fits(layout, training)) {
    checker.require(false, "schedule", to_string(layout.schedule),
                    fmt::format("needs at least 2·pp = {} micro-batches (it has {}){} (the "
                                "DualPipe repository's dualpipe.py and dualpipev.py)",
                                2 * layout.pp, training.global_batch / per_step,
                                layout.schedule == Schedule::dualpipe
                                    ? ", an even count and an even pp, half entering from each end"
                                    : ""));
  }
  checker.require(cp_splits_sequence(layout, training), "cp", layout.cp,
                  fmt::format("2·cp must divide seq_len ({}) (load-balanced causal context "
                              "parallelism splits each sequence into 2·cp chunks)",
                              training.seq_len));
  checker.require(sp_splits_sequence(layout, training), "tp", layout.tp,
                  fmt::format("must divide the per-rank sequence ({}) under sequence parallelism",
                              training.seq_len / layout.cp));
}

// The context-parallel variant's own rules.
void check_cp_kind(Checker& checker, const Layout& layout, const ModelSpec& model) {
  checker.require(cp_kind_needs_cp(layout), "cp_kind", to_string(layout.cp_kind),
                  "needs cp > 1 (there is no context parallelism to exchange)");
  checker.require(
      cp_a2a_splits_cp(layout), "cp_a2a", layout.cp_a2a,
      layout.cp_kind == CpKind::hybrid
          ? fmt::format("cp_kind=hybrid needs 1 < cp_a2a < cp ({}) with cp_a2a dividing cp (the "
                        "all-to-all groups inside the ring)",
                        layout.cp)
          : fmt::format("is only meaningful with cp_kind=hybrid (cp_kind is {}); leave it out",
                        to_string(layout.cp_kind)));
  if (cp_a2a_splits_cp(layout)) {
    checker.require(cp_a2a_splits_heads(layout, model), "cp_kind", to_string(layout.cp_kind),
                    fmt::format("its all-to-all over {} CP ranks must split each TP rank's {} "
                                "query and {} KV heads evenly",
                                layout.cp_a2a_size(), model.heads / layout.tp,
                                std::max<int64_t>(1, model.kv_heads / layout.tp)));
  }
}

}  // namespace

std::vector<Diagnostic> check_layout(Layout& layout, const ModelSpec& model, int64_t gpus,
                                     const TrainingSpec& training, const std::string& origin) {
  Checker checker(origin);
  if (layout.etp == layout.tp) layout.etp = 0;  // one spelling of the default
  check_gpu_count(checker, layout, gpus);
  check_model_split(checker, layout, model);
  check_sharding(checker, layout);
  check_pipeline(checker, layout, model);
  check_batch_and_sequence(checker, layout, training);
  check_cp_kind(checker, layout, model);
  return checker.errors;
}

std::vector<Diagnostic> check_layout_on_cluster(const Layout& layout, const ClusterSpec& cluster,
                                                const std::string& origin) {
  Checker checker(origin);
  const NetworkLevel& domain = cluster.network.front();
  checker.require(
      tp_overlap_within_domain(layout, domain.span), "tp_overlap", "true",
      fmt::format("needs each tensor-parallel group within one NVLink domain (the cluster's "
                  "innermost network level, '{}': {} GPUs); a group of {} ranks at stride {} "
                  "spans {} (Transformer Engine's userbuffers reach their peers by CUDA IPC or a "
                  "multi-node NVLink fabric only); drop tp_overlap or keep tp·stride within {}",
                  domain.name, domain.span, layout.tp, layout.stride(Dim::tp),
                  layout.tp * layout.stride(Dim::tp), domain.span));
  return checker.errors;
}

}  // namespace meshplan
