// Megatron-core launchers: Megatron-LM arguments and NeMo (Megatron GPT config) YAML keys.
// Both run Megatron-core's schedules (1F1B, interleaved 1F1B) and rank order (tp-cp-ep-dp-pp),
// and its recompute options (selective, or full with the uniform/block methods).
#include <fmt/format.h>

#include "launchers/launcher_args.h"
#include "launchers/launcher_export.h"

namespace meshplan {
namespace {

bool default_order(const Layout& l) {
  return l.order == std::array<Dim, 4>{Dim::tp, Dim::cp, Dim::dp, Dim::pp};
}

// What Megatron-core cannot run, whichever front end launches it.
std::vector<Diagnostic> megatron_core_refusals(Launcher who, const Layout& l) {
  std::vector<Diagnostic> out;
  if (l.pp > 1 && (l.schedule == Schedule::gpipe || l.schedule == Schedule::zb_h1)) {
    out.push_back(launcher_refusal(who, "schedule", to_string(l.schedule),
                                   "Megatron-core pipelines run 1F1B or interleaved 1F1B only"));
  }
  if (!default_order(l)) {
    out.push_back(
        launcher_refusal(who, "order", "non-default", "Megatron-core orders ranks tp-cp-ep-dp-pp"));
  }
  if (l.recompute == Recompute::selective && l.recompute_layers > 0) {
    out.push_back(launcher_refusal(who, "recompute_layers", std::to_string(l.recompute_layers),
                                   "selective and full (block) recompute are exclusive "
                                   "(--recompute-granularity takes one)"));
  }
  if (l.recompute_layers > 0 && l.recompute == Recompute::none && l.recompute_layers % l.vpp != 0) {
    out.push_back(launcher_refusal(who, "recompute_layers", std::to_string(l.recompute_layers),
                                   fmt::format("block recompute counts layers per virtual stage; "
                                               "{} is not a multiple of vpp={}",
                                               l.recompute_layers, l.vpp)));
  }
  if (l.uneven && l.vpp > 1) {
    out.push_back(launcher_refusal(who, "uneven", "true",
                                   "--num-layers-per-virtual-pipeline-stage needs equal chunks"));
  }
  return out;
}

struct RecomputeArgs {
  std::string granularity, method;  // empty: none
  int64_t layers = 0;               // 0: not set
};

RecomputeArgs recompute_args(const Layout& l) {
  if (l.recompute == Recompute::full) return {"full", "uniform", 1};
  if (l.recompute == Recompute::selective) return {"selective", "", 0};
  if (l.recompute_layers > 0) return {"full", "block", l.recompute_layers / l.vpp};
  return {};
}

void megatron_shape_args(const ModelSpec& m, const TrainingSpec& t, LauncherArgs& a) {
  a.arg("--num-layers", m.layers);
  a.arg("--hidden-size", m.hidden);
  a.arg("--ffn-hidden-size", m.ffn_hidden);
  a.arg("--num-attention-heads", m.heads);
  a.arg("--kv-channels", m.head_dim);
  if (m.kv_heads != m.heads) {
    a.flag("--group-query-attention");
    a.arg("--num-query-groups", m.kv_heads);
  }
  a.arg("--seq-length", t.seq_len);
  a.arg("--max-position-embeddings", std::max(t.seq_len, m.max_positions));
  a.arg("--position-embedding-type",
        m.position_embedding == PositionEmbedding::learned ? "learned_absolute" : "rope");
  a.arg("--normalization", m.norm == NormKind::rmsnorm ? "RMSNorm" : "LayerNorm");
  if (m.mlp == MlpKind::swiglu) a.flag("--swiglu");
  if (!m.tied_embeddings) a.flag("--untie-embeddings-and-output-weights");
  if (!m.bias) a.flag("--disable-bias-linear");
  if (m.qk_norm) a.flag("--qk-layernorm");
  if (!m.dropout) {
    a.arg("--attention-dropout", "0.0");
    a.arg("--hidden-dropout", "0.0");
  }
  if (m.attention == AttentionKind::flash) a.flag("--use-flash-attn");
}

void megatron_moe_args(const ModelSpec& m, LauncherArgs& a) {
  if (m.mla) {
    a.flag("--multi-latent-attention");
    if (m.mla->q_lora_rank > 0) a.arg("--q-lora-rank", m.mla->q_lora_rank);
    a.arg("--kv-lora-rank", m.mla->kv_lora_rank);
    a.arg("--qk-head-dim", m.mla->qk_nope_head_dim);
    a.arg("--qk-pos-emb-head-dim", m.mla->qk_rope_head_dim);
    a.arg("--v-head-dim", m.mla->v_head_dim);
  }
  if (!m.moe) return;
  a.arg("--num-experts", m.moe->experts);
  a.arg("--moe-router-topk", m.moe->top_k);
  a.arg("--moe-ffn-hidden-size", m.moe->expert_ffn_hidden);
  if (m.moe->shared_experts > 0)
    a.arg("--moe-shared-expert-intermediate-size",
          m.moe->shared_experts * m.moe->expert_ffn_hidden);
  if (m.moe->first_dense_layers > 0) {
    a.arg("--moe-layer-freq",
          fmt::format("\"([0]*{}+[1]*{})\"", m.moe->first_dense_layers, m.moe_layers()));
  }
}

std::vector<Diagnostic> model_refusals(Launcher who, const ModelSpec& m) {
  std::vector<Diagnostic> out;
  if (m.position_embedding == PositionEmbedding::alibi)
    out.push_back(
        launcher_refusal(who, "position_embedding", "alibi", "Megatron-core has no ALiBi"));
  if (m.mlp == MlpKind::relu)
    out.push_back(launcher_refusal(who, "mlp", "relu", "Megatron-LM's MLP takes gelu or swiglu"));
  return out;
}

}  // namespace

Result<std::string> export_megatron(const ModelSpec& m, const TrainingSpec& t, const Layout& l) {
  std::vector<Diagnostic> refused = megatron_core_refusals(Launcher::megatron, l);
  if (l.zero >= 2) {
    refused.push_back(launcher_refusal(Launcher::megatron, "zero", std::to_string(l.zero),
                                       "Megatron-LM shards optimizer states only "
                                       "(--use-distributed-optimizer, ZeRO-1); use zero=0 or 1"));
  }
  for (Diagnostic& d : model_refusals(Launcher::megatron, m)) refused.push_back(std::move(d));
  if (!refused.empty()) return refused;
  LauncherArgs a;
  a.arg("--tensor-model-parallel-size", l.tp);
  a.arg("--pipeline-model-parallel-size", l.pp);
  a.arg("--context-parallel-size", l.cp);
  a.arg("--expert-model-parallel-size", l.ep);
  if (l.sp && l.tp > 1) a.flag("--sequence-parallel");
  if (l.tp_overlap) a.flag("--tp-comm-overlap");
  if (l.vpp > 1) a.arg("--num-layers-per-virtual-pipeline-stage", m.layers / (l.pp * l.vpp));
  if (l.uneven && m.layers % l.pp != 0) {
    std::vector<int64_t> chunks = chunk_layers(m.layers, l.pp, 1);
    a.arg("--decoder-first-pipeline-num-layers", chunks.front());
    a.arg("--decoder-last-pipeline-num-layers", chunks.back());
  }
  RecomputeArgs r = recompute_args(l);
  if (!r.granularity.empty()) a.arg("--recompute-granularity", r.granularity);
  if (!r.method.empty()) a.arg("--recompute-method", r.method);
  if (r.layers > 0) a.arg("--recompute-num-layers", r.layers);
  a.arg("--micro-batch-size", l.mbs);
  a.arg("--global-batch-size", t.global_batch);
  if (l.zero == 1) a.flag("--use-distributed-optimizer");
  a.flag("--overlap-grad-reduce");
  if (l.zero == 1) a.flag("--overlap-param-gather");
  a.flag("--bf16");
  if (t.precision == Precision::fp8) a.arg("--fp8-format", "hybrid");
  megatron_shape_args(m, t, a);
  megatron_moe_args(m, a);
  return a.render(
      {fmt::format("Megatron-LM arguments for {} ({} sequences x {} tokens)", m.name,
                   t.global_batch, t.seq_len),
       "layout " + to_string(l),
       fmt::format("vocabulary {} comes from the tokenizer (--tokenizer-type ...)", m.vocab)});
}

// NeMo 1.x megatron_gpt_config.yaml keys (model: section). ZeRO-2/3 map onto NeMo's FSDP
// (fsdp_sharding_strategy grad / full), which NeMo allows only without pipeline parallelism.
Result<std::string> export_nemo(const ModelSpec& m, const TrainingSpec& t, const Layout& l) {
  std::vector<Diagnostic> refused = megatron_core_refusals(Launcher::nemo, l);
  if (l.zero >= 2 && l.pp > 1) {
    refused.push_back(launcher_refusal(Launcher::nemo, "zero", std::to_string(l.zero),
                                       "NeMo's FSDP (ZeRO-2/3) does not combine with pipeline "
                                       "parallelism; use zero=0 or 1, or pp=1"));
  }
  if (l.uneven && m.layers % l.pp != 0) {
    refused.push_back(launcher_refusal(Launcher::nemo, "uneven", "true",
                                       "the GPT config splits layers evenly over stages"));
  }
  for (Diagnostic& d : model_refusals(Launcher::nemo, m)) refused.push_back(std::move(d));
  if (!refused.empty()) return refused;
  auto null_or = [](int64_t v) { return v > 0 ? std::to_string(v) : std::string("null"); };
  RecomputeArgs r = recompute_args(l);
  std::string out = fmt::format("# NeMo keys for {} ({} sequences x {} tokens)\n# layout {}\n",
                                m.name, t.global_batch, t.seq_len, to_string(l));
  out += "trainer:\n  precision: bf16-mixed\n";
  out += "model:\n";
  out += fmt::format("  micro_batch_size: {}\n  global_batch_size: {}\n", l.mbs, t.global_batch);
  out += fmt::format("  tensor_model_parallel_size: {}\n  pipeline_model_parallel_size: {}\n", l.tp,
                     l.pp);
  out += fmt::format("  virtual_pipeline_model_parallel_size: {}\n",
                     l.vpp > 1 ? std::to_string(l.vpp) : "null");
  out += fmt::format("  context_parallel_size: {}\n  expert_model_parallel_size: {}\n", l.cp, l.ep);
  out += fmt::format("  sequence_parallel: {}\n", l.sp && l.tp > 1);
  if (l.tp_overlap) out += "  ub_tp_comm_overlap: true\n";
  out += fmt::format("  activations_checkpoint_granularity: {}\n",
                     r.granularity.empty() ? "null" : r.granularity);
  out += fmt::format("  activations_checkpoint_method: {}\n", r.method.empty() ? "null" : r.method);
  out += fmt::format("  activations_checkpoint_num_layers: {}\n", null_or(r.layers));
  out += fmt::format("  encoder_seq_length: {}\n  num_layers: {}\n  hidden_size: {}\n", t.seq_len,
                     m.layers, m.hidden);
  out += fmt::format("  ffn_hidden_size: {}\n  num_attention_heads: {}\n  num_query_groups: {}\n",
                     m.ffn_hidden, m.heads, m.kv_heads);
  if (m.moe)
    out +=
        fmt::format("  num_moe_experts: {}\n  moe_router_topk: {}\n", m.moe->experts, m.moe->top_k);
  if (t.precision == Precision::fp8) out += "  fp8: true\n  fp8_hybrid: true\n";
  if (l.zero >= 2) {
    out +=
        fmt::format("  fsdp: true\n  fsdp_sharding_strategy: {}\n", l.zero == 3 ? "full" : "grad");
  }
  out += fmt::format("  optim:\n    name: {}\n",
                     l.zero == 1 ? "distributed_fused_adam" : "fused_adam");
  return out;
}

}  // namespace meshplan
