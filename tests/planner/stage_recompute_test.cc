// Recompute counts per pipeline stage (Layout::recompute_stage_layers, issue 12): memory, time,
// FLOPs and the simulator's chunks take each stage's own count; the search gives each stage the
// fewest layers that fit; no launcher runs them.
#include <doctest/doctest.h>

#include <string>

#include "launchers/launcher_export.h"
#include "planner/cost_model.h"
#include "planner/flop_count.h"
#include "planner/layout_search.h"
#include "planner/memory_model.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

const TrainingSpec kTraining{8192, 1024, Precision::bf16};

// Llama 3 70B (80 layers) on 64 GPUs as tp8 pp4 dp2 cp1: 20 layers per stage, 1F1B with
// 1024 / 2 = 512 micro-batches, so stage s holds 4 − s of them in flight.
Layout tp8_pp4(const std::string& counts) {
  Layout l = parse_layout("tp=8,pp=4,dp=2,zero=1,mbs=1,recompute_layers=" + counts).value();
  REQUIRE(check_layout(l, shipped_model("llama3-70b"), 64, kTraining).empty());
  return l;
}

// The search on tp8 pp4 1F1B with 4 sequences per micro-batch, for `launcher` (none: any).
SearchResult search_mbs4(CostModel& cost, SearchOptions::LauncherCheck launcher = {}) {
  SearchOptions o;
  o.threads = 1;
  o.top_k = 50;
  o.fix = parse_layout_fix("tp=8,pp=4,cp=1,vpp=1,zero=1,mbs=4,schedule=1f1b").value();
  o.launcher = std::move(launcher);
  return search_layouts(cost, cost.cluster().gpus(), o);
}

}  // namespace

TEST_CASE("each stage stores the activations of its own recompute count: 6:4:2:0 by hand") {
  const ModelSpec m = shipped_model("llama3-70b");
  const Layout l = tp8_pp4("6:4:2:0");
  CHECK(l.recompute_layers == 6);
  const GpuSpec gpu = two_level_cluster(8).gpu;
  const LayerActivations a = layer_activations(m, 0, activation_shape(l, kTraining.seq_len));
  const MemoryEstimate est = estimate_memory(m, gpu, l, kTraining);
  const int64_t counts[] = {6, 4, 2, 0};
  for (int64_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    const int64_t c = counts[s];
    const double in_flight = static_cast<double>(4 - s);
    // c layers keep only their input; the other 20 − c keep everything; a recomputed layer's
    // activations exist again while it is differentiated.
    const double expected = in_flight * (static_cast<double>(c) * a.layer_input +
                                         static_cast<double>(20 - c) * a.no_recompute()) +
                            (c > 0 ? a.no_recompute() : 0.0);
    CHECK(est.stages[static_cast<size_t>(s)].activations_bytes == doctest::Approx(expected));
  }
}

TEST_CASE("each stage recomputes its own count in time, FLOPs and the simulator's chunks") {
  const ModelSpec m = shipped_model("llama3-70b");
  CostModel cost(m, two_level_cluster(8), CalibrationProfile{}, kTraining);
  const Estimate e = cost.evaluate(tp8_pp4("6:4:2:0"));
  const Estimate uniform = cost.evaluate(tp8_pp4("6"));
  REQUIRE(e.stages.size() == 4);
  const double per_layer = uniform.stages[0].recompute_s / 6;
  CHECK(e.stages[0].recompute_s == doctest::Approx(6 * per_layer));
  CHECK(e.stages[1].recompute_s == doctest::Approx(4 * per_layer));
  CHECK(e.stages[2].recompute_s == doctest::Approx(2 * per_layer));
  CHECK(e.stages[3].recompute_s == 0);
  // Recomputed FLOPs: 6 + 4 + 2 + 0 = 12 layers against the uniform 4 × 6 = 24.
  CHECK(e.hardware_flops - e.model_flops ==
        doctest::Approx(0.5 * (uniform.hardware_flops - uniform.model_flops)));
  const StepFlops counted = step_flops(m, tp8_pp4("6:4:2:0"), kTraining);
  CHECK(counted.hardware - counted.model ==
        doctest::Approx(e.hardware_flops - e.model_flops).epsilon(1e-9));
  // Stage 0 sets the 1F1B steady state either way; the later stages' fill and drain are shorter.
  CHECK(e.step_time_s < uniform.step_time_s);
  const sim::PipelineProblem p = cost.pipeline_problem(tp8_pp4("6:4:2:0"));
  REQUIRE(p.chunks.size() == 4);
  CHECK(p.chunks[1].recompute_s == doctest::Approx(p.chunks[0].recompute_s * 4 / 6));
  CHECK(p.chunks[2].recompute_s == doctest::Approx(p.chunks[0].recompute_s * 2 / 6));
  CHECK(p.chunks[3].recompute_s == 0);
}

TEST_CASE("least_recompute_by_stage: each count fits its stage and one layer fewer does not") {
  const ModelSpec m = shipped_model("llama3-70b");
  const ClusterSpec c = two_level_cluster(8);
  CostModel cost(m, c, CalibrationProfile{}, kTraining);
  // mbs 4: stage 0 cannot hold its 4 micro-batches without recompute, stage 3 its 1 can.
  Layout l = parse_layout("tp=8,pp=4,dp=2,zero=1,mbs=4").value();
  REQUIRE(check_layout(l, m, 64, kTraining).empty());
  std::vector<int64_t> counts;
  double peak = 0;
  REQUIRE(cost.least_recompute_by_stage(l, cost.shape_ref(l), 1, counts, peak));
  REQUIRE(counts.size() == 4);
  CHECK(counts[0] > 0);
  CHECK(counts[3] == 0);
  CHECK(counts[0] >= counts[1]);
  CHECK(counts[1] >= counts[2]);
  const double hbm = static_cast<double>(c.gpu.hbm_bytes);
  Layout fitted = l;
  fitted.recompute_stage_layers = counts;
  CHECK(peak == cost.peak_stage_memory(fitted).total_bytes());  // bit for bit
  for (size_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    Layout at = l;
    at.recompute_stage_layers = counts;
    CHECK(estimate_memory(m, c.gpu, at, kTraining).stages[s].total_bytes() <= hbm);
    if (counts[s] == 0) continue;
    std::vector<int64_t> fewer = counts;
    fewer[s] -= 1;
    at.recompute_stage_layers = fewer;
    CHECK(estimate_memory(m, c.gpu, at, kTraining).stages[s].total_bytes() > hbm);
  }
  // Nothing fits a GPU a tenth the size: some stage cannot hold even its layer inputs.
  ClusterSpec tiny = c;
  tiny.gpu.hbm_bytes /= 10;
  CostModel small(m, tiny, CalibrationProfile{}, kTraining);
  CHECK_FALSE(small.least_recompute_by_stage(l, small.shape_ref(l), 1, counts, peak));
}

TEST_CASE("the search ranks per-stage counts above the uniform count they improve on") {
  const ModelSpec m = shipped_model("llama3-70b");
  const ClusterSpec c = two_level_cluster(8);
  CostModel cost(m, c, CalibrationProfile{}, kTraining);
  const SearchResult r = search_mbs4(cost);
  REQUIRE(!r.ranked.empty());
  const Layout& best = r.ranked[0].layout;
  CAPTURE(to_string(best));
  REQUIRE(best.recompute_stage_layers.size() == 4);
  // The fewest counts that fit, as least_recompute_by_stage found them.
  std::vector<int64_t> counts;
  double peak = 0;
  Layout base = best;
  base.recompute_stage_layers.clear();
  base.recompute_layers = 0;
  REQUIRE(cost.least_recompute_by_stage(base, cost.shape_ref(base), 1, counts, peak));
  CHECK(peak == r.ranked[0].peak_bytes);
  CHECK(best.recompute_stage_layers.to_vector() == counts);
  // Every uniform count that fits is slower.
  for (const Estimate& e : r.ranked) {
    if (!e.layout.recompute_stage_layers.empty()) continue;
    CHECK(e.step_time_s > r.ranked[0].step_time_s);
  }
}

TEST_CASE("no launcher runs per-stage counts: each refuses them, a plan for one never makes them") {
  const ModelSpec m = shipped_model("llama3-70b");
  const Layout l = tp8_pp4("6:4:2:0");
  for (const std::string& name : launcher_names()) {
    CAPTURE(name);
    Result<std::string> out = export_launcher(*parse_launcher(name), m, kTraining, l);
    REQUIRE_FALSE(out.ok());
    CHECK(out.errors()[0].field == "recompute_layers");
    CHECK(out.errors()[0].value == "6:4:2:0");
  }
  CHECK(export_launcher(Launcher::megatron, m, kTraining, l).errors()[0].rule ==
        "Megatron-LM cannot express this: it recomputes the same number of layers on every "
        "pipeline stage (only NeMo 1's legacy, non-Megatron-Core model lowers the count per "
        "stage: activations_checkpoint_layers_per_pipeline); use one count");
  CostModel cost(m, two_level_cluster(8), CalibrationProfile{}, kTraining);
  const SearchResult r = search_mbs4(
      cost, {"Megatron-LM",
             [](const ModelSpec& model, const TrainingSpec& training, const Layout& layout) {
               return launcher_refuses(Launcher::megatron, model, training, layout);
             },
             {}});
  REQUIRE(!r.ranked.empty());
  for (const Estimate& e : r.ranked) CHECK(e.layout.recompute_stage_layers.empty());
  CHECK(r.rejected.count("Megatron-LM cannot run it: recompute_layers") == 0);
}

TEST_CASE("--fix takes one recompute count: a per-stage list is refused by name") {
  Result<LayoutFix> fix = parse_layout_fix("pp=4,recompute_layers=3:2:1:0");
  REQUIRE_FALSE(fix.ok());
  CHECK(fix.errors()[0].field == "recompute_layers");
  CHECK(fix.errors()[0].value == "3:2:1:0");
  CHECK(fix.errors()[0].rule ==
        "takes one count in a search, which chooses per-stage counts itself (give a per-stage "
        "list to estimate --layout)");
}
