#include "checks/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/cluster_spec.h"
#include "core/edit_distance.h"
#include "core/layout_fields.h"
#include "core/model_yaml.h"
#include "core/yaml_node.h"
#include "planner/model_flops_eq3.h"
#include "planner/model_flops_megatron.h"
#include "planner/profile_lookup.h"
#include "planner/profile_swaps.h"

namespace meshplan {
namespace {

// What a run may refer to elsewhere in its file.
struct RunsContext {
  std::optional<YamlNode> frameworks, models;
};

// A 2021-style inline model: GPT-3-like defaults, seq_len inside.
ModelSpec read_inline_model(const YamlNode& n, const std::string& id) {
  n.expect_only_keys({"layers", "hidden", "heads", "vocab", "ffn_hidden", "mlp", "seq_len",
                      "position_embedding", "dropout"});
  ModelSpec m;
  m.name = id;
  m.layers = n.child("layers").as_int(1, 100000);
  m.hidden = n.child("hidden").as_int(1, 10'000'000);
  m.heads = n.child("heads").as_int(1, 100000);
  m.kv_heads = m.heads;
  m.head_dim = m.hidden / m.heads;
  m.vocab = n.get_int("vocab", 51200, 1, 100'000'000);  // Megatron-LM's padded GPT-2 vocabulary
  m.ffn_hidden = n.get_int("ffn_hidden", 4 * m.hidden, 1, 100'000'000);
  m.mlp =
      n.get_choice("mlp", "gelu", {"gelu", "swiglu"}) == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
  m.training.seq_len = n.get_int("seq_len", 2048, 1, 10'000'000);
  // GPT-3-style models of 2021-2022: LayerNorm, biases, learned positions, tied embeddings,
  // standard (non-flash) attention with fused softmax, dropout on (BLOOM says otherwise).
  m.norm = NormKind::layernorm;
  m.bias = true;
  m.tied_embeddings = true;
  m.attention = AttentionKind::standard;
  m.dropout = n.get_bool("dropout", true);
  const std::string pos =
      n.get_choice("position_embedding", "learned", {"learned", "alibi", "rope"});
  m.position_embedding = pos == "alibi"  ? PositionEmbedding::alibi
                         : pos == "rope" ? PositionEmbedding::rope
                                         : PositionEmbedding::learned;
  m.max_positions = m.training.seq_len;
  return m;
}

// A model of the file's `models:` map: the keys of models/*.yaml (their defaults too) but `name`,
// MoE, MLA, windows and the rest included; learned positions span the run's sequence unless
// max_positions says otherwise.
ModelSpec read_named_model(const YamlNode& n, const std::string& name, int64_t seq_len) {
  ModelSpec m = read_model_mapping(n, name, seq_len);
  m.training.seq_len = seq_len;
  return m;
}

ModelSpec read_run_model(const YamlNode& run, const RunsContext& ctx, const std::string& id) {
  YamlNode model = run.child("model");
  if (!model.is_scalar()) {
    if (run.has("seq_len")) run.child("seq_len").fail("goes inside an inline model");
    return read_inline_model(model, id);
  }
  const std::string name = model.as_string();
  std::vector<std::string> names;
  if (ctx.models) {
    if (ctx.models->has(name)) {
      const int64_t seq_len = run.child("seq_len").as_int(1, 10'000'000);
      return read_named_model(ctx.models->child(name), name, seq_len);
    }
    names = ctx.models->keys();
  }
  model.fail(
      fmt::format("names no model of the file's `models:` map{}", did_you_mean(name, names)));
}

// The run's framework: its own `framework:`, else its source's in `frameworks:`, else the default.
FrameworkPreset read_run_framework(const YamlNode& run, const RunsContext& ctx,
                                   const std::string& source) {
  std::optional<YamlNode> node = run.optional_child("framework");
  if (!node && ctx.frameworks && ctx.frameworks->has(source)) {
    node = ctx.frameworks->child(source);
    if (!node->is_scalar()) {
      node->expect_only_keys({"framework", "notes"});
      node = node->child("framework");
    }
  }
  if (!node) return find_framework(kDefaultFramework).value();
  Result<FrameworkPreset> f = find_framework(node->as_string(), node->location(), node->path());
  if (!f) throw InputError{f.errors()};
  return f.value();
}

void read_run_layout(const YamlNode& n, const FrameworkPreset& framework, PublishedRun& r) {
  n.expect_only_keys({"tp", "pp", "dp", "cp", "cp_kind", "ep", "etp", "ep_overlap", "dispatch",
                      "zero", "recompute", "recompute_modules", "sp", "schedule", "vpp", "mbs",
                      "tp_times_pp", "tp_overlap"});
  LayoutFix& f = r.fix;
  auto opt_int = [&](const char* key, std::optional<int64_t>& field) {
    if (n.has(key))
      field = n.child(key).as_int(1, 1'000'000);
    else
      r.searched.push_back(key);
  };
  if (n.has("tp_times_pp")) {
    r.tp_times_pp = n.child("tp_times_pp").as_int(1, 1'000'000);
    r.searched.push_back("tp·pp split");
  } else {
    opt_int("tp", f.tp);
    opt_int("pp", f.pp);
  }
  f.dp = n.child("dp").as_int(1, 1'000'000);
  f.cp = n.get_int("cp", 1, 1, 1'000'000);
  f.ep = n.get_int("ep", 1, 1, 1'000'000);
  if (n.has("zero"))
    f.zero = static_cast<int>(n.child("zero").as_int(0, 3));
  else
    r.searched.push_back("zero");
  opt_int("mbs", f.mbs);
  if (n.has("recompute")) {
    std::string rc = n.child("recompute").as_choice({"none", "selective", "full"});
    f.recompute = rc == "full"        ? Recompute::full
                  : rc == "selective" ? Recompute::selective
                                      : Recompute::none;
    // A published method is the whole of it: "full" checkpoints every layer (Megatron-LM
    // --checkpoint-num-layers and --recompute-num-layers default to 1), not the uniform method's
    // larger groups; "none" and "selective" recompute no whole layer (meshplan's partial full
    // recompute, recompute_layers > 0, is not what the run did).
    f.recompute_layers = 0;
  } else {
    r.searched.push_back("recompute");
  }
  // Sequence parallelism (Korthikanti et al. 2022): off for frameworks that predate it,
  // searched for the others when not published.
  if (n.has("sp"))
    f.sp = n.child("sp").as_bool();
  else if (!framework.sequence_parallel)
    f.sp = false;
  else
    r.searched.push_back("sp");
  if (n.has("schedule")) {
    std::string s = n.child("schedule").as_choice({"gpipe", "1f1b", "interleaved", "zb-h1"});
    if (s == "interleaved")
      r.searched.push_back("vpp");  // the degree is not published
    else
      f.vpp = 1;
    if (s != "interleaved") f.schedule = s == "gpipe" ? Schedule::gpipe : Schedule::one_f_one_b;
  } else {
    r.searched.push_back("schedule");
  }
  if (n.has("vpp")) f.vpp = n.child("vpp").as_int(1, 1024);
  // TP communication overlapped with GEMMs (Megatron-LM --tp-comm-overlap): off unless stated.
  if (n.has("tp_overlap")) f.tp_overlap = n.child("tp_overlap").as_bool();
  // Settings a recipe publishes (Megatron-Core --expert-tensor-parallel-size,
  // --overlap-moe-expert-parallel-comm, --moe-token-dispatcher-type, --recompute-modules,
  // --cp-comm-type), read by the layout fields' own parsers, as --layout and --fix read them.
  // Left out, all but the modules are searched; the modules stay Megatron-Core's default
  // (core_attn).
  for (const char* key : {"etp", "ep_overlap", "dispatch", "recompute_modules", "cp_kind"}) {
    if (!n.has(key)) continue;
    const LayoutField& field = *find_layout_field(key);
    Layout parsed;
    const std::string rule = field.parse(n.child(key).as_string(), parsed);
    if (!rule.empty()) n.child(key).fail(rule);
    field.pin(parsed, f);
  }
}

void read_measured(const YamlNode& m, PublishedRun& r) {
  m.expect_only_keys({"hardware_tflops_per_gpu", "model_tflops_per_gpu", "model_flops",
                      "pct_of_peak", "mfu", "iteration_s", "samples_per_s", "tokens_per_s_per_gpu",
                      "mfu_as_published"});
  r.measured_hardware_tflops = m.get_double("hardware_tflops_per_gpu", 0, 1e-6, 1e9);
  r.measured_iteration_s = m.get_double("iteration_s", 0, 1e-9, 1e9);
  r.measured_tokens_per_s_per_gpu = m.get_double("tokens_per_s_per_gpu", 0, 1e-9, 1e12);
  r.measured_model_tflops = m.get_double("model_tflops_per_gpu", 0, 1e-6, 1e9);
  r.mfu_as_published = m.get_double("mfu_as_published", 0, 0, 1);
  // Megatron-LM's count before and after 8873b55d (2025-03-06: causal attention).
  if (m.has("model_flops")) {
    const YamlNode count = m.child("model_flops");
    if (!m.has("model_tflops_per_gpu")) count.fail("applies to model_tflops_per_gpu only");
    r.model_flops = count.as_choice({"megatron-r0.8", "megatron-causal"}) == "megatron-causal"
                        ? MegatronFlops::causal
                        : MegatronFlops::r0_8;
  }
  if (r.measured_hardware_tflops == 0 && r.measured_iteration_s == 0 &&
      r.measured_tokens_per_s_per_gpu == 0 && r.measured_model_tflops == 0) {
    m.fail(
        "must give hardware_tflops_per_gpu, iteration_s, tokens_per_s_per_gpu or "
        "model_tflops_per_gpu");
  }
}

// Cluster names of the runs files and the shipped topology each stands for.
const std::map<std::string, std::string> kClusterTopology = {
    {"selene", "selene-a100.yaml"},      {"jean_zay_a100", "jean-zay-a100.yaml"},
    {"dgx_h100", "dgx-h100-64n.yaml"},   {"dgx_h200", "dgx-h200-64n.yaml"},
    {"mosaic_h100", "mosaic-h100.yaml"}, {"mosaic_a100", "mosaic-a100.yaml"}};

std::vector<std::string> cluster_names() {
  std::vector<std::string> names;
  for (const auto& [name, file] : kClusterTopology) names.push_back(name);
  return names;
}

PublishedRun read_run(const YamlNode& n, const RunsContext& ctx) {
  n.expect_only_keys({"id", "source", "table", "cluster", "gpus", "model", "seq_len", "precision",
                      "framework", "grad_reduce_dtype", "fp8_params", "layout", "global_batch",
                      "measured"});
  PublishedRun r;
  r.id = n.child("id").as_string();
  r.source = n.child("source").as_string();
  r.table = n.has("table") ? n.child("table").as_string() : "";
  r.where = n.location();
  r.cluster = n.child("cluster").as_choice(cluster_names());
  r.gpus = n.child("gpus").as_int(1, 10'000'000);
  const FrameworkPreset framework = read_run_framework(n, ctx, r.source);
  r.framework = framework.name;
  // A gradient dtype the run's configuration sets apart from its framework's default.
  if (n.has("grad_reduce_dtype"))
    r.grad_reduce_dtype = n.child("grad_reduce_dtype").as_choice(grad_reduce_dtypes());
  // FP8 weights stored and gathered in FP8 (NeMo fp8_params, Megatron-LM --fp8-param-gather,
  // torchtitan enable_fsdp_float8_all_gather).
  if (n.has("fp8_params")) r.fp8_params = n.child("fp8_params").as_bool();
  r.model = read_run_model(n, ctx, r.id);
  r.model.training.precision = n.get_choice("precision", "bf16", {"bf16", "fp8"}) == "fp8"
                                   ? Precision::fp8
                                   : Precision::bf16;
  read_run_layout(n.child("layout"), framework, r);
  r.global_batch = n.child("global_batch").as_int(1, 1'000'000'000);
  r.model.training.global_batch = r.global_batch;
  read_measured(n.child("measured"), r);
  return r;
}

}  // namespace

Result<std::vector<PublishedRun>> load_published_runs(const std::string& path) {
  return capture_input_errors([&] {
    YamlNode root = YamlNode::load_file(path);
    RunsContext ctx{root.optional_child("frameworks"), root.optional_child("models")};
    YamlNode runs = root.child("runs");
    std::vector<PublishedRun> out;
    for (size_t i = 0; i < runs.size(); ++i) out.push_back(read_run(runs.element(i), ctx));
    return out;
  });
}

ErrorSummary summarize_errors(const std::string& name, const std::vector<double>& errors) {
  ErrorSummary s;
  s.name = name;
  s.runs = static_cast<int64_t>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs;
  for (double e : errors) abs.push_back(std::fabs(e));
  std::sort(abs.begin(), abs.end());
  for (double a : abs) s.mean_abs += a / static_cast<double>(abs.size());
  const size_t n = abs.size();
  s.median_abs = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2;
  s.max_abs = abs.back();
  return s;
}

namespace {

Result<ClusterSpec> cluster_for(const PublishedRun& r, const std::string& repo_root) {
  auto it = kClusterTopology.find(r.cluster);
  if (it == kClusterTopology.end()) {
    return Diagnostic{r.where, "cluster", r.cluster, "no shipped topology for this cluster"};
  }
  Result<ClusterSpec> c = load_cluster(repo_root + "/topologies/" + it->second);
  if (!c) return c;
  ClusterSpec spec = c.value();
  spec.nodes = (r.gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
  spec.network.back().span = std::max(spec.network.back().span, spec.gpus());
  return spec;
}

// The measured quantity and the prediction of it, in the same unit.
void compare(const PublishedRun& r, const Estimate& e, ValidationRow& row) {
  const double gpus = static_cast<double>(r.gpus);
  if (r.measured_hardware_tflops > 0) {
    // The sources count FLOPs with eq. 3 of Narayanan et al. 2021 (recompute included).
    row.metric = kMetricHardwareTflops;
    row.measured = r.measured_hardware_tflops;
    row.predicted = eq3_flops_per_step(r.model, r.global_batch) / e.step_time_s / gpus / 1e12;
  } else if (r.measured_iteration_s > 0) {
    row.metric = kMetricStepTime;
    row.measured = r.measured_iteration_s;
    row.predicted = e.step_time_s;
    row.relative_error = row.measured / row.predicted - 1;
    return;
  } else if (r.measured_tokens_per_s_per_gpu > 0) {
    row.metric = kMetricTokens;
    row.measured = r.measured_tokens_per_s_per_gpu;
    row.predicted = e.tokens_per_s / gpus;
  } else {
    // Megatron-LM logs and its README reports TFLOP/s with its own formula: so do we.
    row.metric =
        r.model_flops == MegatronFlops::causal ? kMetricModelTflopsCausal : kMetricModelTflops;
    row.measured = r.measured_model_tflops;
    row.predicted = megatron_flops_per_step(r.model, r.global_batch, e.layout.tp, r.model_flops) /
                    e.step_time_s / gpus / 1e12;
  }
  row.relative_error = (row.predicted - row.measured) / row.measured;
}

// Best prediction for one run: search the unpublished fields, keep the fastest that fits.
Result<ValidationRow> predict(const PublishedRun& r, const std::string& repo_root, int threads,
                              ProfileSwaps& profile_swaps, const ProfileSearchPath& search) {
  Result<ClusterSpec> found = cluster_for(r, repo_root);
  if (!found) return found.errors();
  ClusterSpec spec = found.value();
  profile_swaps.apply(spec);
  Result<CalibrationProfile> profile = resolve_profile(spec, "", search);
  if (!profile) return profile.errors();
  Result<FrameworkPreset> framework = find_framework(r.framework);
  if (!framework) return framework.errors();
  CostOptions options;
  apply_framework(framework.value(), options);
  Result<bool> grads = apply_grad_reduce_dtype(r.grad_reduce_dtype, options);
  if (!grads) return grads.errors();
  options.memory.fp8_params = r.fp8_params;
  CostModel model(r.model, spec, profile.value(), r.model.training, options);
  std::vector<std::pair<int64_t, int64_t>> splits;  // (tp, pp)
  if (r.tp_times_pp > 0) {
    for (int64_t tp = 1; tp <= 8; tp *= 2)
      if (r.tp_times_pp % tp == 0) splits.push_back({tp, r.tp_times_pp / tp});
  } else {
    splits.push_back({r.fix.tp.value_or(0), r.fix.pp.value_or(0)});
  }
  std::optional<Estimate> best;
  for (auto [tp, pp] : splits) {
    SearchOptions o;
    o.fix = r.fix;
    if (tp > 0) o.fix.tp = tp;
    if (pp > 0) o.fix.pp = pp;
    o.top_k = 1;
    o.threads = threads;
    SearchResult s = search_layouts(model, r.gpus, o);
    if (auto error = check_search_size(s, "validate")) return *error;
    const Estimate* e = !s.ranked.empty() ? &s.ranked.front() : s.smallest ? &*s.smallest : nullptr;
    if (e && (!best || (e->fits() && !best->fits()) ||
              (e->fits() == best->fits() && e->step_time_s < best->step_time_s)))
      best = *e;
  }
  if (!best) return Diagnostic{r.where, "layout", r.id, "no valid layout for this run"};
  ValidationRow row;
  row.id = r.id;
  row.source = r.source;
  row.table = r.table;
  row.framework = r.framework;
  compare(r, *best, row);
  row.layout = to_string(best->layout);
  row.fits = best->fits();
  for (size_t i = 0; i < r.searched.size(); ++i) row.searched += (i ? ", " : "") + r.searched[i];
  return row;
}

}  // namespace

Result<ValidationReport> validate_runs(const std::vector<PublishedRun>& runs,
                                       const std::string& repo_root, int threads,
                                       ProfileSwaps profile_swaps,
                                       const ProfileSearchPath& search) {
  ValidationReport report;
  std::map<std::string, std::vector<double>> groups;
  std::vector<double> all;
  for (const PublishedRun& r : runs) {
    Result<ValidationRow> row = predict(r, repo_root, threads, profile_swaps, search);
    if (!row) return row.errors();
    report.rows.push_back(row.value());
    groups[r.source].push_back(row->relative_error);
    if (!r.table.empty()) groups[r.source + " " + r.table].push_back(row->relative_error);
    all.push_back(row->relative_error);
  }
  if (auto unused = profile_swaps.unused()) return *unused;
  for (const auto& [name, errors] : groups)
    report.summaries.push_back(summarize_errors(name, errors));
  report.summaries.push_back(summarize_errors("all", all));
  return report;
}

}  // namespace meshplan
