// The search's memory fallbacks. Offloading (Layout::offload, act_offload): where the bytes go,
// what the step pays, when the search reaches for it; and the uniform recompute groups it tries.
#include <doctest/doctest.h>

#include "planner/cost_model.h"
#include "planner/layout_search.h"
#include "planner/param_count.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

// One node with a host of round numbers: 1 TB, 100 GB/s DRAM, 10 GB/s PCIe, 10 TB of NVMe at
// 5 GB/s.
ClusterSpec round_host_node() {
  ClusterSpec c = two_level_cluster(1);
  c.host = HostSpec{1e12, 100e9, 10e9, 10e12, 5e9, "test"};
  return c;
}

}  // namespace

TEST_CASE("offload=cpu moves the sharded optimizer states to host memory, nvme to the NVMe") {
  const ModelSpec m = shipped_model("llama3-70b");
  const TrainingSpec t{8192, 1024, Precision::bf16};
  GpuSpec gpu{"g", 1e15, 0, 80LL << 30, 3e12, "", 0, {}};
  const Layout base = checked_layout("tp=8,pp=4,dp=16,zero=1", m, 512, t);
  const double p1 = static_cast<double>(stage_params(m, base)[1].dense_per_gpu);
  for (Offload where : {Offload::cpu, Offload::nvme}) {
    Layout l = base;
    l.offload = where;
    const MemoryEstimate e = estimate_memory(m, gpu, l, t);
    const MemoryEstimate on_gpu = estimate_memory(m, gpu, base, t);
    CHECK(e.stages[1].optimizer_bytes == 0);
    // 12 bytes per parameter (fp32 master weights and two moments) over the 16 dp ranks.
    const double moved = 12 * p1 / 16;
    CHECK((where == Offload::cpu ? e.stages[1].host_bytes : e.stages[1].nvme_bytes) ==
          doctest::Approx(moved));
    CHECK(e.stages[1].params_bytes == on_gpu.stages[1].params_bytes);
    CHECK(e.stages[1].grads_bytes == on_gpu.stages[1].grads_bytes);
  }
}

TEST_CASE("act_offload keeps one layer's copy on the GPU and moves the rest of those layers") {
  const ModelSpec m = shipped_model("llama3-70b");
  const TrainingSpec t{8192, 1024, Precision::bf16};
  GpuSpec gpu{"g", 1e15, 0, 80LL << 30, 3e12, "", 0, {}};
  const Layout base = checked_layout("tp=8,pp=4,dp=16,zero=1", m, 512, t);
  Layout l = base;
  l.act_offload = 2;
  const StageMemory before = estimate_memory(m, gpu, base, t).stages[1];
  const StageMemory after = estimate_memory(m, gpu, l, t).stages[1];
  // Stage 1 holds 3 micro-batches in flight: 2 layers × 3 copies, one left as the buffer.
  REQUIRE(before.in_flight_micro_batches == 3);
  const double moved = 5 * before.activations_per_layer_bytes;
  CHECK(after.host_bytes == doctest::Approx(moved));
  CHECK(after.activations_bytes == doctest::Approx(before.activations_bytes - moved));
}

TEST_CASE("the offloaded optimizer step: PCIe copies, the node's CPU step, NVMe read and write") {
  const ModelSpec m = shipped_model("llama3-8b");
  const TrainingSpec t{8192, 64, Precision::bf16};
  const ClusterSpec c = round_host_node();
  const Layout base = checked_layout("tp=8,zero=1", m, 8, t);
  const double p = static_cast<double>(stage_params(m, base)[0].per_gpu());  // dp = 1: no shards
  for (Offload where : {Offload::cpu, Offload::nvme}) {
    CAPTURE(to_string(where));
    CostModel model(m, c, CalibrationProfile{}, t);
    Layout l = base;
    l.offload = where;
    const Estimate e = model.evaluate(l, /*detail=*/false);
    // Gradients (4 B) down and bf16 weights (2 B) up at 10 GB/s; 8 ranks' 30 B per parameter
    // through 100 GB/s of DRAM; with NVMe, 8 ranks' 12 B per parameter read and written at 5 GB/s.
    double want = p * 6 / 10e9 + 8 * p * 30 / 100e9;
    if (where == Offload::nvme) want += 2 * 8 * p * 12 / 5e9;
    CHECK(e.breakdown.optimizer_s == doctest::Approx(want));
  }
}

TEST_CASE("the search offloads only when nothing fits on the GPUs alone") {
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  SearchOptions o;
  o.top_k = 3;
  {
    const ModelSpec m = shipped_model("llama3-70b");
    CostModel model(m, c, CalibrationProfile{}, {8192, 64, Precision::bf16});
    const SearchResult r = search_layouts(model, 8, o);
    CHECK(r.offload_fallback);
    REQUIRE_FALSE(r.ranked.empty());
    for (const Estimate& e : r.ranked) CHECK(e.layout.offload == Offload::cpu);
  }
  {
    const ModelSpec m = shipped_model("llama3-8b");
    CostModel model(m, c, CalibrationProfile{}, {8192, 64, Precision::bf16});
    const SearchResult r = search_layouts(model, 8, o);
    CHECK_FALSE(r.offload_fallback);
    REQUIRE_FALSE(r.ranked.empty());
    for (const Estimate& e : r.ranked) CHECK(e.layout.offload == Offload::none);
  }
}

TEST_CASE("a host too small for the offloaded states rejects the layout") {
  const ModelSpec m = shipped_model("llama3-8b");
  ClusterSpec c = round_host_node();
  const TrainingSpec t{8192, 64, Precision::bf16};
  Layout l = checked_layout("tp=8,zero=1,offload=cpu", m, 8, t);
  CostModel fits(m, c, CalibrationProfile{}, t);
  CHECK(fits.host_fits(l));
  c.host.memory_bytes = 1e9;  // 1 GB for 8 ranks' fp32 states of ~1 B parameters each
  CostModel tight(m, c, CalibrationProfile{}, t);
  CHECK_FALSE(tight.host_fits(l));
}

TEST_CASE("uniform_recompute_group picks the group size with the least peak activations") {
  // Checked against the memory model for every N: the stage with the most activations decides.
  const ModelSpec m = shipped_model("llama3-70b");
  const TrainingSpec t{8192, 1024, Precision::bf16};
  const ClusterSpec c = two_level_cluster(64);
  CostModel model(m, c, CalibrationProfile{}, t);
  Layout l = checked_layout("tp=8,pp=4,dp=16,recompute=full", m, 512, t);
  const int64_t chosen = model.uniform_recompute_group(l);
  auto peak_activations = [&](int64_t group) {
    Layout g = l;
    g.recompute_layers = group;
    double worst = 0;
    for (const StageMemory& s : estimate_memory(m, c.gpu, g, t).stages)
      worst = std::max(worst, s.activations_bytes);
    return worst;
  };
  CHECK(chosen > 1);
  for (int64_t group = 1; group <= 20; ++group) {
    CAPTURE(group);
    CHECK(peak_activations(chosen) <= peak_activations(group));
  }
}

TEST_CASE("a full-recompute layout too big per layer is searched again in uniform groups") {
  // The search's retry (no offloading): a layout recomputing every layer that does not fit is
  // tried with uniform_recompute_group's groups; ranked with them where they fit, else rejected
  // under the grouped stage's largest term. HBM is set between the two peaks.
  const ModelSpec m = shipped_model("llama3-70b");
  const TrainingSpec t{8192, 1024, Precision::bf16};
  ClusterSpec c = two_level_cluster(64);
  const Layout l = checked_layout("tp=8,pp=4,dp=16,zero=1,recompute=full", m, 512, t);
  Layout grouped = l;
  grouped.recompute_layers = CostModel(m, c, CalibrationProfile{}, t).uniform_recompute_group(l);
  REQUIRE(grouped.recompute_layers > 1);
  CostModel sizes(m, c, CalibrationProfile{}, t);
  const double per_layer = sizes.peak_stage_memory(l).total_bytes();
  const StageMemory in_groups = sizes.peak_stage_memory(grouped);
  REQUIRE(in_groups.total_bytes() < per_layer);
  SearchOptions o;
  o.top_k = 1000;
  o.fix = parse_layout_fix("tp=8,pp=4,cp=1,zero=1,recompute=full,mbs=1,vpp=1,order=tp-cp-dp-pp")
              .value();
  {
    c.gpu.hbm_bytes = static_cast<int64_t>((per_layer + in_groups.total_bytes()) / 2);
    CostModel model(m, c, CalibrationProfile{}, t);
    const SearchResult r = search_layouts(model, c.gpus(), o);
    bool found = false;
    for (const Estimate& e : r.ranked) {
      if (e.layout.schedule != Schedule::one_f_one_b || e.layout.shard != 0) continue;
      CHECK(e.layout.recompute_layers == grouped.recompute_layers);
      CHECK(e.peak_bytes == in_groups.total_bytes());
      found = true;
    }
    CHECK(found);
  }
  {
    c.gpu.hbm_bytes = static_cast<int64_t>(in_groups.total_bytes() / 2);
    CostModel model(m, c, CalibrationProfile{}, t);
    const SearchResult r = search_layouts(model, c.gpus(), o);
    CHECK(r.ranked.empty());
    const double states =
        in_groups.params_bytes + in_groups.grads_bytes + in_groups.optimizer_bytes;
    const char* reason = states >= in_groups.activations_bytes && states >= in_groups.other_bytes()
                             ? "exceeds memory: model states dominate"
                         : in_groups.activations_bytes >= in_groups.other_bytes()
                             ? "exceeds memory: activations dominate"
                             : "exceeds memory: logits/buffers dominate";
    CHECK(r.rejected.count(reason) == 1);
  }
}

TEST_CASE("a uniform recompute group remembered from another shape is the one found afresh") {
  // The cost model keeps each group by what decides it (every stage class's layers, layer input,
  // widest layer and micro-batches in flight): another shard group's shape asks the same and is
  // answered from memory, other schedules and micro-batch sizes are not.
  const ModelSpec m = shipped_model("llama3-70b");
  const TrainingSpec t{8192, 1024, Precision::bf16};
  const ClusterSpec c = two_level_cluster(64);
  CostModel warm(m, c, CalibrationProfile{}, t);
  const std::vector<std::string> layouts = {
      "tp=8,pp=4,dp=16,recompute=full",
      "tp=8,pp=4,dp=16,recompute=full,shard=8",
      "tp=8,pp=4,dp=16,recompute=full,schedule=gpipe",
      "tp=8,pp=4,vpp=2,dp=16,recompute=full,schedule=interleaved",
      "tp=8,pp=4,dp=16,mbs=2,recompute=full",
      "tp=4,pp=8,dp=16,recompute=full"};
  for (const std::string& text : layouts) {
    CAPTURE(text);
    const Layout l = checked_layout(text, m, 512, t);
    CostModel cold(m, c, CalibrationProfile{}, t);
    CHECK(warm.uniform_recompute_group(l) == cold.uniform_recompute_group(l));
  }
  // GPipe holds every micro-batch in flight where 1F1B holds at most pp: a larger group.
  CHECK(warm.uniform_recompute_group(checked_layout(layouts[2], m, 512, t)) >
        warm.uniform_recompute_group(checked_layout(layouts[0], m, 512, t)));
}
