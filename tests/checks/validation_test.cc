#include "checks/validation.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/recompute_modules.h"

using namespace meshplan;

namespace {

ValidationReport report() {
  Result<std::vector<PublishedRun>> runs =
      load_published_runs(std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml");
  REQUIRE_MESSAGE(runs.ok(), (runs.ok() ? "" : format_diagnostics(runs.errors())));
  CHECK(runs->size() == 23);
  Result<ValidationReport> r = validate_runs(runs.value(), MESHPLAN_SOURCE_DIR, 2);
  REQUIRE(r.ok());
  return r.value();
}

const ErrorSummary& summary(const ValidationReport& r, const std::string& name) {
  for (const ErrorSummary& s : r.summaries)
    if (s.name == name) return s;
  FAIL("no summary named " << name);
  return r.summaries.front();
}

}  // namespace

TEST_CASE("validation: mean absolute error over every published run stays within 15%") {
  ValidationReport r = report();
  CHECK(summary(r, "all").runs == 23);
  CHECK(summary(r, "all").mean_abs <= 0.15);
}

TEST_CASE("validation: Megatron-LM Table 1 mean absolute error stays within 8%") {
  // The model reaches 7.6%: unpipelined rows within ±2.5%, pipelined rows predicted 9-13% fast.
  ValidationReport r = report();
  CHECK(summary(r, "narayanan2021 Table 1").runs == 10);
  CHECK(summary(r, "narayanan2021 Table 1").mean_abs <= 0.08);
}

TEST_CASE("error statistics: mean, median and max of absolute relative errors") {
  ErrorSummary s = summarize_errors("x", {0.1, -0.3, 0.2, -0.05});
  CHECK(s.runs == 4);
  CHECK(s.mean_abs == doctest::Approx(0.1625));
  CHECK(s.median_abs == doctest::Approx(0.15));
  CHECK(s.max_abs == doctest::Approx(0.3));
}

namespace {

std::vector<PublishedRun> modern_runs() {
  Result<std::vector<PublishedRun>> runs =
      load_published_runs(std::string(MESHPLAN_TEST_DATA) + "/published_runs_modern.yaml");
  REQUIRE_MESSAGE(runs.ok(), (runs.ok() ? "" : format_diagnostics(runs.errors())));
  return runs.value();
}

const PublishedRun& run_named(const std::vector<PublishedRun>& runs, const std::string& id) {
  for (const PublishedRun& r : runs)
    if (r.id == id) return r;
  FAIL("no run " << id);
  return runs.front();
}

// Loads `text` from a temporary file (the loader reads files).
Result<std::vector<PublishedRun>> load_text(const std::string& text) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("meshplan-runs-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << text;
  Result<std::vector<PublishedRun>> r = load_published_runs(path);
  std::filesystem::remove(path);
  return r;
}

const char* kModernHeader =
    "frameworks:\n"
    "  src: {framework: nemo, notes: x}\n"
    "models:\n"
    "  m8b: {layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, vocab: 128256, "
    "mlp: swiglu, norm: rmsnorm}\n";

// One run of model m8b under kModernHeader, its layout {tp 1, pp 1, dp 8, zero 1, sp false}
// plus `layout_extra`, and `run_extra` (", key: value" pairs) added to the run.
std::string one_run(const std::string& layout_extra, const std::string& run_extra) {
  return std::string(kModernHeader) +
         "runs:\n  - {id: a, source: src, cluster: dgx_h100, gpus: 8, model: m8b, seq_len: 8192, "
         "layout: {tp: 1, pp: 1, dp: 8, zero: 1, sp: false" +
         layout_extra + "}, global_batch: 64, measured: {tokens_per_s_per_gpu: 100}" + run_extra +
         "}\n";
}

}  // namespace

TEST_CASE("a modern row: model by name, fp8, its source's framework, iteration_s") {
  std::vector<PublishedRun> runs = modern_runs();
  CHECK(runs.size() == 28);
  const PublishedRun& r = run_named(runs, "dgxc-llama31-8b-8-fp8");
  CHECK(r.source == "dgxc2501");
  CHECK(r.framework == "nemo");
  CHECK(r.cluster == "dgx_h100");
  CHECK(r.gpus == 8);
  CHECK(r.model.name == "llama31-8b");
  CHECK(r.model.layers == 32);
  CHECK(r.model.kv_heads == 8);
  CHECK(r.model.head_dim == 128);
  CHECK(r.model.mlp == MlpKind::swiglu);
  CHECK(r.model.norm == NormKind::rmsnorm);
  CHECK(r.model.attention == AttentionKind::flash);
  CHECK(!r.model.dropout);
  CHECK(r.model.training.seq_len == 8192);
  CHECK(r.model.training.global_batch == 128);
  CHECK(r.model.training.precision == Precision::fp8);
  CHECK(r.fix.cp == 2);
  CHECK(r.fix.dp == 4);
  CHECK(r.measured_iteration_s == doctest::Approx(9.67));
  CHECK(r.mfu_as_published == doctest::Approx(0.3963));
  CHECK(r.measured_hardware_tflops == 0);
  // Not published, so searched: ZeRO stage, recompute, sequence parallelism, schedule.
  CHECK(r.searched == std::vector<std::string>{"zero", "recompute", "sp", "schedule"});
  const PublishedRun& mpt = run_named(runs, "foundry-a100-mpt7b-8");
  CHECK(mpt.framework == "composer");
  CHECK(mpt.model.position_embedding == PositionEmbedding::alibi);
  CHECK(mpt.model.tied_embeddings);
  CHECK(mpt.fix.zero == 3);
  CHECK(mpt.measured_tokens_per_s_per_gpu == doctest::Approx(4641));
  const PublishedRun& mlm = run_named(runs, "mlm-1.7b-48");
  CHECK(mlm.framework == "megatron-core");
  CHECK(mlm.measured_model_tflops == doctest::Approx(408.8));
  CHECK(!mlm.fix.tp_overlap.has_value());  // tp = 1: no TP communication to overlap
  CHECK(run_named(runs, "mlm-7.1b-96").fix.tp_overlap == true);
}

TEST_CASE(
    "the 2021 rows name their frameworks: Megatron-LM 2021, DeepSpeed ZeRO-3, Megatron-DeepSpeed") {
  Result<std::vector<PublishedRun>> runs =
      load_published_runs(std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml");
  REQUIRE(runs.ok());
  CHECK(run_named(runs.value(), "narayanan21-t1-1.7b").framework == "megatron-2021");
  CHECK(run_named(runs.value(), "narayanan21-t2-zero3-175b-384").framework == "deepspeed-2021");
  CHECK(run_named(runs.value(), "narayanan21-t2-ptdp-530b-560").framework == "megatron-2021");
  const PublishedRun& bloom = run_named(runs.value(), "bloom-176b-final");
  CHECK(bloom.framework == "megatron-deepspeed");
  CHECK(bloom.model.position_embedding == PositionEmbedding::alibi);
  CHECK(!bloom.model.dropout);
  CHECK(run_named(runs.value(), "narayanan21-t1-1.7b").model.dropout);
}

TEST_CASE("a row's framework overrides its source's, unknown names get 'did you mean'") {
  Result<std::vector<PublishedRun>> own = load_text(one_run("", ", framework: fsdp2"));
  REQUIRE_MESSAGE(own.ok(), (own.ok() ? "" : format_diagnostics(own.errors())));
  CHECK(own->front().framework == "fsdp2");
  Result<std::vector<PublishedRun>> inherited = load_text(one_run("", ""));
  REQUIRE(inherited.ok());
  CHECK(inherited->front().framework == "nemo");
  CHECK(inherited->front().searched == std::vector<std::string>{"mbs", "recompute", "schedule"});

  Result<std::vector<PublishedRun>> typo = load_text(one_run("", ", framework: fsdp"));
  REQUIRE(!typo.ok());
  CHECK(typo.errors().front().field == "runs[0].framework");
  CHECK(
      typo.errors().front().rule ==
      "must be one of megatron-core|nemo|megatron-2021|deepspeed|deepspeed-2021|megatron-deepspeed|"
      "fsdp2|torchtitan|composer (did you mean 'fsdp2'?)");

  std::string unknown_model = one_run("", "");
  unknown_model.replace(unknown_model.find("model: m8b"), 10, "model: m8");
  Result<std::vector<PublishedRun>> bad = load_text(unknown_model);
  REQUIRE(!bad.ok());
  CHECK(bad.errors().front().rule ==
        "names no model of the file's `models:` map (did you mean 'm8b'?)");
}

TEST_CASE("a row states a gradient dtype its configuration set, a wrong one is refused") {
  const std::string fixed = ", mbs: 1, recompute: none, schedule: 1f1b";
  Result<std::vector<PublishedRun>> bf16 = load_text(one_run(fixed, ", grad_reduce_dtype: bf16"));
  REQUIRE_MESSAGE(bf16.ok(), (bf16.ok() ? "" : format_diagnostics(bf16.errors())));
  CHECK(bf16->front().grad_reduce_dtype == "bf16");
  Result<std::vector<PublishedRun>> preset = load_text(one_run(fixed, ""));
  REQUIRE(preset.ok());
  CHECK(preset->front().grad_reduce_dtype.empty());
  // Half the gradient bytes to reduce: the same layout, a faster step.
  Result<ValidationReport> a = validate_runs(preset.value(), MESHPLAN_SOURCE_DIR, 1);
  Result<ValidationReport> b = validate_runs(bf16.value(), MESHPLAN_SOURCE_DIR, 1);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->rows.front().layout == b->rows.front().layout);
  CHECK(b->rows.front().predicted > a->rows.front().predicted);

  Result<std::vector<PublishedRun>> typo = load_text(one_run(fixed, ", grad_reduce_dtype: bf8"));
  REQUIRE(!typo.ok());
  CHECK(typo.errors().front().field == "runs[0].grad_reduce_dtype");
  CHECK(typo.errors().front().value == "bf8");
}

TEST_CASE("a row states FP8 parameters its configuration set, a non-boolean is refused") {
  const std::string fixed = ", mbs: 1, recompute: none, schedule: 1f1b";
  Result<std::vector<PublishedRun>> fp8 = load_text(one_run(fixed, ", fp8_params: true"));
  REQUIRE_MESSAGE(fp8.ok(), (fp8.ok() ? "" : format_diagnostics(fp8.errors())));
  CHECK(fp8->front().fp8_params);
  Result<std::vector<PublishedRun>> preset = load_text(one_run(fixed, ""));
  REQUIRE(preset.ok());
  CHECK_FALSE(preset->front().fp8_params);
  Result<std::vector<PublishedRun>> typo = load_text(one_run(fixed, ", fp8_params: yes please"));
  REQUIRE(!typo.ok());
  CHECK(typo.errors().front().field == "runs[0].fp8_params");
}

TEST_CASE("the modern development set: every row compares its source's metric (temporary bound)") {
  Result<ValidationReport> r = validate_runs(modern_runs(), MESHPLAN_SOURCE_DIR, 2);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  CHECK(summary(r.value(), "all").runs == 28);
  CHECK(summary(r.value(), "torchtitan-h200").runs == 2);
  CHECK(summary(r.value(), "mbridge-h100").runs == 2);
  CHECK(summary(r.value(), "mlm-readme").runs == 9);
  CHECK(summary(r.value(), "foundry").runs == 10);
  CHECK(summary(r.value(), "dgxc2501").runs == 5);
  for (const ValidationRow& row : r->rows) {
    CAPTURE(row.id);
    if (row.source == "dgxc2501") CHECK(row.metric == kMetricStepTime);
    if (row.source == "foundry") CHECK(row.metric == kMetricTokens);
    if (row.source == "mlm-readme") CHECK(row.metric == kMetricModelTflops);
    if (row.source == "torchtitan-h200") CHECK(row.metric == kMetricTokens);
    if (row.source == "mbridge-h100") CHECK(row.metric == kMetricTokens);
  }
  // TEMPORARY, as in .ci/run: loose until the cost-model physics of issue 11 lands (38.5% today).
  CHECK(summary(r.value(), "all").mean_abs <= 0.60);
}

TEST_CASE("MoE rows: a named model takes the model file's keys (moe, window, qk_norm, sinks)") {
  Result<std::vector<PublishedRun>> runs =
      load_published_runs(std::string(MESHPLAN_TEST_DATA) + "/published_runs_moe.yaml");
  REQUIRE_MESSAGE(runs.ok(), (runs.ok() ? "" : format_diagnostics(runs.errors())));
  CHECK(runs.value().size() == 15);
  const PublishedRun& oss = run_named(runs.value(), "mbridge-260401-gpt-oss-120b-64-bf16");
  CHECK(oss.framework == "megatron-core");
  REQUIRE(oss.model.moe.has_value());
  CHECK(oss.model.moe->experts == 128);
  CHECK(oss.model.moe->top_k == 4);
  REQUIRE(oss.model.window.has_value());
  CHECK(oss.model.window->tokens == 128);
  CHECK(oss.model.attention_sinks);
  CHECK(oss.model.bias);
  CHECK(oss.fix.ep == 8);
  CHECK(oss.fix.vpp == 1);
  CHECK(oss.fix.ep_overlap == false);
  CHECK(oss.fix.dispatch == Dispatch::alltoall);
  CHECK(oss.model.training.seq_len == 4096);
  CHECK(oss.measured_tokens_per_s_per_gpu == doctest::Approx(5824));
  const PublishedRun& qwen = run_named(runs.value(), "mbridge-2606-qwen3-30b-a3b-16-fp8");
  CHECK(qwen.model.qk_norm == QkNorm::per_head);
  CHECK(qwen.model.moe->expert_ffn_hidden == 768);
  CHECK(qwen.model.training.precision == Precision::fp8);
  CHECK(qwen.fix.ep == 16);
  CHECK(qwen.fix.dispatch == Dispatch::deepep);
  // The recipe's layout beyond the table's columns: experts whole on each rank (etp 1, EP over
  // the TP ranks), TP communication not overlapped, dispatch overlapped.
  const PublishedRun& big = run_named(runs.value(), "mbridge-260401-qwen3-235b-a22b-256-fp8");
  CHECK(big.model.layers == 94);
  CHECK(big.fix.etp == 1);
  CHECK(big.fix.ep == 32);
  CHECK(big.fix.tp == 2);
  CHECK(big.fix.tp_overlap == false);
  CHECK(big.fix.ep_overlap == true);
  CHECK(big.fix.sp == true);
  // The model zoo's rows: a recompute published module by module, its step time.
  const PublishedRun& zoo = run_named(runs.value(), "modelzoo-qwen3-235b-256-bf16-ep32");
  CHECK(zoo.source == "moe-modelzoo");
  CHECK(zoo.fix.recompute == Recompute::selective);
  CHECK(zoo.fix.recompute_modules == parse_recompute_modules("layernorm+moe_act"));
  CHECK(zoo.fix.zero == 1);
  CHECK(zoo.measured_iteration_s == doctest::Approx(19.7));
  // The A2A row: 96 chunks for 94 layers, the embedding and the loss each alone in one.
  const PublishedRun& deep = run_named(runs.value(), "modelzoo-qwen3-235b-256-bf16-a2a-pp32");
  CHECK(deep.fix.pp == 32);
  CHECK(deep.fix.vpp == 3);
  CHECK(deep.fix.dispatch == Dispatch::alltoall);
  CHECK(deep.measured_iteration_s == doctest::Approx(24.2));
  // Megatron-Bridge's guides: one layout under three dispatch settings, BF16 gradients.
  const PublishedRun& a2a = run_named(runs.value(), "mbridge-docs-qwen3-30b-a3b-16-bf16-alltoall");
  const PublishedRun& hybrid =
      run_named(runs.value(), "mbridge-docs-qwen3-30b-a3b-16-bf16-hybridep-overlap");
  CHECK(a2a.source == "mbridge-docs");
  CHECK(a2a.fix.dispatch == Dispatch::alltoall);
  CHECK(a2a.fix.ep_overlap == false);
  CHECK(hybrid.fix.dispatch == Dispatch::deepep);
  CHECK(hybrid.fix.ep_overlap == true);
  CHECK(hybrid.model.training.precision == Precision::bf16);
  CHECK(hybrid.measured_iteration_s == doctest::Approx(20.147));
  // The model zoo's long-context table: Megatron-LM's causal count, ring CP.
  const PublishedRun& lc = run_named(runs.value(), "modelzoo-qwen3-235b-256-bf16-128k");
  CHECK(lc.model_flops == MegatronFlops::causal);
  CHECK(lc.measured_model_tflops == doctest::Approx(389));
  CHECK(lc.fix.cp == 8);
  CHECK(lc.fix.cp_kind == CpKind::ring);
  CHECK(lc.model.training.seq_len == 131072);
  CHECK(lc.fix.recompute_modules == parse_recompute_modules("layernorm+moe"));
  CHECK(zoo.model_flops == MegatronFlops::r0_8);
  // A key no model file has is refused by name, as in a model file.
  Result<std::vector<PublishedRun>> bad = load_text(
      "models:\n  m: {layers: 2, hidden: 64, heads: 4, vocab: 100, expert_count: 8}\n"
      "runs:\n  - {id: a, source: s, cluster: dgx_h100, gpus: 8, model: m, seq_len: 512, "
      "layout: {dp: 8}, global_batch: 8, measured: {tokens_per_s_per_gpu: 1}}\n");
  REQUIRE(!bad.ok());
  CHECK(format_diagnostics(bad.errors())
            .find("error: field 'models.m.expert_count': unknown field") != std::string::npos);
}

TEST_CASE("a run's layout takes the recipe's MoE settings: etp, ep_overlap, dispatch by name") {
  const std::string head =
      "models:\n  m: {layers: 2, hidden: 64, heads: 4, vocab: 100, moe: {experts: 8, top_k: 2, "
      "expert_ffn_hidden: 64}}\nruns:\n  - {id: a, source: s, cluster: dgx_h100, gpus: 8, "
      "model: m, seq_len: 512, layout: {dp: 8, ep: 8, ";
  const std::string tail = "}, global_batch: 8, measured: {tokens_per_s_per_gpu: 1}}\n";
  Result<std::vector<PublishedRun>> ok =
      load_text(head + "etp: 1, ep_overlap: true, dispatch: allgather" + tail);
  REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? "" : format_diagnostics(ok.errors())));
  CHECK(ok.value().front().fix.etp == 1);
  CHECK(ok.value().front().fix.ep_overlap == true);
  CHECK(ok.value().front().fix.dispatch == Dispatch::allgather);
  Result<std::vector<PublishedRun>> bad = load_text(head + "dispatch: deep" + tail);
  REQUIRE(!bad.ok());
  CHECK(bad.errors().front().field == "runs[0].layout.dispatch");
  CHECK(bad.errors().front().rule ==
        "must be one of alltoall|allgather|deepep (did you mean 'deepep'?)");
}

TEST_CASE("a run names which of Megatron-LM's FLOP counts its model TFLOP/s use") {
  const std::string head =
      "models:\n  m: {layers: 2, hidden: 64, heads: 4, vocab: 100}\nruns:\n  - {id: a, source: s, "
      "cluster: dgx_h100, gpus: 8, model: m, seq_len: 512, layout: {dp: 8}, global_batch: 8, "
      "measured: {";
  Result<std::vector<PublishedRun>> causal =
      load_text(head + "model_tflops_per_gpu: 300, model_flops: megatron-causal}}\n");
  REQUIRE_MESSAGE(causal.ok(), (causal.ok() ? "" : format_diagnostics(causal.errors())));
  CHECK(causal.value().front().model_flops == MegatronFlops::causal);
  Result<std::vector<PublishedRun>> plain = load_text(head + "model_tflops_per_gpu: 300}}\n");
  REQUIRE(plain.ok());
  CHECK(plain.value().front().model_flops == MegatronFlops::r0_8);
  Result<std::vector<PublishedRun>> unknown =
      load_text(head + "model_tflops_per_gpu: 300, model_flops: causal}}\n");
  REQUIRE(!unknown.ok());
  CHECK(unknown.errors().front().field == "runs[0].measured.model_flops");
  CHECK(unknown.errors().front().rule == "must be one of megatron-r0.8|megatron-causal");
  // The same layout predicted under both counts: one step time, the counts' ratio between them.
  Result<std::vector<PublishedRun>> both = load_text(
      head + "model_tflops_per_gpu: 300}}\n" +
      "  - {id: b, source: s, cluster: dgx_h100, gpus: 8, model: m, seq_len: 512, layout: {dp: 8}, "
      "global_batch: 8, measured: {model_tflops_per_gpu: 300, model_flops: megatron-causal}}\n");
  REQUIRE(both.ok());
  Result<ValidationReport> rows = validate_runs(both.value(), MESHPLAN_SOURCE_DIR, 1);
  REQUIRE_MESSAGE(rows.ok(), (rows.ok() ? "" : format_diagnostics(rows.errors())));
  REQUIRE(rows->rows.size() == 2);
  CHECK(rows->rows[0].metric == kMetricModelTflops);
  CHECK(rows->rows[1].metric == kMetricModelTflopsCausal);
  const ModelSpec& m = both.value().front().model;
  CHECK(rows->rows[1].predicted / rows->rows[0].predicted ==
        doctest::Approx(megatron_flops_per_step(m, 8, 1, MegatronFlops::causal) /
                        megatron_flops_per_step(m, 8, 1))
            .epsilon(1e-12));
  Result<std::vector<PublishedRun>> alone =
      load_text(head + "iteration_s: 2, model_flops: megatron-causal}}\n");
  REQUIRE(!alone.ok());
  CHECK(alone.errors().front().field == "runs[0].measured.model_flops");
  CHECK(alone.errors().front().rule == "applies to model_tflops_per_gpu only");
}
