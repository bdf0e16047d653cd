// Megatron-core launchers: Megatron-LM arguments and NeMo (Megatron GPT config) YAML keys.
// Both run Megatron-core's schedules (1F1B, interleaved 1F1B) and rank order (tp-cp-ep-dp-pp),
// and its recompute options (selective, or full with the uniform/block methods). Megatron-LM
// arguments are those of d98e8a64ddf3 (tests/data/launchers/megatron-lm-d98e8a64ddf3-args.txt).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "core/pipeline_placement.h"
#include "launchers/launcher_args.h"
#include "launchers/launcher_export.h"

namespace meshplan {
namespace {

// Megatron-core's per-layer MoE pattern (--moe-layer-freq as a Python list expression, 1 = MoE;
// megatron/training/arguments.py moe_freq_type evaluates it): the leading dense layers, then
// every layer_step-th layer MoE, then any dense layers left after the last MoE one.
// DeepSeek-V3: ([0]*3+[1]*58); Llama 4 Maverick: ([0,1]*24).
std::string moe_layer_pattern(const ModelSpec& model) {
  const MoeSpec& e = *model.moe;
  std::vector<std::string> parts;
  if (e.first_dense_layers > 0) parts.push_back(fmt::format("[0]*{}", e.first_dense_layers));
  std::vector<int> group(static_cast<size_t>(e.layer_step), 0);  // one MoE layer, dense before it
  group.back() = 1;
  parts.push_back(fmt::format("[{}]*{}", fmt::join(group, ","), model.moe_layers()));
  const int64_t rest = model.layers - e.first_dense_layers - e.layer_step * model.moe_layers();
  if (rest > 0) parts.push_back(fmt::format("[0]*{}", rest));
  return fmt::format("({})", fmt::join(parts, "+"));
}

constexpr std::array<Dim, 4> kDefaultOrder = {Dim::tp, Dim::cp, Dim::dp, Dim::pp};
// Megatron-LM's --use-tp-pp-dp-mapping (initialize.py: order tp-cp-ep-pp-dp).
constexpr std::array<Dim, 4> kTpPpDpOrder = {Dim::tp, Dim::cp, Dim::pp, Dim::dp};

// Megatron-Core's module names of `modules`, joined by `separator` (enum order).
std::string recompute_modules_words(RecomputeModules modules, const char* separator) {
  std::string out;
  for (size_t i = 0; i < kRecomputeModules; ++i) {
    if (!has(modules, static_cast<RecomputeModule>(i))) continue;
    if (!out.empty()) out += separator;
    out += recompute_module_names()[i];
  }
  return out;
}

// What Megatron-core cannot run, whichever front end launches it. `pp_dp_order`: the front end
// can also order ranks tp-cp-pp-dp.
void megatron_core_rules(Refusals& out, const Layout& layout, bool pp_dp_order, bool megatron_lm) {
  if (layout.pp > 1 && layout.schedule != Schedule::one_f_one_b &&
      layout.schedule != Schedule::interleaved)
    out.field("schedule", "Megatron-core pipelines run 1F1B or interleaved 1F1B only");
  if (layout.order != kDefaultOrder && !(pp_dp_order && layout.order == kTpPpDpOrder))
    out.field("order", pp_dp_order ? "Megatron-LM orders ranks tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp "
                                     "with --use-tp-pp-dp-mapping"
                                   : "Megatron-core orders ranks tp-cp-ep-dp-pp");
  // --use-tp-pp-dp-mapping initializes the groups in the order 'tp-pp-dp' (Megatron-LM
  // training/initialize.py), which has no cp or ep: ModelParallelConfig.use_tp_pp_dp_mapping
  // says "make sure EP and CP aren't used with this option enabled". Megatron-Bridge asserts it
  // is not supported with Megatron-FSDP (ZeRO-2/3 here).
  else if (layout.order == kTpPpDpOrder && (layout.cp > 1 || layout.ep > 1 || layout.zero >= 2))
    out.field("order",
              "--use-tp-pp-dp-mapping orders ranks tp-pp-dp, without context or expert "
              "parallelism, and Megatron-FSDP (ZeRO-2/3) does not run with it; use "
              "order=tp-cp-dp-pp");
  if (layout.recompute == Recompute::selective && layout.recompute_layers > 0)
    out.field("recompute_layers",
              "selective and full (block) recompute are exclusive (--recompute-granularity takes "
              "one)");
  // transformer_config.py: overlap_moe_expert_parallel_comm asserts no full recompute, no
  // recompute method or layer count, and vpp when pp > 1.
  if (layout.ep_overlap && (layout.recompute == Recompute::full || layout.recompute_layers > 0))
    out.field("ep_overlap",
              "EP overlap (--overlap-moe-expert-parallel-comm) excludes full and block "
              "recomputation; use recompute=none or selective");
  if (layout.ep_overlap && layout.pp > 1 && layout.vpp == 1)
    out.field("ep_overlap", "EP overlap with pp > 1 needs virtual pipeline stages (vpp ≥ 2)");
  // --optimizer-cpu-offload: host memory only (HybridDeviceOptimizer); NeMo's YAML has no key.
  if (layout.offload == Offload::nvme || (layout.offload == Offload::cpu && !megatron_lm))
    out.field("offload", megatron_lm ? "Megatron-Core offloads optimizer states to host memory "
                                       "only (--optimizer-cpu-offload); use offload=cpu"
                                     : "its configuration has no optimizer offload key");
  // model_parallel_config.py / transformer_config.py: cpu_offloading asserts pp = 1 and no
  // recompute.
  if (layout.act_offload > 0 &&
      (layout.pp > 1 || layout.recompute != Recompute::none || layout.recompute_layers > 0))
    out.field("act_offload",
              "CPU activation offloading (cpu_offloading_num_layers) needs pp = 1 and no "
              "recompute");
  if (layout.recompute_layers > 0 && layout.recompute == Recompute::none &&
      layout.recompute_layers % layout.vpp != 0)
    out.field("recompute_layers", [&] {
      return fmt::format(
          "block recompute counts layers per virtual stage; {} is not a multiple of vpp={}",
          layout.recompute_layers, layout.vpp);
    });
}

// Megatron-Core's cp_comm_type for a CP variant (transformer_config.py: "p2p", "all_gather",
// "a2a", "a2a+p2p"), and the hierarchical sizes a2a+p2p needs (a2a group, then p2p group:
// model_parallel_config.py hierarchical_context_parallel_sizes; arguments.py asserts it is set
// for a2a+p2p and that the sizes multiply to cp).
const char* megatron_cp_comm_type(CpKind kind) {
  switch (kind) {
    case CpKind::ring:
      return "p2p";
    case CpKind::allgather:
      return "all_gather";
    case CpKind::a2a:
      return "a2a";
    case CpKind::hybrid:
      return "a2a+p2p";
  }
  return "p2p";
}

std::string hierarchical_cp_sizes(const Layout& layout, const char* separator) {
  return fmt::format("{}{}{}", layout.cp_a2a, separator, layout.cp / layout.cp_a2a);
}

// Megatron's uneven pipeline (--decoder-first/last-pipeline-num-layers) leaves the middle
// pp − 2 stages equal, and with vpp splits each stage's layers evenly over its vpp chunks:
// TransformerConfig raises unless (layers − first − last) % (pp − 2) == 0 and first, last and
// the middle stages' layers are multiples of vpp (Megatron-LM d98e8a64ddf3,
// megatron/core/transformer/transformer_config.py, "Uneven PP"). Other splits take the flexible
// --pipeline-model-parallel-layout, which names every chunk's layers
// (megatron/core/transformer/pipeline_parallel_layer_layout.py: chunk i on pipeline rank
// i mod pp, the embedding "E" in the first chunk, the loss "L" in the last).
struct FirstLastSplit {
  int64_t first = 0, last = 0;  // layers on the first and last stage (all their chunks)
};

// Layers of each chunk (pipeline order, chunk c on rank c % pp) when stage r holds stages[r].
std::vector<int64_t> megatron_chunks(const std::vector<int64_t>& stages, int64_t vpp) {
  std::vector<int64_t> out;
  for (int64_t v = 0; v < vpp; ++v)
    for (int64_t per_stage : stages) out.push_back(per_stage / vpp);
  return out;
}

// The first/last-stage flags when they give meshplan's split (chunks, core/layout.h
// chunk_layers) exactly; nullopt when only the flexible layout can. TransformerConfig refuses
// a first or last stage of no layer ("num_layers_in_first_pipeline_stage must be larger than 0").
std::optional<FirstLastSplit> first_last_split(const std::vector<int64_t>& chunks, int64_t pp,
                                               int64_t vpp) {
  std::vector<int64_t> stages(static_cast<size_t>(pp), 0);
  for (size_t c = 0; c < chunks.size(); ++c) stages[c % static_cast<size_t>(pp)] += chunks[c];
  if (stages.front() <= 0 || stages.back() <= 0) return std::nullopt;
  const std::vector<int64_t> middle(stages.begin() + 1, stages.end() - 1);
  if (std::adjacent_find(middle.begin(), middle.end(), std::not_equal_to<>()) != middle.end() ||
      megatron_chunks(stages, vpp) != chunks)
    return std::nullopt;
  return FirstLastSplit{stages.front(), stages.back()};
}

// Megatron-LM's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split
// (TransformerConfig at d98e8a64: each counts as one layer of an even split over pp·vpp chunks,
// taken from the first and the last chunk; transformer_block.py get_num_layers_to_build) give
// meshplan's uneven split (chunk_layers: ceil-sized chunks, the last one short, then the first)
// whenever it is short by 1 (the loss counted) or 2 (both): the layers plus the deficit fill the
// chunks evenly by its definition. The chunks that hold no layer (pp·vpp of layers + 1 or + 2)
// are split so.
struct AccountSplit {
  bool embedding = false, loss = false;
};
std::optional<AccountSplit> account_split(const ModelSpec& model, const Layout& layout) {
  const int64_t deficit = chunk_deficit(model.layers, layout.pp * layout.vpp);
  if (deficit < 1 || deficit > 2) return std::nullopt;
  return AccountSplit{deficit == 2, true};
}

// "t*n" (or "t" for one layer, nothing for none), with "E" before the first chunk and the
// multi-token-prediction layers ("m" each) and "L" after the last.
std::string chunk_text(const std::vector<int64_t>& chunks, size_t c, int64_t mtp_layers) {
  std::string out = c == 0 ? "E" : "";
  if (chunks[c] > 0) out += chunks[c] == 1 ? "t" : fmt::format("t*{}", chunks[c]);
  if (c + 1 == chunks.size()) out += std::string(static_cast<size_t>(mtp_layers), 'm') + "L";
  return out;
}

// --pipeline-model-parallel-layout for `chunks`, runs of equal chunks written "(t*n|)*k"
// (the string's own repetition syntax): 7,8x14,7 is "Et*7|(t*8|)*14t*7L"; with one
// multi-token-prediction layer "Et*7|(t*8|)*14t*7mL" (Megatron-Core places "m" in the layout,
// docs/user-guide/features/multi_token_prediction.md: "E|t*3|(t|)*5mL" keeps it on the last
// stage, where meshplan prices it).
std::string megatron_layout_string(const std::vector<int64_t>& chunks, int64_t mtp_layers) {
  std::string out;
  for (size_t c = 0; c < chunks.size();) {
    const std::string text = chunk_text(chunks, c, mtp_layers);
    size_t run = 1;
    while (c + run + 1 < chunks.size() && chunk_text(chunks, c + run, mtp_layers) == text) ++run;
    const bool last = c + run == chunks.size();
    out += run > 1 ? fmt::format("({}|)*{}", text, run) : text + (last ? "" : "|");
    c += run;
  }
  return out;
}

struct RecomputeArgs {
  std::string granularity, method;  // empty: none
  int64_t layers = 0;               // 0: not set
};

RecomputeArgs recompute_args(const Layout& layout) {
  if (layout.recompute == Recompute::full)
    return {"full", "uniform", std::max<int64_t>(1, layout.recompute_layers)};
  if (layout.recompute == Recompute::selective) return {"selective", "", 0};
  if (layout.recompute_layers > 0) return {"full", "block", layout.recompute_layers / layout.vpp};
  return {};
}

void megatron_shape_args(const ModelSpec& model, const TrainingSpec& training, LauncherArgs& args) {
  args.arg("--num-layers", model.layers);
  args.arg("--hidden-size", model.hidden);
  args.arg("--ffn-hidden-size", model.ffn_hidden);
  args.arg("--num-attention-heads", model.heads);
  args.arg("--kv-channels", model.head_dim);
  if (model.kv_heads != model.heads) {
    args.flag("--group-query-attention");
    args.arg("--num-query-groups", model.kv_heads);
  }
  args.arg("--seq-length", training.seq_len);
  args.arg("--max-position-embeddings", std::max(training.seq_len, model.max_positions));
  args.arg("--position-embedding-type",
           model.position_embedding == PositionEmbedding::learned ? "learned_absolute" : "rope");
  if (model.position_embedding == PositionEmbedding::rope)
    args.arg("--rotary-base", static_cast<int64_t>(model.rope_theta));
  args.arg("--normalization", model.norm == NormKind::rmsnorm ? "RMSNorm" : "LayerNorm");
  if (model.mlp == MlpKind::swiglu) args.flag("--swiglu");
  if (!model.tied_embeddings) args.flag("--untie-embeddings-and-output-weights");
  // Trained on the last pipeline stage, as priced (ModelSpec::mtp_layers).
  if (model.mtp_layers > 0) args.arg("--mtp-num-layers", model.mtp_layers);
  if (!model.bias) args.flag("--disable-bias-linear");
  // Megatron-Core's q/k norms are per head (TransformerConfig qk_layernorm); a per-layer one
  // (MiniMax-M2) has no flag and is left out.
  if (model.qk_norm == QkNorm::per_head) args.flag("--qk-layernorm");
  if (!model.dropout) {
    args.arg("--attention-dropout", "0.0");
    args.arg("--hidden-dropout", "0.0");
  }
  if (model.attention == AttentionKind::flash) args.flag("--use-flash-attn");
}

// Megatron-Core's --moe-token-dispatcher-type for Layout::dispatch (DeepEP is its flex dispatcher).
const char* megatron_dispatcher(Dispatch d) {
  return d == Dispatch::allgather ? "allgather" : d == Dispatch::deepep ? "flex" : "alltoall";
}

// The router's Megatron-Core TransformerConfig fields the model sets beyond their defaults, in
// the order every front end writes them: group-limited routing, the score function, the routed
// weights' scale, the expert bias.
struct RouterField {
  enum class Kind { integer, number, text, on };
  const char* key;  // the TransformerConfig field; Megatron-LM's flag is it with '-' for '_'
  Kind kind;
  std::string value;  // as written: "8", "2.5", "sigmoid"; empty for Kind::on
};

std::vector<RouterField> router_fields(const MoeSpec& moe) {
  using Kind = RouterField::Kind;
  std::vector<RouterField> out;
  if (moe.group_limit > 0) {
    out.push_back({"moe_router_num_groups", Kind::integer, std::to_string(moe.groups)});
    out.push_back({"moe_router_group_topk", Kind::integer, std::to_string(moe.group_limit)});
  }
  if (moe.sigmoid_router) out.push_back({"moe_router_score_function", Kind::text, "sigmoid"});
  if (moe.routed_scaling != 1.0)
    out.push_back(
        {"moe_router_topk_scaling_factor", Kind::number, fmt::format("{}", moe.routed_scaling)});
  if (moe.expert_bias) out.push_back({"moe_router_enable_expert_bias", Kind::on, ""});
  return out;
}

std::string megatron_flag(const char* config_key) {
  std::string flag = std::string("--") + config_key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

void megatron_moe_args(const ModelSpec& model, const Layout& layout, LauncherArgs& args) {
  if (model.mla) {
    args.flag("--multi-latent-attention");
    if (model.mla->q_lora_rank > 0) args.arg("--q-lora-rank", model.mla->q_lora_rank);
    args.arg("--kv-lora-rank", model.mla->kv_lora_rank);
    args.arg("--qk-head-dim", model.mla->qk_nope_head_dim);
    args.arg("--qk-pos-emb-head-dim", model.mla->qk_rope_head_dim);
    args.arg("--v-head-dim", model.mla->v_head_dim);
  }
  if (model.sparse_attention) {
    // Megatron-Core's DSA (TransformerConfig experimental_attention_variant, dsa_indexer_*),
    // whose __post_init__ asserts RoPE fusion off (apply_rope_fusion, on by default in
    // Megatron-LM's arguments.py).
    args.arg("--experimental-attention-variant", "dsa");
    args.arg("--dsa-indexer-n-heads", model.sparse_attention->index_heads);
    args.arg("--dsa-indexer-head-dim", model.sparse_attention->index_head_dim);
    args.arg("--dsa-indexer-topk", model.sparse_attention->top_k);
    args.flag("--no-rope-fusion");
  }
  if (!model.moe) return;
  args.arg("--num-experts", model.moe->experts);
  args.arg("--moe-router-topk", model.moe->top_k);
  args.arg("--moe-ffn-hidden-size", model.moe->expert_ffn_hidden);
  // The dispatcher meshplan priced (Megatron's default is allgather) and grouped expert GEMMs.
  args.arg("--moe-token-dispatcher-type", megatron_dispatcher(layout.dispatch));
  if (layout.dispatch == Dispatch::deepep) args.arg("--moe-flex-dispatcher-backend", "deepep");
  for (const RouterField& f : router_fields(*model.moe)) {
    if (f.kind == RouterField::Kind::on)
      args.flag(megatron_flag(f.key));
    else
      args.arg(megatron_flag(f.key), f.value);
  }
  args.flag("--moe-grouped-gemm");
  if (model.moe->shared_experts > 0)
    args.arg("--moe-shared-expert-intermediate-size",
             model.moe->shared_experts * model.moe->expert_ffn_hidden);
  if (model.dense_layers() > 0)
    args.arg("--moe-layer-freq", fmt::format("\"{}\"", moe_layer_pattern(model)));
}

// arguments.py (MTP validation): "Multi-Token Prediction (MTP) is not supported with {type}
// position embedding type. The supported position embedding types are rope and none." Apart and
// cold: the search asks model_rules of every layout, and this keeps it small enough to inline.
[[gnu::cold]] void mtp_rules(Refusals& out, const ModelSpec& model) {
  if (model.position_embedding != PositionEmbedding::rope)
    out.other(
        "mtp_layers", [&] { return std::to_string(model.mtp_layers); },
        "Megatron-Core trains multi-token prediction with RoPE (or no position embedding) only");
}

void model_rules(Refusals& out, const ModelSpec& model, const Layout& layout) {
  if (model.mtp_layers > 0) mtp_rules(out, model);
  if (model.sparse_attention && layout.cp > 1 && layout.cp_kind != CpKind::allgather)
    out.field("cp_kind",
              "Megatron-Core's DSAttention takes context parallelism by all-gather only "
              "(TransformerConfig: cp_comm_type allgather); use cp_kind=allgather");
  if (model.position_embedding == PositionEmbedding::alibi)
    out.other("position_embedding", "alibi", "Megatron-core has no ALiBi");
  if (model.mlp == MlpKind::relu)
    out.other("mlp", "relu", "Megatron-LM's MLP takes gelu or swiglu");
  if (model.position_embedding == PositionEmbedding::rope &&
      model.rope_theta != std::floor(model.rope_theta))
    out.other(
        "rope_theta", [&] { return fmt::format("{}", model.rope_theta); },
        "the RoPE base is an integer (--rotary-base, rotary_base)");
}

// Megatron-LM's ZeRO: the distributed optimizer (ZeRO-1), or Megatron-FSDP sharding gradients
// (ZeRO-2) or gradients and parameters (ZeRO-3). Megatron-FSDP v1 (the default version) runs on
// the distributed optimizer and saves only fsdp_dtensor checkpoints (arguments.py asserts both).
void megatron_zero_args(const Layout& layout, LauncherArgs& args) {
  if (layout.zero >= 1) args.flag("--use-distributed-optimizer");
  if (layout.zero >= 2) {
    args.flag("--use-megatron-fsdp");
    args.arg("--data-parallel-sharding-strategy",
             layout.zero == 3 ? "optim_grads_params" : "optim_grads");
    args.arg("--ckpt-format", "fsdp_dtensor");
  }
  // Hybrid sharding: that many distributed-optimizer copies, each sharded over `shard` ranks.
  if (layout.shard > 0)
    args.arg("--num-distributed-optimizer-instances", layout.dp * layout.cp / layout.shard);
  args.flag("--overlap-grad-reduce");
  if (layout.zero >= 1) args.flag("--overlap-param-gather");
}

bool uneven_split_needed(const ModelSpec& model, const Layout& layout) {
  return layout.uneven && model.layers % (layout.pp * layout.vpp) != 0;
}

// Virtual stages and the uneven split, as priced.
void megatron_pipeline_args(const ModelSpec& model, const Layout& layout, LauncherArgs& args) {
  if (!uneven_split_needed(model, layout)) {
    if (layout.vpp > 1)
      args.arg("--num-layers-per-virtual-pipeline-stage", model.layers / (layout.pp * layout.vpp));
    return;
  }
  const std::vector<int64_t> chunks = chunk_layers(model.layers, layout.pp, layout.vpp);
  if (const std::optional<FirstLastSplit> split = first_last_split(chunks, layout.pp, layout.vpp)) {
    // --num-layers-per-virtual-pipeline-stage refuses an uneven split (arguments.py).
    if (layout.vpp > 1) args.arg("--num-virtual-stages-per-pipeline-rank", layout.vpp);
    args.arg("--decoder-first-pipeline-num-layers", split->first);
    args.arg("--decoder-last-pipeline-num-layers", split->last);
    return;
  }
  if (const std::optional<AccountSplit> split = account_split(model, layout)) {
    if (layout.vpp > 1) args.arg("--num-virtual-stages-per-pipeline-rank", layout.vpp);
    if (split->embedding) args.flag("--account-for-embedding-in-pipeline-split");
    if (split->loss) args.flag("--account-for-loss-in-pipeline-split");
    return;
  }
  // arguments.py: the layout alone sets vpp (it asserts no other vpp flag beside it).
  args.arg("--pipeline-model-parallel-layout",
           "\"" + megatron_layout_string(chunks, model.mtp_layers) + "\"");
}

// The job settings Megatron-Core's launchers take (Megatron-LM d98e8a64ddf3,
// megatron/training/arguments.py; NeMo runs the same Megatron-Core): FP8 parameters are gathered
// by the distributed optimizer or FSDP ("--fp8-param-gather only supported with distributed
// optimizer, torch fsdp2, megatron fsdp, or inference mode"), and gradients are reduced in fp32
// or, with --grad-reduce-in-bf16 (DistributedDataParallelConfig.grad_reduce_in_fp32 off), bf16.
void grad_reduce_dtype_rule(Refusals& out, const JobSettings& job) {
  if (job.grad_reduce_dtype == "fp16")
    out.other("grad_reduce_dtype", job.grad_reduce_dtype,
              "it reduces gradients in fp32 or, with --grad-reduce-in-bf16, bf16");
}

void megatron_job_rules(Refusals& out, const TrainingSpec& training, const Layout& layout,
                        const JobSettings& job) {
  if (job.fp8_params_in(training.precision) && layout.zero == 0)
    out.field("zero",
              "its FP8 parameters (--fp8-param-gather) are gathered by the distributed "
              "optimizer or FSDP; use zero=1, 2 or 3");
  grad_reduce_dtype_rule(out, job);
}

}  // namespace

void megatron_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                    const Layout& layout, const JobSettings& job) {
  megatron_core_rules(out, layout, /*pp_dp_order=*/true, /*megatron_lm=*/true);
  megatron_job_rules(out, training, layout, job);
  if (layout.zero >= 2 && layout.shard > 0)
    out.field("shard",
              "hybrid sharding with Megatron-FSDP (ZeRO-2/3) is not exported; use shard=0, or "
              "zero=1");
  model_rules(out, model, layout);
}

std::string render_megatron(const ModelSpec& model, const TrainingSpec& training,
                            const Layout& layout, const JobSettings& job) {
  LauncherArgs args;
  args.arg("--tensor-model-parallel-size", layout.tp);
  args.arg("--pipeline-model-parallel-size", layout.pp);
  args.arg("--context-parallel-size", layout.cp);
  if (layout.cp > 1 && layout.cp_kind != CpKind::ring)
    args.arg("--cp-comm-type", megatron_cp_comm_type(layout.cp_kind));
  if (layout.cp > 1 && layout.cp_kind == CpKind::hybrid)
    args.arg("--hierarchical-context-parallel-sizes", hierarchical_cp_sizes(layout, " "));
  args.arg("--expert-model-parallel-size", layout.ep);
  // Megatron's default expert TP is tp; name it whenever the experts fold (Layout::etp).
  if (layout.folds_experts()) args.arg("--expert-tensor-parallel-size", layout.expert_tp());
  if (layout.order == kTpPpDpOrder) args.flag("--use-tp-pp-dp-mapping");
  if (layout.sp && layout.tp > 1) args.flag("--sequence-parallel");
  if (layout.tp_overlap) args.flag("--tp-comm-overlap");
  if (layout.ep_overlap) args.flag("--overlap-moe-expert-parallel-comm");
  if (layout.offload == Offload::cpu) {
    args.flag("--optimizer-cpu-offload");
    args.flag("--use-precision-aware-optimizer");  // arguments.py asserts it with the offload
  }
  if (layout.act_offload > 0) args.arg("--cpu-offloading-num-layers", layout.act_offload);
  megatron_pipeline_args(model, layout, args);
  RecomputeArgs r = recompute_args(layout);
  if (!r.granularity.empty()) args.arg("--recompute-granularity", r.granularity);
  if (layout.recompute_modules != kDefaultRecomputeModules)
    args.arg("--recompute-modules", recompute_modules_words(layout.recompute_modules, " "));
  if (!r.method.empty()) args.arg("--recompute-method", r.method);
  if (r.layers > 0) args.arg("--recompute-num-layers", r.layers);
  args.arg("--micro-batch-size", layout.mbs);
  args.arg("--global-batch-size", training.global_batch);
  megatron_zero_args(layout, args);
  args.flag("--bf16");
  if (training.precision == Precision::fp8) args.arg("--fp8-format", "hybrid");
  if (job.fp8_params_in(training.precision)) args.flag("--fp8-param-gather");
  if (job.grad_reduce_dtype == "bf16") args.flag("--grad-reduce-in-bf16");
  megatron_shape_args(model, training, args);
  megatron_moe_args(model, layout, args);
  std::vector<std::string> comment = {
      fmt::format("Megatron-LM arguments for {} ({} sequences x {} tokens)", model.name,
                  training.global_batch, training.seq_len),
      "layout " + to_string(layout),
      fmt::format("vocabulary {} comes from the tokenizer (--tokenizer-type ...)", model.vocab)};
  if (layout.zero >= 2)
    comment.push_back("Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1");
  return args.render(comment);
}

namespace {

// A model: key that megatron_gpt_config.yaml lacks (NeMo reads it with cfg.get or passes it on
// to TransformerConfig): fine in a YAML file, but a Hydra command-line override needs `+`.
std::string nemo_added_key(const std::string& key, const std::string& value) {
  return fmt::format(
      "  {}: {}  # not in megatron_gpt_config.yaml: +model.{}={} on a command line\n", key, value,
      key, value);
}

// Position embedding and MoE keys.
std::string nemo_model_keys(const ModelSpec& model, const Layout& layout) {
  std::string out;
  const bool rope = model.position_embedding == PositionEmbedding::rope;
  out += fmt::format("  position_embedding_type: {}\n", rope ? "rope" : "learned_absolute");
  if (rope)
    out += nemo_added_key("rotary_base", std::to_string(static_cast<int64_t>(model.rope_theta)));
  if (!model.moe) return out;
  out += nemo_added_key("num_moe_experts", std::to_string(model.moe->experts));
  out += nemo_added_key("moe_router_topk", std::to_string(model.moe->top_k));
  out += nemo_added_key("moe_token_dispatcher_type", megatron_dispatcher(layout.dispatch));
  if (layout.dispatch == Dispatch::deepep)
    out += nemo_added_key("moe_flex_dispatcher_backend", "deepep");
  for (const RouterField& f : router_fields(*model.moe))
    out += nemo_added_key(f.key, f.kind == RouterField::Kind::on ? "true" : f.value);
  out += nemo_added_key("moe_grouped_gemm", "true");
  if (model.moe->shared_experts > 0)
    out += nemo_added_key("moe_shared_expert_intermediate_size",
                          std::to_string(model.moe->shared_experts * model.moe->expert_ffn_hidden));
  if (model.dense_layers() > 0) {  // TransformerConfig.moe_layer_freq as a list: 1 = MoE layer
    std::vector<int> pattern;
    for (int64_t layer = 0; layer < model.layers; ++layer)
      pattern.push_back(model.is_moe_layer(layer) ? 1 : 0);
    out += nemo_added_key("moe_layer_freq", fmt::format("[{}]", fmt::join(pattern, ", ")));
  }
  return out;
}

}  // namespace

// NeMo 1.x megatron_gpt_config.yaml keys (model: section; NeMo 8cfedd720346,
// examples/nlp/language_modeling/conf/megatron_gpt_config.yaml). ZeRO-2/3 map onto NeMo's FSDP
// (fsdp_sharding_strategy grad / full), which NeMo allows only without pipeline parallelism.
void nemo_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                const Layout& layout, const JobSettings& job) {
  megatron_core_rules(out, layout, /*pp_dp_order=*/false, /*megatron_lm=*/false);
  grad_reduce_dtype_rule(out, job);
  // NeMo 1 hands both to Megatron-Core's DDP from its distributed_fused_adam path only
  // (megatron_gpt_model.py setup_mcore_distributed_parallel: grad_reduce_in_fp32 from
  // optim.grad_sync_dtype, fp8_param_gather from fp8_params): a narrower rule than Megatron-
  // Core's own for FP8 parameters (zero ≥ 1), which it replaces.
  if ((job.fp8_params_in(training.precision) || job.grad_reduce_dtype == "bf16") &&
      layout.zero != 1)
    out.field("zero",
              "its FP8 parameters and bf16 gradient reduction go through distributed_fused_adam "
              "(fp8_params, optim.grad_sync_dtype); use zero=1");
  if (layout.zero >= 2 && layout.pp > 1)
    out.field("zero",
              "NeMo's FSDP (ZeRO-2/3) does not combine with pipeline parallelism; use zero=0 or "
              "1, or pp=1");
  if (layout.shard > 0)
    out.field("shard", "the NeMo 1 GPT config has no distributed-optimizer instances; use shard=0");
  if (uneven_split_needed(model, layout))
    out.field("uneven", "the GPT config splits layers evenly over stages");
  if (model.mtp_layers > 0)
    out.other(
        "mtp_layers", [&] { return std::to_string(model.mtp_layers); },
        "NeMo 1's GPT model builds no multi-token-prediction block; use NeMo 2 or "
        "Megatron-LM");
  model_rules(out, model, layout);
}

std::string render_nemo(const ModelSpec& model, const TrainingSpec& training, const Layout& layout,
                        const JobSettings& job) {
  auto null_or = [](int64_t v) { return v > 0 ? std::to_string(v) : std::string("null"); };
  RecomputeArgs r = recompute_args(layout);
  std::string out =
      fmt::format("# NeMo keys for {} ({} sequences x {} tokens)\n# layout {}\n", model.name,
                  training.global_batch, training.seq_len, to_string(layout));
  out += "trainer:\n  precision: bf16-mixed\n";
  out += "model:\n";
  out += fmt::format("  micro_batch_size: {}\n  global_batch_size: {}\n", layout.mbs,
                     training.global_batch);
  out += fmt::format("  tensor_model_parallel_size: {}\n  pipeline_model_parallel_size: {}\n",
                     layout.tp, layout.pp);
  out += fmt::format("  virtual_pipeline_model_parallel_size: {}\n",
                     layout.vpp > 1 ? std::to_string(layout.vpp) : "null");
  // Interleaving overlaps its p2p transfers, as Megatron-LM does by default; Megatron-core
  // requires batch_p2p_comm off for that (model_parallel_config.py).
  if (layout.vpp > 1) out += "  overlap_p2p_comm: true\n  batch_p2p_comm: false\n";
  out += fmt::format("  expert_model_parallel_size: {}\n", layout.ep);
  if (layout.folds_experts())
    out += nemo_added_key("expert_tensor_parallel_size", std::to_string(layout.expert_tp()));
  out += nemo_added_key("context_parallel_size", std::to_string(layout.cp));
  if (layout.cp > 1 && layout.cp_kind != CpKind::ring)
    out += nemo_added_key("cp_comm_type", megatron_cp_comm_type(layout.cp_kind));
  if (layout.cp > 1 && layout.cp_kind == CpKind::hybrid)
    out += nemo_added_key("hierarchical_context_parallel_sizes",
                          "[" + hierarchical_cp_sizes(layout, ",") + "]");
  out += fmt::format("  sequence_parallel: {}\n", layout.sp && layout.tp > 1);
  if (layout.tp_overlap) out += "  ub_tp_comm_overlap: true\n";
  if (layout.ep_overlap) out += nemo_added_key("overlap_moe_expert_parallel_comm", "true");
  out += fmt::format("  activations_checkpoint_granularity: {}\n",
                     r.granularity.empty() ? "null" : r.granularity);
  out += fmt::format("  activations_checkpoint_method: {}\n", r.method.empty() ? "null" : r.method);
  out += fmt::format("  activations_checkpoint_num_layers: {}\n", null_or(r.layers));
  if (layout.recompute_modules != kDefaultRecomputeModules)
    out += nemo_added_key("recompute_modules",
                          "[" + recompute_modules_words(layout.recompute_modules, ",") + "]");
  out += fmt::format("  encoder_seq_length: {}\n  num_layers: {}\n  hidden_size: {}\n",
                     training.seq_len, model.layers, model.hidden);
  out += fmt::format("  ffn_hidden_size: {}\n  num_attention_heads: {}\n  num_query_groups: {}\n",
                     model.ffn_hidden, model.heads, model.kv_heads);
  out += nemo_model_keys(model, layout);
  if (training.precision == Precision::fp8) out += "  fp8: true\n  fp8_hybrid: true\n";
  if (layout.zero >= 2) {
    out += fmt::format("  fsdp: true\n  fsdp_sharding_strategy: {}\n",
                       layout.zero == 3 ? "full" : "grad");
  }
  if (job.fp8_params_in(training.precision)) out += nemo_added_key("fp8_params", "true");
  out += fmt::format("  optim:\n    name: {}\n",
                     layout.zero == 1 ? "distributed_fused_adam" : "fused_adam");
  if (job.grad_reduce_dtype == "bf16") out += "    grad_sync_dtype: bf16\n";
  return out;
}

}  // namespace meshplan

namespace meshplan {
namespace {

// "recipe.<key> = <value>" lines of a NeMo 2 recipe (nemo_run Partial): the assignments NeMo's
// own recipes make (nemo/collections/llm/recipes/llama3_70b.py:
// recipe.trainer.strategy.tensor_model_parallel_size = 8); the same keys, without "recipe.",
// are nemo-run command-line overrides. Values are Python literals.
class RecipeLines {
 public:
  void set(const std::string& key, const std::string& python_value) {
    out_ += fmt::format("recipe.{} = {}\n", key, python_value);
  }
  void set(const std::string& key, const char* python_value) {
    set(key, std::string(python_value));
  }
  void set(const std::string& key, int64_t v) { set(key, std::to_string(v)); }
  void set(const std::string& key, bool v) { set(key, std::string(v ? "True" : "False")); }
  void text(const std::string& key, const std::string& v) { set(key, "\"" + v + "\""); }
  void line(const std::string& raw) { out_ += raw + "\n"; }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// MegatronStrategy's parallel sizes (nemo/lightning/pytorch/strategies/megatron_strategy.py).
void nemo2_strategy(const ModelSpec& model, const Layout& layout, RecipeLines& r) {
  const std::string s = "trainer.strategy.";
  r.set(s + "tensor_model_parallel_size", layout.tp);
  r.set(s + "pipeline_model_parallel_size", layout.pp);
  if (uneven_split_needed(model, layout)) {
    const std::vector<int64_t> chunks = chunk_layers(model.layers, layout.pp, layout.vpp);
    if (const std::optional<FirstLastSplit> split =
            first_last_split(chunks, layout.pp, layout.vpp)) {
      r.set(s + "num_layers_in_first_pipeline_stage", split->first);
      r.set(s + "num_layers_in_last_pipeline_stage", split->last);
    } else if (const std::optional<AccountSplit> account = account_split(model, layout)) {
      if (account->embedding) r.set(s + "account_for_embedding_in_pipeline_split", true);
      if (account->loss) r.set(s + "account_for_loss_in_pipeline_split", true);
    } else {
      r.text(s + "pipeline_model_parallel_layout",
             megatron_layout_string(chunks, model.mtp_layers));
    }
  }
  r.set(s + "virtual_pipeline_model_parallel_size",
        layout.vpp > 1 ? std::to_string(layout.vpp) : std::string("None"));
  r.set(s + "context_parallel_size", layout.cp);
  r.set(s + "sequence_parallel", layout.sp && layout.tp > 1);
  r.set(s + "expert_model_parallel_size", layout.ep);
  // Routed experts' width is split over Layout::expert_tp (tp unless etp says otherwise).
  if (model.moe) r.set(s + "expert_tensor_parallel_size", layout.expert_tp());
  if (layout.order == kTpPpDpOrder) r.set(s + "use_tp_pp_dp_mapping", true);
  if (layout.shard > 0)
    r.set(s + "num_distributed_optimizer_instances", layout.dp * layout.cp / layout.shard);
}

// Data parallelism: Megatron-core's DDP config and distributed optimizer; ZeRO-2/3 as
// Megatron-FSDP (the strategy's fsdp="megatron", which needs save_ckpt_format fsdp_dtensor).
void nemo2_data_parallel(const Layout& layout, RecipeLines& r) {
  const std::string ddp = "trainer.strategy.ddp.";
  r.set("optim.config.use_distributed_optimizer", layout.zero >= 1);
  if (layout.zero >= 2) {
    r.text("trainer.strategy.fsdp", "megatron");
    r.text(ddp + "data_parallel_sharding_strategy",
           layout.zero == 3 ? "optim_grads_params" : "optim_grads");
    r.text("trainer.strategy.save_ckpt_format", "fsdp_dtensor");
  }
  r.set(ddp + "overlap_grad_reduce", true);
  r.set(ddp + "overlap_param_gather", layout.zero >= 1);
}

// TransformerConfig fields the layout sets (model.config.*).
void nemo2_model_config(const ModelSpec& model, const TrainingSpec& training, const Layout& layout,
                        RecipeLines& r) {
  const std::string c = "model.config.";
  r.set(c + "seq_length", training.seq_len);
  const RecomputeArgs rc = recompute_args(layout);
  r.set(c + "recompute_granularity",
        rc.granularity.empty() ? std::string("None") : "\"" + rc.granularity + "\"");
  r.set(c + "recompute_method", rc.method.empty() ? std::string("None") : "\"" + rc.method + "\"");
  r.set(c + "recompute_num_layers", rc.layers > 0 ? std::to_string(rc.layers) : "None");
  if (layout.recompute_modules != kDefaultRecomputeModules) {
    std::string list;
    for (size_t i = 0; i < kRecomputeModules; ++i) {
      if (!has(layout.recompute_modules, static_cast<RecomputeModule>(i))) continue;
      list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", recompute_module_names()[i]);
    }
    r.set(c + "recompute_modules", "[" + list + "]");
  }
  if (layout.cp > 1 && layout.cp_kind != CpKind::ring)
    r.text(c + "cp_comm_type", megatron_cp_comm_type(layout.cp_kind));
  if (layout.cp > 1 && layout.cp_kind == CpKind::hybrid)
    r.set(c + "hierarchical_context_parallel_sizes",
          "[" + hierarchical_cp_sizes(layout, ", ") + "]");
  if (layout.ep_overlap) r.set(c + "overlap_moe_expert_parallel_comm", true);
  if (layout.act_offload > 0) {
    r.set(c + "cpu_offloading", true);
    r.set(c + "cpu_offloading_num_layers", layout.act_offload);
  }
  // The multi-token-prediction modules priced (TransformerConfig.mtp_num_layers; the recipes'
  // model configs may leave it None).
  if (model.mtp_layers > 0) r.set(c + "mtp_num_layers", model.mtp_layers);
  if (!model.moe) return;
  r.text(c + "moe_token_dispatcher_type", megatron_dispatcher(layout.dispatch));
  if (layout.dispatch == Dispatch::deepep) r.text(c + "moe_flex_dispatcher_backend", "deepep");
  for (const RouterField& f : router_fields(*model.moe)) {
    if (f.kind == RouterField::Kind::on)
      r.set(c + f.key, true);
    else if (f.kind == RouterField::Kind::text)
      r.text(c + f.key, f.value);
    else
      r.set(c + f.key, f.value);
  }
  r.set(c + "moe_grouped_gemm", true);
}

}  // namespace

void nemo2_rules(Refusals& out, const ModelSpec& model, const TrainingSpec& training,
                 const Layout& layout, const JobSettings& job) {
  // MegatronStrategy has use_tp_pp_dp_mapping; the optimizer offload is not a recipe key.
  megatron_core_rules(out, layout, /*pp_dp_order=*/true, /*megatron_lm=*/false);
  megatron_job_rules(out, training, layout, job);
  if (layout.zero >= 2 && layout.shard > 0)
    out.field("shard",
              "hybrid sharding with Megatron-FSDP (ZeRO-2/3) is not exported; use shard=0, or "
              "zero=1");
  model_rules(out, model, layout);
}

std::string render_nemo2(const ModelSpec& model, const TrainingSpec& training, const Layout& layout,
                         const JobSettings& job) {
  RecipeLines r;
  r.line(fmt::format("# NeMo 2 (8cfedd720346) recipe settings for {} ({} sequences x {} tokens)",
                     model.name, training.global_batch, training.seq_len));
  r.line("# layout " + to_string(layout));
  r.line("# after: recipe = llm.<model>.pretrain_recipe(...); the model shape is the recipe's");
  r.line("# (nemo-run: the same keys without 'recipe.' as overrides)");
  nemo2_strategy(model, layout, r);
  nemo2_data_parallel(layout, r);
  r.set("data.micro_batch_size", layout.mbs);
  r.set("data.global_batch_size", training.global_batch);
  r.set("data.seq_length", training.seq_len);
  nemo2_model_config(model, training, layout, r);
  if (layout.tp_overlap || training.precision == Precision::fp8) {
    r.line("# nemo_run as run; nemo.lightning.pytorch.callbacks.megatron_comm_overlap and");
    r.line("# nemo.collections.llm.recipes.precision.mixed_precision provide the names below");
  }
  // TP communication overlap is a trainer callback in NeMo 2 (the recipes' performance mode).
  if (layout.tp_overlap)
    r.line(
        "recipe.trainer.callbacks.append(run.Config(MegatronCommOverlapCallback, "
        "tp_comm_overlap=True))");
  if (training.precision == Precision::fp8) r.set("trainer.plugins", "bf16_with_fp8_mixed()");
  // MegatronMixedPrecision's own settings, which it passes on to the model config and the DDP
  // config (nemo/lightning/pytorch/plugins/mixed_precision.py: fp8_param_gather sets fp8_param
  // and fp8_param_gather; grad_reduce_in_fp32 defaults to True).
  if (job.fp8_params_in(training.precision)) r.set("trainer.plugins.fp8_param_gather", "True");
  if (job.grad_reduce_dtype == "bf16") r.set("trainer.plugins.grad_reduce_in_fp32", "False");
  return r.str();
}

}  // namespace meshplan
