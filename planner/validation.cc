#include "planner/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/cluster_spec.h"
#include "core/yaml_node.h"
#include "planner/model_flops_eq3.h"
#include "planner/profile_defaults.h"

namespace meshplan {
namespace {

ModelSpec read_run_model(const YamlNode& n, const std::string& id) {
  n.expect_only_keys({"layers", "hidden", "heads", "vocab", "ffn_hidden", "mlp", "seq_len"});
  ModelSpec m;
  m.name = id;
  m.layers = n.child("layers").as_int(1, 100000);
  m.hidden = n.child("hidden").as_int(1, 10'000'000);
  m.heads = n.child("heads").as_int(1, 100000);
  m.kv_heads = m.heads;
  m.head_dim = m.hidden / m.heads;
  m.vocab = n.get_int("vocab", 51200, 1, 100'000'000);  // Megatron-LM's padded GPT-2 vocabulary
  m.ffn_hidden = n.get_int("ffn_hidden", 4 * m.hidden, 1, 100'000'000);
  m.mlp = n.get_choice("mlp", "gelu", {"gelu", "swiglu"}) == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
  m.training.seq_len = n.get_int("seq_len", 2048, 1, 10'000'000);
  // GPT-3-style models of 2021-2022: LayerNorm, biases, learned positions, tied embeddings,
  // standard (non-flash) attention with fused softmax, dropout on.
  m.norm = NormKind::layernorm;
  m.bias = true;
  m.tied_embeddings = true;
  m.attention = AttentionKind::standard;
  m.dropout = true;
  m.position_embedding = PositionEmbedding::learned;
  m.max_positions = m.training.seq_len;
  return m;
}

void read_run_layout(const YamlNode& n, PublishedRun& r) {
  n.expect_only_keys({"tp", "pp", "dp", "cp", "ep", "zero", "recompute", "sp", "schedule", "vpp",
                      "mbs", "tp_times_pp"});
  LayoutFix& f = r.fix;
  auto opt_int = [&](const char* key, std::optional<int64_t>& field) {
    if (n.has(key)) field = n.child(key).as_int(1, 1'000'000);
    else r.searched.push_back(key);
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
  f.zero = static_cast<int>(n.get_int("zero", 0, 0, 3));
  opt_int("mbs", f.mbs);
  if (n.has("recompute")) {
    std::string rc = n.child("recompute").as_choice({"none", "selective", "full"});
    f.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective : Recompute::none;
  } else {
    r.searched.push_back("recompute");
  }
  // Sequence parallelism was published in 2022 (Korthikanti et al.), after these runs.
  f.sp = n.get_bool("sp", false);
  if (n.has("schedule")) {
    std::string s = n.child("schedule").as_choice({"gpipe", "1f1b", "interleaved", "zb-h1"});
    if (s == "interleaved") r.searched.push_back("vpp");  // the degree is not published
    else f.vpp = 1;
    if (s != "interleaved") f.schedule = s == "gpipe" ? Schedule::gpipe : Schedule::one_f_one_b;
  } else {
    r.searched.push_back("schedule");
  }
  if (n.has("vpp")) f.vpp = n.child("vpp").as_int(1, 1024);
}

PublishedRun read_run(const YamlNode& n) {
  n.expect_only_keys({"id", "source", "table", "cluster", "gpus", "model", "layout", "global_batch", "measured"});
  PublishedRun r;
  r.id = n.child("id").as_string();
  r.source = n.child("source").as_string();
  r.table = n.has("table") ? n.child("table").as_string() : "";
  r.cluster = n.child("cluster").as_string();
  r.gpus = n.child("gpus").as_int(1, 10'000'000);
  r.model = read_run_model(n.child("model"), r.id);
  read_run_layout(n.child("layout"), r);
  r.global_batch = n.child("global_batch").as_int(1, 1'000'000'000);
  r.model.training.global_batch = r.global_batch;
  YamlNode m = n.child("measured");
  m.expect_only_keys({"hardware_tflops_per_gpu", "model_tflops_per_gpu", "pct_of_peak", "mfu",
                      "iteration_s", "samples_per_s"});
  r.measured_hardware_tflops = m.child("hardware_tflops_per_gpu").as_double(1e-6, 1e9);
  r.measured_iteration_s = m.get_double("iteration_s", 0, 0, 1e9);
  return r;
}

}  // namespace

Result<std::vector<PublishedRun>> load_published_runs(const std::string& path) {
  return capture_input_errors([&] {
    YamlNode root = YamlNode::load_file(path);
    YamlNode runs = root.child("runs");
    std::vector<PublishedRun> out;
    for (size_t i = 0; i < runs.size(); ++i) {
      PublishedRun r = read_run(runs.element(i));
      // BLOOM-176B: ALiBi (no position table), bf16 without dropout, embedding LayerNorm.
      if (r.source == "bloom") {
        r.model.position_embedding = PositionEmbedding::alibi;
        r.model.dropout = false;
      }
      out.push_back(std::move(r));
    }
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

const std::map<std::string, std::string> kClusterTopology = {
    {"selene", "selene-a100.yaml"}, {"jean_zay_a100", "jean-zay-a100.yaml"}};

Result<ClusterSpec> cluster_for(const PublishedRun& r, const std::string& repo_root) {
  auto it = kClusterTopology.find(r.cluster);
  if (it == kClusterTopology.end()) {
    return Diagnostic{{"", 0, 0, ""}, "cluster", r.cluster, "no shipped topology for this cluster"};
  }
  Result<ClusterSpec> c = load_cluster(repo_root + "/topologies/" + it->second);
  if (!c) return c;
  ClusterSpec spec = c.value();
  spec.nodes = (r.gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
  spec.network.back().span = std::max(spec.network.back().span, spec.gpus());
  return spec;
}

// Best prediction for one run: search the unpublished fields, keep the fastest that fits.
Result<ValidationRow> predict(const PublishedRun& r, const std::string& repo_root, int threads) {
  Result<ClusterSpec> cluster = cluster_for(r, repo_root);
  if (!cluster) return cluster.errors();
  Result<CalibrationProfile> profile = resolve_profile(cluster.value(), "");
  if (!profile) return profile.errors();
  CostOptions options;
  // The software of these runs reduced gradients after the backward pass: Megatron-LM added
  // --overlap-grad-reduce in 2023 (v0.4); Megatron-DeepSpeed (BLOOM, 2022) likewise.
  options.overlap_grad_reduce = !(r.source == "narayanan2021" || r.source == "bloom");
  // Their pipeline engines waited for every send and receive (Megatron-LM added
  // --overlap-p2p-communication in 2023; DeepSpeed's PipelineEngine is synchronous).
  options.overlap_p2p = options.overlap_grad_reduce;
  options.pp_scatter_gather = r.source != "bloom";  // Megatron-DeepSpeed: DeepSpeed's PipelineEngine
  // Megatron-LM 2021 trained in fp16 and kept gradients (and their all-reduce) in the parameter
  // dtype unless --accumulate-allreduce-grads-in-fp32 was given (default off; forced on only for
  // bf16). The ZeRO-3 rows ran DeepSpeed, which keeps meshplan's default fp32 gradients.
  if (r.source == "narayanan2021" && r.fix.zero == 0) options.memory.grad_bytes_per_param = 2;
  CostModel model(r.model, cluster.value(), profile.value(), r.model.training, options);
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
    const Estimate* e = !s.ranked.empty() ? &s.ranked.front() : s.smallest ? &*s.smallest : nullptr;
    if (e && (!best || (e->fits() && !best->fits()) ||
              (e->fits() == best->fits() && e->step_time_s < best->step_time_s)))
      best = *e;
  }
  if (!best) return Diagnostic{{"", 0, 0, ""}, "layout", r.id, "no valid layout for this run"};
  ValidationRow row;
  row.id = r.id;
  row.source = r.source;
  row.table = r.table;
  row.measured = r.measured_hardware_tflops;
  // The sources count FLOPs with eq. 3 of Narayanan et al. 2021 (recompute included).
  row.predicted = eq3_flops_per_step(r.model, r.global_batch) / best->step_time_s /
                  static_cast<double>(r.gpus) / 1e12;
  row.relative_error = (row.predicted - row.measured) / row.measured;
  row.layout = to_string(best->layout);
  row.fits = best->fits();
  for (size_t i = 0; i < r.searched.size(); ++i) row.searched += (i ? ", " : "") + r.searched[i];
  return row;
}

}  // namespace

Result<ValidationReport> validate_runs(const std::vector<PublishedRun>& runs,
                                       const std::string& repo_root, int threads) {
  ValidationReport report;
  std::map<std::string, std::vector<double>> groups;
  std::vector<double> all;
  for (const PublishedRun& r : runs) {
    Result<ValidationRow> row = predict(r, repo_root, threads);
    if (!row) return row.errors();
    report.rows.push_back(row.value());
    groups[r.source].push_back(row->relative_error);
    if (!r.table.empty()) groups[r.source + " " + r.table].push_back(row->relative_error);
    all.push_back(row->relative_error);
  }
  for (const auto& [name, errors] : groups) report.summaries.push_back(summarize_errors(name, errors));
  report.summaries.push_back(summarize_errors("all", all));
  return report;
}

}  // namespace meshplan
