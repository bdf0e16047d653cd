#include "planner/cost_model.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "planner/framework_preset.h"
#include "planner/profile_lookup.h"
#include "planner/simulated_plan.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

struct Case {
  ModelSpec model;
  ClusterSpec cluster = two_level_cluster(1);
  TrainingSpec training{2048, 64, Precision::bf16};
};

Estimate estimate(CostModel& m, const Case& c, const std::string& text, Layout* out = nullptr) {
  Layout l = parse_layout(text).value();
  std::vector<Diagnostic> errors = check_layout(l, c.model, c.cluster.gpus(), c.training);
  REQUIRE_MESSAGE(errors.empty(), format_diagnostics(errors));
  if (out) *out = l;
  return m.evaluate(l);
}

double simulated_step(CostModel& m, const Layout& l) {
  Result<sim::PipelineSimulation> s = simulate_layout(m, l);
  REQUIRE(s.ok());
  return s->result.step_s;
}

}  // namespace

TEST_CASE("uniform stages: simulated and analytic step times agree within 2%") {
  Case c;
  c.model = gpt_like(32, 4096, 32, 128, 2048);  // tiny vocabulary: the LM head is negligible
  for (const char* text :
       {"tp=2,pp=4,dp=1,zero=0,schedule=1f1b", "tp=2,pp=4,dp=1,zero=0,schedule=gpipe",
        "tp=2,pp=4,dp=1,zero=0,vpp=2", "tp=2,pp=4,dp=1,zero=0,schedule=zb-h1"}) {
    CAPTURE(text);
    CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
    Layout l;
    Estimate e = estimate(m, c, text, &l);
    const double sim = simulated_step(m, l);
    CHECK(std::fabs(sim - e.step_time_s) / e.step_time_s < 0.02);
  }
}

TEST_CASE("a heavy last stage: both models charge its excess once per micro-batch") {
  // A 256K vocabulary makes the last stage's LM head a large share of its time. Analytic 1F1B:
  // (m − 1)·t_max + Σ t_i; the simulator replays the same per-stage times, so the two agree
  // within the p2p and optimizer terms, and both exceed the uniform estimate m·t_mean + ….
  Case c;
  c.model = gpt_like(16, 2048, 16, 256000, 2048);
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
  Layout l;
  Estimate e = estimate(m, c, "tp=2,pp=4,dp=1,zero=0,schedule=1f1b", &l);
  const double t_last = e.stages.back().per_micro_batch_s();
  const double t_first = e.stages.front().per_micro_batch_s();
  CHECK(t_last > 1.2 * t_first);
  const double sim = simulated_step(m, l);
  CHECK(std::fabs(sim - e.step_time_s) / e.step_time_s < 0.02);
  double mean = 0;
  for (const StageTiming& s : e.stages) mean += s.per_micro_batch_s() / 4;
  CHECK(e.step_time_s > (64 + 3) * mean);
}

// Megatron-LM's --account-for-embedding/loss-in-pipeline-split: 30 layers in 32 chunks (pp 4,
// vpp 8) put the embedding alone in the first chunk and the loss alone in the last, so the first
// and last stages hold 7 layers and the middle ones 8; the empty chunks still take their slots
// in the interleaved schedule, which the simulator replays.
TEST_CASE(
    "chunks of no layer: the first and last stages hold one layer fewer, the simulator agrees") {
  Case c;
  c.model = gpt_like(30, 4096, 32, 128, 2048);  // tiny vocabulary: the LM head is negligible
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
  Layout l;
  const Estimate e = estimate(m, c, "tp=2,pp=4,dp=1,zero=0,vpp=8,uneven=true", &l);
  REQUIRE(e.stages.size() == 4);
  const double per_layer = e.stages[1].forward_s / 8;
  CHECK(e.stages[2].forward_s == doctest::Approx(8 * per_layer).epsilon(1e-9));
  CHECK(e.stages[0].forward_s == doctest::Approx(7 * per_layer).epsilon(0.01));
  CHECK(e.stages[3].forward_s == doctest::Approx(7 * per_layer).epsilon(0.01));
  CHECK(std::fabs(simulated_step(m, l) - e.step_time_s) / e.step_time_s < 0.02);
  // 36 chunks would leave middle chunks empty: beyond the layers + 2.
  Layout over = parse_layout("tp=2,pp=4,dp=1,zero=0,vpp=9,uneven=true").value();
  const std::vector<Diagnostic> refused = check_layout(over, c.model, 8, c.training);
  REQUIRE(refused.size() == 1);
  CHECK(refused.front().rule ==
        "pp·vpp = 36 must not exceed layers + 2 (32: the embedding and the loss may each fill a "
        "chunk of their own)");
}

// The LM head is not a Transformer Engine module in Megatron-Core: an FP8 job runs it in BF16
// (LayerCostContext::bf16_gemm), so what the last stage adds to an equal first stage is the same
// for an FP8 and a BF16 job, while their layers' GEMMs differ.
TEST_CASE("an FP8 job's last stage adds the LM head at BF16, as a BF16 job's does") {
  Case c;
  c.model = gpt_like(16, 2048, 16, 256000, 2048);
  CostModel bf16(c.model, c.cluster, CalibrationProfile{}, c.training);
  const Estimate b = estimate(bf16, c, "tp=1,pp=2,dp=4,zero=0,schedule=1f1b");
  Case f = c;
  f.training.precision = Precision::fp8;
  CostModel fp8(f.model, f.cluster, CalibrationProfile{}, f.training);
  const Estimate e = estimate(fp8, f, "tp=1,pp=2,dp=4,zero=0,schedule=1f1b");
  REQUIRE(e.stages.front().forward_s < 0.8 * b.stages.front().forward_s);
  CHECK(e.stages.back().forward_s - e.stages.front().forward_s ==
        doctest::Approx(b.stages.back().forward_s - b.stages.front().forward_s).epsilon(1e-9));
  CHECK(e.stages.back().backward_s - e.stages.front().backward_s ==
        doctest::Approx(b.stages.back().backward_s - b.stages.front().backward_s).epsilon(1e-9));
}

TEST_CASE("pipeline bubble fraction follows (p−1)/(m+p−1) for uniform 1F1B and /v interleaved") {
  Case c;
  c.model = gpt_like(32, 4096, 32, 128, 2048);
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
  Estimate e = estimate(m, c, "tp=2,pp=4,dp=1,zero=0,schedule=1f1b");
  const double t = e.stages[1].per_micro_batch_s();
  // The middle stages are uniform; the bubble is (p − 1)·t up to the first/last-stage extras.
  CHECK(e.breakdown.bubble_s == doctest::Approx(3 * t).epsilon(0.01));
  Estimate v = estimate(m, c, "tp=2,pp=4,dp=1,zero=0,vpp=2");
  CHECK(v.breakdown.bubble_s == doctest::Approx(3 * t / 2).epsilon(0.01));
}

TEST_CASE("more recompute never lowers hardware FLOPs or memory headroom the wrong way") {
  Case c;
  c.model = shipped_model("llama3-8b");
  c.training = {8192, 64, Precision::bf16};
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
  Estimate none = estimate(m, c, "tp=8,dp=1,zero=1,recompute=none");
  Estimate sel = estimate(m, c, "tp=8,dp=1,zero=1,recompute=selective");
  Estimate full = estimate(m, c, "tp=8,dp=1,zero=1,recompute=full");
  CHECK(full.hardware_flops > sel.hardware_flops);
  CHECK(sel.hardware_flops > none.hardware_flops);
  CHECK(full.model_flops == none.model_flops);
  CHECK(full.peak_bytes < sel.peak_bytes);
  CHECK(sel.peak_bytes <= none.peak_bytes);
  CHECK(full.step_time_s > none.step_time_s);
}

TEST_CASE("ZeRO stages shrink model-state memory and add gradient-sync time") {
  Case c;
  c.model = shipped_model("llama3-8b");
  c.cluster = two_level_cluster(4);
  c.training = {8192, 64, Precision::bf16};
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
  double previous = 1e30;
  for (int zero = 0; zero <= 3; ++zero) {
    Estimate e = estimate(m, c, "tp=1,dp=32,recompute=full,zero=" + std::to_string(zero));
    CAPTURE(zero);
    CHECK(e.peak_bytes < previous);
    previous = e.peak_bytes;
  }
}

TEST_CASE(
    "overlap: compute-bound communication shows its slowdown of the compute, "
    "communication-bound shows the difference") {
  // 1 s of communication beside 4 s of compute at efficiency 0.7 with 0.1 s of HBM traffic:
  // (1 − 0.7)·1 + 0.1·1/1 = 0.4 s exposed.
  CHECK(exposed_after_overlap(1.0, 4.0, 0.7, 0.1) == doctest::Approx(0.4).epsilon(1e-12));
  // 4 s beside 1 s: the slowed compute (0.3·1 + 0.1·1/4 = 0.325 s lost) ends inside the
  // communication, which shows only its 3 s excess.
  CHECK(exposed_after_overlap(4.0, 1.0, 0.7, 0.1) == doctest::Approx(3.0).epsilon(1e-12));
  // 1.1 s beside 1 s: the excess (0.1 s) is less than the slowdown (0.3 + 0.1/1.1 s).
  CHECK(exposed_after_overlap(1.1, 1.0, 0.7, 0.1) ==
        doctest::Approx(0.3 + 0.1 / 1.1).epsilon(1e-12));
  CHECK(exposed_after_overlap(0.0, 1.0, 0.7, 0.0) == 0.0);
  CHECK(exposed_after_overlap(1.0, 0.0, 0.7, 0.1) == doctest::Approx(1.0).epsilon(1e-12));
}

// llama3-8b-shaped dense layers on 8 GPUs of one node under `framework`'s ZeRO-3 rules
// (reduce-scatter after every micro-batch, overlap_comm), no LM-head stage split: pp = 1. One
// layer's collectives: gather 2 bytes and reduce-scatter 4 bytes per parameter of one layer's
// share of the stage (the embedding and head are spread over the layers, as the model does),
// and the HBM traffic of the NCCL kernels (bytes per bus byte × bytes × 7/8 at the HBM rate).
struct Zero3Layers {
  Case c;
  CostOptions o;
  Estimate e;
  double layers = 0, gather = 0, reduce = 0, gather_hbm = 0, reduce_hbm = 0;
  double fwd = 0, bwd = 0;  // one layer's forward and backward (+ recompute) time
};

Zero3Layers zero3_layers(const std::string& framework, bool prefetch) {
  Zero3Layers z;
  z.c.model = shipped_model("llama3-8b");
  z.c.cluster = two_level_cluster(1);
  z.c.training = {4096, 16, Precision::bf16};
  apply_framework(find_framework(framework).value(), z.o);
  z.o.zero3_prefetch = prefetch;
  z.o.collective_rails = true;  // one node: the rails rule does not apply anyway
  CostModel m(z.c.model, z.c.cluster, CalibrationProfile{}, z.c.training, z.o);
  z.e = estimate(m, z.c, "tp=1,dp=8,mbs=1,zero=3,recompute=none");
  REQUIRE(z.e.stages.size() == 1);
  const StageTiming& st = z.e.stages[0];
  z.layers = static_cast<double>(z.c.model.layers);
  const double params = static_cast<double>(z.e.memory.stages[0].params) / z.layers;
  CollectiveModel net(CalibrationProfile{}, z.c.cluster);
  const GroupShape g = GroupShape::of(8, 1);
  z.gather = net.time_s(Collective::all_gather, g, 2 * params);
  z.reduce = net.time_s(Collective::reduce_scatter, g, 4 * params);
  const double hbm_rate =
      resolve_calibration(CalibrationProfile{}, z.c.cluster.gpu, Precision::bf16)
          .hbm_bytes_per_s.value;
  z.gather_hbm = 2 * (2 * params) * 7.0 / 8 / hbm_rate;
  z.reduce_hbm = 3 * (4 * params) * 7.0 / 8 / hbm_rate;
  z.fwd = st.forward_s / z.layers;
  z.bwd = (st.backward_s + st.recompute_s) / z.layers;
  return z;
}

TEST_CASE(
    "ZeRO-3 reducing every micro-batch: each layer's gather and reduce-scatter share one "
    "communicator and hide together behind the layer's backward") {
  const Zero3Layers z = zero3_layers("deepspeed", true);
  const double eta = z.o.dp_overlap_efficiency;
  const double per_micro_batch =
      z.gather + z.reduce +
      (z.layers - 1) *
          (exposed_after_overlap(z.gather, z.fwd, eta, z.gather_hbm) +
           exposed_after_overlap(z.gather + z.reduce, z.bwd, eta, z.gather_hbm + z.reduce_hbm));
  CHECK(z.e.breakdown.dp_s == doctest::Approx(2 * per_micro_batch).epsilon(1e-9));
}

TEST_CASE(
    "ZeRO-3 without prefetch (DeepSpeed of 2021): both gathers of every layer are exposed and "
    "only the reduce-scatter hides behind the layer's backward") {
  CostOptions preset;
  apply_framework(find_framework("deepspeed-2021").value(), preset);
  CHECK_FALSE(preset.zero3_prefetch);
  const Zero3Layers z = zero3_layers("deepspeed-2021", false);
  const double per_micro_batch =
      z.gather + z.reduce +
      (z.layers - 1) *
          (2 * z.gather +
           exposed_after_overlap(z.reduce, z.bwd, z.o.dp_overlap_efficiency, z.reduce_hbm));
  CHECK(z.e.breakdown.dp_s == doctest::Approx(2 * per_micro_batch).epsilon(1e-9));
  // The same job with prefetch hides the gathers behind compute: less than half of them shows.
  CHECK(zero3_layers("deepspeed-2021", true).e.breakdown.dp_s <
        z.e.breakdown.dp_s - (z.layers - 1) * z.gather);
}

TEST_CASE(
    "tied embeddings on different stages: the first and last stage all-reduce the word "
    "embedding's gradients after the backward") {
  Case c;
  c.model = gpt_like(8, 1024, 8, 50000, 2048);
  c.model.tied_embeddings = true;
  c.training = {2048, 8, Precision::bf16};
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training);
  // dp = 1: no data-parallel traffic, so what the stages sync is the embedding alone.
  Estimate e = estimate(m, c, "tp=2,pp=4,dp=1,zero=0,recompute=none");
  REQUIRE(e.stages.size() == 4);
  // 50,000 / 2 × 1,024 fp32 gradients (4 bytes) between ranks 3 pipeline strides (of tp = 2)
  // apart: one NVLink all-reduce of two ranks.
  CollectiveModel net(CalibrationProfile{}, c.cluster);
  const double expected =
      net.time_s(Collective::all_reduce, GroupShape::of(2, 6), 25000.0 * 1024 * 4);
  CHECK(expected > 0);
  CHECK(e.stages[0].dp_exposed_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(e.stages[3].dp_exposed_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(e.stages[1].dp_exposed_s == 0.0);
  CHECK(e.stages[2].dp_exposed_s == 0.0);
  // Untied: nothing to sync.
  c.model.tied_embeddings = false;
  CostModel untied(c.model, c.cluster, CalibrationProfile{}, c.training);
  CHECK(estimate(untied, c, "tp=2,pp=4,dp=1,zero=0,recompute=none").breakdown.dp_s == 0.0);
}

TEST_CASE(
    "hybrid sharding: states divide by the shard group, gradients reduce-scatter in it, "
    "all-reduce across replicas, weights all-gather in it") {
  Case c;
  c.model = shipped_model("llama3-8b");
  c.cluster = two_level_cluster(4);  // 32 GPUs, 8 per node
  c.training = {8192, 32, Precision::bf16};
  // Nothing overlapped, nothing on the pipeline: the DP time is the collectives' sum.
  CostOptions o;
  apply_framework(find_framework("megatron-2021").value(), o);
  CostModel m(c.model, c.cluster, CalibrationProfile{}, c.training, o);
  Layout hsdp, full;
  const Estimate h = estimate(m, c, "tp=1,dp=32,recompute=full,zero=1,shard=8", &hsdp);
  const Estimate f = estimate(m, c, "tp=1,dp=32,recompute=full,zero=1", &full);
  const MemoryEstimate hm = m.evaluate(hsdp, true).memory, fm = m.evaluate(full, true).memory;
  CHECK(hm.stages[0].optimizer_bytes == doctest::Approx(fm.stages[0].optimizer_bytes * 4));
  CHECK(hm.stages[0].grads_bytes == doctest::Approx(fm.stages[0].grads_bytes));
  const double params = static_cast<double>(stage_params(c.model, hsdp)[0].per_gpu());
  const CollectiveModel& net = m.collectives();
  const double grads = params * o.memory.grad_bytes_per_param;
  const double weights = params * o.memory.weight_bytes_per_param;
  const GroupShape node = GroupShape::of(8, 1), across = GroupShape::of(4, 8);
  const double expected = net.time_s(Collective::reduce_scatter, node, grads) +
                          net.time_s(Collective::all_reduce, across, grads / 8) +
                          net.time_s(Collective::all_gather, node, weights);
  CHECK(h.breakdown.dp_s == doctest::Approx(expected).epsilon(1e-9));
  const GroupShape all = GroupShape::of(32, 1);
  CHECK(f.breakdown.dp_s == doctest::Approx(net.time_s(Collective::reduce_scatter, all, grads) +
                                            net.time_s(Collective::all_gather, all, weights))
                                .epsilon(1e-9));
}

namespace {

// The memo tests' case: mixtral-8x7b on 32 GPUs (4 nodes of 8).
Case mixtral_on_32_gpus() {
  Case c;
  c.model = shipped_model("mixtral-8x7b");
  c.cluster = two_level_cluster(4);
  return c;
}

// The search's peak totals of a layout under every ZeRO stage (CostModel::peak_totals_by_zero).
std::array<StageTotals, 4> peaks_by_zero(CostModel& model, const std::string& text) {
  const Layout l = parse_layout(text).value();
  std::array<StageTotals, 4> peaks{};
  model.peak_totals_by_zero(l, model.shape_ref(l), {true, true, true, true}, peaks);
  return peaks;
}

// Two models of one case: `warm` asked about another layout first, `cold` not.
struct WarmAndCold {
  explicit WarmAndCold(const Case& c)
      : warm(c.model, c.cluster, CalibrationProfile{}, c.training),
        cold(c.model, c.cluster, CalibrationProfile{}, c.training) {}
  CostModel warm, cold;
};

}  // namespace

TEST_CASE("a shape built from a sibling (shard group, ep_overlap) estimates as one built alone") {
  // CostModel::shape_of builds a shape whose key differs from the one it built last in the shard
  // group and ep_overlap alone from that sibling (its stage split, micro-batches, point-to-point
  // and embedding times, and its layer costs where ep_overlap is the same): the same estimate as
  // a model that never built the sibling.
  const Case c = mixtral_on_32_gpus();
  const std::string base = "tp=2,pp=2,vpp=2,ep=4,dp=8,mbs=1,zero=1,schedule=interleaved";
  const std::string sel = ",recompute=selective";
  // The last pair recomputes in another mode than its sibling: the sibling's activation terms,
  // which the shape starts with, are of that other mode.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {sel + ",ep_overlap=true", sel + ",ep_overlap=false"},
      {sel + ",ep_overlap=false", sel + ",ep_overlap=true"},
      {sel + ",shard=4", sel},
      {sel, sel + ",shard=4"},
      {sel + ",shard=4,ep_overlap=true", sel + ",ep_overlap=false"},
      {",recompute=full,recompute_layers=1,ep_overlap=true", sel + ",ep_overlap=false"}};
  for (const auto& [built, asked] : pairs) {
    CAPTURE(built);
    CAPTURE(asked);
    WarmAndCold w(c);
    CostModel& warm = w.warm;
    CostModel& cold = w.cold;
    const Estimate first = estimate(warm, c, base + built);
    // The search's memory path too (the activations' terms by recompute count).
    peaks_by_zero(warm, base + built);
    const Estimate a = estimate(warm, c, base + asked), b = estimate(cold, c, base + asked);
    const std::array<StageTotals, 4> warm_peaks = peaks_by_zero(warm, base + asked);
    const std::array<StageTotals, 4> cold_peaks = peaks_by_zero(cold, base + asked);
    for (size_t z = 0; z < warm_peaks.size(); ++z)
      CHECK(warm_peaks[z].total == cold_peaks[z].total);
    // The two differ (the overlap shows in the step, the shard group in the memory).
    CHECK((a.step_time_s != first.step_time_s || a.peak_bytes != first.peak_bytes));
    CHECK(a.step_time_s == b.step_time_s);
    CHECK(a.bubble_fraction == b.bubble_fraction);
    CHECK(a.peak_bytes == b.peak_bytes);
    CHECK(a.p2p_s == b.p2p_s);
    CHECK(a.breakdown.total_s() == b.breakdown.total_s());
    CHECK(a.breakdown.dp_s == b.breakdown.dp_s);
  }
}

TEST_CASE("data-parallel sync times remembered from another shape estimate as a cold model's") {
  // CostModel::sync_times keeps its answers by what it reads (the groups, parameters, bytes per
  // gathered parameter, ZeRO stage, layers and dp): a shape of another micro-batch size, schedule
  // or ZeRO stage asks again, and the answer is a cold model's (a key without the ZeRO stage
  // would answer ZeRO-3 with ZeRO-1's times, which differ; one without the groups, a shard group's
  // with the whole group's).
  const Case c = mixtral_on_32_gpus();
  const std::string base = "tp=2,pp=2,ep=4,dp=8,recompute=selective";
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {",mbs=1,zero=1", ",mbs=2,zero=1"},
      {",mbs=1,zero=1", ",mbs=1,zero=3"},
      {",mbs=1,zero=3", ",mbs=1,zero=3,shard=4"},
      {",mbs=1,zero=2", ",mbs=1,zero=2,vpp=2,schedule=interleaved"},
      {",mbs=1,zero=0", ",mbs=1,zero=2"}};
  for (const auto& [built, asked] : pairs) {
    CAPTURE(built);
    CAPTURE(asked);
    WarmAndCold w(c);
    const Estimate first = estimate(w.warm, c, base + built);
    const Estimate a = estimate(w.warm, c, base + asked), b = estimate(w.cold, c, base + asked);
    CHECK(first.breakdown.dp_s > 0);
    CHECK(a.breakdown.dp_s == b.breakdown.dp_s);
    CHECK(a.breakdown.optimizer_s == b.breakdown.optimizer_s);
    CHECK(a.step_time_s == b.step_time_s);
    if (built.find("zero=1") != std::string::npos && asked.find("zero=3") != std::string::npos)
      CHECK(a.breakdown.dp_s != first.breakdown.dp_s);
  }
}

TEST_CASE("a stage class's ZeRO terms remembered from another shape give a cold model's peaks") {
  // CostModel::zero_terms_by_stage keeps each stage class's model states, ZeRO-3 buffer and FP8
  // weight cache under every ZeRO stage by what they read (the class's parameters per GPU and
  // layers, the state shards): a shape of another micro-batch size, schedule or shard group asks
  // again, and its peak totals are a cold model's under every ZeRO stage (a key without the state
  // shards would answer a shard group's layout with the whole data-parallel group's states).
  const Case c = mixtral_on_32_gpus();
  const std::string base = "tp=2,pp=2,ep=4,dp=8,zero=1,recompute=selective";
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {",mbs=1", ",mbs=2"},
      {",mbs=1", ",mbs=1,vpp=2,schedule=interleaved"},
      {",mbs=1", ",mbs=1,shard=4"},
      {",mbs=1,shard=4", ",mbs=2"}};
  for (const auto& [built, asked] : pairs) {
    CAPTURE(built);
    CAPTURE(asked);
    WarmAndCold w(c);
    const std::array<StageTotals, 4> first = peaks_by_zero(w.warm, base + built);
    const std::array<StageTotals, 4> warm = peaks_by_zero(w.warm, base + asked);
    const std::array<StageTotals, 4> cold = peaks_by_zero(w.cold, base + asked);
    for (size_t z = 0; z < warm.size(); ++z) {
      CAPTURE(z);
      CHECK(warm[z].states == cold[z].states);
      CHECK(warm[z].other == cold[z].other);
      CHECK(warm[z].total == cold[z].total);
    }
    // Sharded over 4 ranks instead of 8, the states of every sharding ZeRO stage differ.
    if ((built + asked).find("shard=4") != std::string::npos)
      CHECK(warm[3].states != first[3].states);
  }
}

TEST_CASE("a shape rebuilt in a forgotten shape's storage estimates as one built fresh") {
  // forget_shapes keeps the shapes' storage for the next ones (reset_keeping_buffers): every
  // cache a shape fills (frames, activations, the step-time bound, the uniform recompute group)
  // must start afresh. A model asked about layouts of other shapes first answers as a cold one.
  const Case c = mixtral_on_32_gpus();
  // Other shapes (mbs, tp) with the same ZeRO stage, recompute and schedule: whichever node the
  // asked shape reuses holds caches keyed alike.
  const std::vector<std::string> first = {
      "tp=2,pp=2,vpp=2,ep=4,dp=8,mbs=2,zero=1,recompute=selective,schedule=interleaved",
      "tp=1,pp=2,vpp=2,ep=8,dp=16,mbs=1,zero=1,recompute=selective,schedule=interleaved"};
  const std::string asked =
      "tp=2,pp=2,vpp=2,ep=4,dp=8,mbs=1,zero=1,recompute=selective,schedule=interleaved";
  CostModel warm(c.model, c.cluster, CalibrationProfile{}, c.training);
  for (const std::string& text : first) {
    Layout l;
    estimate(warm, c, text, &l);
    warm.uniform_recompute_group(l);
    warm.step_time_lower_bound_s(l, warm.shape_ref(l));
  }
  warm.forget_shapes();
  CostModel cold(c.model, c.cluster, CalibrationProfile{}, c.training);
  const Estimate a = estimate(warm, c, asked), b = estimate(cold, c, asked);
  CHECK(a.step_time_s == b.step_time_s);
  CHECK(a.peak_bytes == b.peak_bytes);
  CHECK(a.bubble_fraction == b.bubble_fraction);
  CHECK(a.breakdown.total_s() == b.breakdown.total_s());
  Layout l = parse_layout(asked).value();
  CHECK(warm.uniform_recompute_group(l) == cold.uniform_recompute_group(l));
  CHECK(warm.step_time_lower_bound_s(l, warm.shape_ref(l)) ==
        cold.step_time_lower_bound_s(l, cold.shape_ref(l)));
}

TEST_CASE(
    "activations settle where no stage's activations grow with the count, found or remembered") {
  // The block method on llama3-70b (20 layers a stage): from one layer recomputed in full on,
  // each further one stores its input instead of its activations and the rebuilt layer's buffer
  // stays, so every stage's activations fall; from none to one the buffer appears (the bytes
  // still fall there, the stored layers' savings being larger, but the buffer grows). The model
  // keeps each class's answer by its terms and counts: another shard group's shape is answered
  // from memory, as a cold model answers it.
  const ModelSpec m = shipped_model("llama3-70b");
  const TrainingSpec t{8192, 1024, Precision::bf16};
  const ClusterSpec c = two_level_cluster(64);
  CostModel warm(m, c, CalibrationProfile{}, t);
  for (const std::string text : {"tp=8,pp=4,dp=16", "tp=8,pp=4,dp=16,shard=8"}) {
    CAPTURE(text);
    Layout l = parse_layout(text).value();
    REQUIRE(check_layout(l, m, 512, t).empty());
    CostModel cold(m, c, CalibrationProfile{}, t);
    const int64_t settled = warm.activations_settle(l, warm.shape_ref(l), 0, 20, 1);
    CHECK(settled == 1);
    CHECK(cold.activations_settle(l, cold.shape_ref(l), 0, 20, 1) == settled);
    CHECK(warm.activations_settle(l, warm.shape_ref(l), 2, 20, 2) == 2);
    for (int64_t rl = settled; rl < 20; ++rl) {
      CAPTURE(rl);
      Layout a = l, b = l;
      a.recompute_layers = rl, b.recompute_layers = rl + 1;
      const MemoryEstimate at = estimate_memory(m, c.gpu, a, t);
      const MemoryEstimate next = estimate_memory(m, c.gpu, b, t);
      for (size_t s = 0; s < at.stages.size(); ++s)
        CHECK(next.stages[s].activations_bytes <= at.stages[s].activations_bytes);
    }
    CHECK(warm.activations_settle(l, warm.shape_ref(l), 1, 20, 1) == 1);
  }
}
