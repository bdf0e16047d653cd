#include "planner/layout_search.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

#include "planner/framework_preset.h"
#include "planner/memory_model.h"
#include "planner/no_layout_reason.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

SearchResult run(const ModelSpec& m, const ClusterSpec& c, const TrainingSpec& t, int threads,
                 const std::string& fix = "", int top = 20) {
  CostModel model(m, c, CalibrationProfile{}, t);
  SearchOptions o;
  o.threads = threads;
  o.top_k = top;
  if (!fix.empty()) o.fix = parse_layout_fix(fix).value();
  return search_layouts(model, c.gpus(), o);
}

// One GPU on one network level.
ClusterSpec one_gpu_cluster() {
  ClusterSpec c = two_level_cluster(1);
  c.nodes = 1;
  c.gpus_per_node = 1;
  c.network = {{"local", 1, 100e9, 1e-6, 1.0}};
  return c;
}

// The same counts and the same ranking, layout by layout and step time by step time.
void check_same_search(const SearchResult& a, const SearchResult& b) {
  CHECK(a.evaluated == b.evaluated);
  CHECK(a.feasible == b.feasible);
  CHECK(a.rejected == b.rejected);
  CHECK(a.skipped == b.skipped);
  REQUIRE(a.ranked.size() == b.ranked.size());
  for (size_t i = 0; i < a.ranked.size(); ++i) {
    CHECK(to_string(a.ranked[i].layout) == to_string(b.ranked[i].layout));
    CHECK(a.ranked[i].step_time_s == b.ranked[i].step_time_s);
  }
}

}  // namespace

TEST_CASE("every layout the search ranks passes check_layout") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  TrainingSpec t{4096, 256, Precision::bf16};
  ClusterSpec c = two_level_cluster(4);
  SearchResult r = run(m, c, t, 2, "", 200);
  REQUIRE(!r.ranked.empty());
  for (const Estimate& e : r.ranked) {
    Layout l = e.layout;
    CAPTURE(to_string(l));
    CHECK(check_layout(l, m, 32, t).empty());
    CHECK(e.fits());
  }
}

TEST_CASE("search results are identical for 1 and 2 threads") {
  ModelSpec m = shipped_model("llama3-8b");
  TrainingSpec t{8192, 128, Precision::bf16};
  ClusterSpec c = two_level_cluster(4);
  check_same_search(run(m, c, t, 1), run(m, c, t, 2));
}

TEST_CASE("the threads share the CP-dominance check and drop the same variants as one thread") {
  // Mixtral on 64 GPUs at 32k tokens: thousands of CP variant runs, enough for every thread to
  // take a part of each batch (drop_dominated_cp_kinds).
  ModelSpec m = shipped_model("mixtral-8x7b");
  TrainingSpec t{32768, 64, Precision::bf16};
  ClusterSpec c = two_level_cluster(8);
  SearchResult one = run(m, c, t, 1, "", 50);
  const int64_t dropped = one.skipped["cp_kind no faster than another"];
  CHECK(dropped > 1000);
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    check_same_search(one, run(m, c, t, threads, "", 50));
  }
}

TEST_CASE("results are ranked by step time, fastest first") {
  ModelSpec m = shipped_model("llama3-8b");
  SearchResult r = run(m, two_level_cluster(2), {8192, 64, Precision::bf16}, 2);
  for (size_t i = 1; i < r.ranked.size(); ++i)
    CHECK(r.ranked[i - 1].step_time_s <= r.ranked[i].step_time_s);
}

TEST_CASE("--fix pins fields: every ranked layout has them") {
  ModelSpec m = shipped_model("llama3-8b");
  SearchResult r =
      run(m, two_level_cluster(2), {8192, 64, Precision::bf16}, 2, "tp=4,zero=1,recompute=full");
  REQUIRE(!r.ranked.empty());
  for (const Estimate& e : r.ranked) {
    CHECK(e.layout.tp == 4);
    CHECK(e.layout.zero == 1);
    CHECK(e.layout.recompute == Recompute::full);
  }
}

TEST_CASE("exhaustive count on a tiny case: 1 GPU, 2 layers, batch 1") {
  // tp = pp = cp = dp = ep = mbs = 1 → one shape; pp = 1 → one schedule; recompute none with
  // 0..2 full layers (the block method: 3), selective (1) and full (1) = 5; ZeRO 0..3 → 20
  // layouts. Standard attention: its scores are what selective recompute drops.
  ModelSpec m = gpt_like(2, 256, 4, 1000, 128);
  m.attention = AttentionKind::standard;
  ClusterSpec c = one_gpu_cluster();
  CostModel model(m, c, CalibrationProfile{}, {128, 1, Precision::bf16});
  SearchResult r = search_layouts(model, 1, SearchOptions{});
  CHECK(r.evaluated == 20);
  CHECK(r.feasible == 20);
}

TEST_CASE("with flash attention in BF16 selective recompute drops nothing: not searched, counted") {
  // The tiny case above with flash attention: the 4 selective layouts (one per ZeRO stage)
  // would hold what recompute=none holds and take longer.
  ModelSpec m = gpt_like(2, 256, 4, 1000, 128);
  REQUIRE(m.attention == AttentionKind::flash);
  ClusterSpec c = one_gpu_cluster();
  CostModel model(m, c, CalibrationProfile{}, {128, 1, Precision::bf16});
  CHECK(!model.selective_recompute_saves());
  SearchResult r = search_layouts(model, 1, SearchOptions{});
  CHECK(r.evaluated == 16);
  CHECK(r.skipped.at("recompute=selective with nothing to drop (flash attention)") == 4);
  for (const Estimate& e : r.ranked) CHECK(e.layout.recompute != Recompute::selective);
  // Pinned, it is searched.
  SearchOptions pinned;
  pinned.fix = parse_layout_fix("recompute=selective").value();
  CHECK(search_layouts(model, 1, pinned).evaluated == 4);
  // Under FP8 with quantized inputs the core's BF16 output is stored beside its FP8 cast, and
  // selective recompute drops it (planner/activation_memory.cc).
  CostModel fp8(m, c, CalibrationProfile{}, {128, 1, Precision::fp8});
  CHECK(fp8.selective_recompute_saves());
}

TEST_CASE("a framework without partial recomputation is searched with recompute none or full") {
  // The tiny case above under DeepSpeed (whole-layer activation checkpointing only): recompute
  // none with no layers recomputed, or full → 2 × ZeRO 0..3 = 8 layouts.
  ModelSpec m = gpt_like(2, 256, 4, 1000, 128);
  ClusterSpec c = one_gpu_cluster();
  CostOptions options;
  apply_framework(find_framework("deepspeed").value(), options);
  CostModel model(m, c, CalibrationProfile{}, {128, 1, Precision::bf16}, options);
  SearchResult r = search_layouts(model, 1, SearchOptions{});
  CHECK(r.evaluated == 8);
  CHECK(count_search_layouts(model, 1, SearchOptions{}) == 8);
  for (const Estimate& e : r.ranked) {
    CHECK(e.layout.recompute != Recompute::selective);
    CHECK(e.layout.recompute_layers == 0);
  }
}

namespace {

// Every layout the search evaluates for `framework` (top_k above the count) on a small GPT
// over all of `cluster`'s GPUs, with the count the up-front size check predicts.
// The search under `framework`'s preset with `fix` pinned, keeping `top_k`; its size count agrees.
SearchResult framework_search(const ModelSpec& m, const ClusterSpec& cluster, const TrainingSpec& t,
                              const std::string& framework, const std::string& fix, int top_k) {
  CostOptions options;
  apply_framework(find_framework(framework).value(), options);
  CostModel model(m, cluster, CalibrationProfile{}, t, options);
  SearchOptions o;
  o.top_k = top_k;
  if (!fix.empty()) o.fix = parse_layout_fix(fix).value();
  SearchResult r = search_layouts(model, cluster.gpus(), o);
  // The count leaves out the retries of full-recompute candidates too big for memory with
  // uniform groups (each an evaluated layout): at most what the search evaluates.
  CHECK(count_search_layouts(model, cluster.gpus(), o) <= r.evaluated);
  return r;
}

SearchResult search_all(const std::string& framework, const std::string& fix = "",
                        const ClusterSpec& cluster = two_level_cluster(1), int64_t batch = 16) {
  return framework_search(gpt_like(8, 256, 4, 1000, 128), cluster, {128, batch, Precision::bf16},
                          framework, fix, 1000000);
}

}  // namespace

TEST_CASE("the search offers only the pipeline schedules the framework runs") {
  // Megatron-Core: 1F1B and interleaved 1F1B, no GPipe, no ZB-H1.
  SearchResult core = search_all("megatron-core");
  bool interleaved = false;
  for (const Estimate& e : core.ranked) {
    if (e.layout.pp == 1) continue;
    CHECK(
        (e.layout.schedule == Schedule::one_f_one_b || e.layout.schedule == Schedule::interleaved));
    interleaved = interleaved || e.layout.schedule == Schedule::interleaved;
  }
  CHECK(interleaved);
  // DeepSpeed's PipelineEngine runs 1F1B only: every chunked shape is refused under a reason.
  SearchResult ds = search_all("deepspeed");
  for (const Estimate& e : ds.ranked)
    CHECK((e.layout.pp == 1 || e.layout.schedule == Schedule::one_f_one_b));
  CHECK(ds.rejected["the framework has no interleaved schedule"] > 0);
  // Composer has no pipeline parallelism at all.
  SearchResult composer = search_all("composer");
  REQUIRE(!composer.ranked.empty());
  for (const Estimate& e : composer.ranked) CHECK(e.layout.pp == 1);
  CHECK(composer.rejected["the framework has no pipeline parallelism"] > 0);
  // A schedule the user pins is searched whatever the framework.
  SearchResult pinned = search_all("megatron-core", "schedule=zb-h1");
  bool zb = false;
  for (const Estimate& e : pinned.ranked) {
    if (e.layout.pp == 1) continue;
    CHECK(e.layout.schedule == Schedule::zb_h1);
    zb = true;
  }
  CHECK(zb);
}

TEST_CASE("when nothing fits, the smallest-memory layout is reported") {
  ModelSpec m = shipped_model("llama3-405b");
  ClusterSpec c = two_level_cluster(1);
  SearchResult r = run(m, c, {8192, 16, Precision::bf16}, 2);
  CHECK(r.ranked.empty());
  REQUIRE(r.smallest.has_value());
  CHECK(r.smallest->peak_bytes > r.smallest->capacity_bytes);
  CHECK(r.rejected.count("exceeds memory: model states dominate") == 1);
}

TEST_CASE("--fix rejects keys a search cannot pin, with the column") {
  Result<LayoutFix> f = parse_layout_fix("tp=8,uneven=true");
  REQUIRE_FALSE(f.ok());
  CHECK(format_diagnostics(f.errors()) ==
        "--fix:1:6: error: field 'uneven': cannot be fixed in a search (use estimate --layout)\n"
        "  tp=8,uneven=true\n"
        "       ^\n");
  CHECK(parse_layout_fix("order=tp-cp-pp-dp")->order ==
        std::array<Dim, 4>{Dim::tp, Dim::cp, Dim::pp, Dim::dp});
}

TEST_CASE("on a three-level fabric the search also tries Llama 3's rank order tp-cp-pp-dp") {
  ModelSpec m = shipped_model("llama3-8b");
  ClusterSpec c = shipped_cluster("llama3-24k-h100");
  CostModel model(m, c, CalibrationProfile{}, {8192, 256, Precision::bf16});
  SearchOptions both;
  both.threads = 2;
  both.fix = parse_layout_fix("tp=8,cp=1,mbs=1,zero=1,shard=0").value();
  SearchOptions one = both;
  one.fix.order = std::array<Dim, 4>{Dim::tp, Dim::cp, Dim::pp, Dim::dp};
  SearchResult r_both = search_layouts(model, 64, both), r_one = search_layouts(model, 64, one);
  CHECK(r_both.evaluated == 2 * r_one.evaluated);
  // On two-level clusters the order stays Megatron's.
  CostModel flat(m, two_level_cluster(8), CalibrationProfile{}, {8192, 256, Precision::bf16});
  CHECK(search_layouts(flat, 64, both).evaluated == r_one.evaluated);
}

TEST_CASE("every branch the search prunes by a layout rule is counted under the rule's name") {
  ModelSpec m = shipped_model("llama3-8b");  // 32 heads
  TrainingSpec t{8192, 96, Precision::bf16};
  ClusterSpec c = two_level_cluster(3);  // 24 GPUs: tp = 3, 6, 12 and 24 do not split 32 heads
  SearchResult r = run(m, c, t, 1);
  CHECK(r.skipped.at("tp_splits_heads") == 4);
  CHECK(r.rejected.count("tp_splits_heads") == 0);  // reports print `rejected` only
}

TEST_CASE("hybrid sharding: searched per network level where the framework has it, pinnable") {
  // 64 nodes in racks of 2 (three levels): shard groups of a node (8) and of a rack (16) are
  // tried beside full sharding, and only with ZeRO ≥ 1.
  ClusterSpec c = two_level_cluster(64);
  c.network = {{"nvlink", 8, 400e9, 5e-6, 1.0},
               {"rack", 16, 50e9, 10e-6, 1.0},
               {"ib", 512, 50e9, 10e-6, 1.0}};
  auto shards_seen = [&](const std::string& framework, const std::string& fix) {
    std::set<int64_t> seen;
    for (const Estimate& e : search_all(framework, fix, c, 512).ranked) {
      seen.insert(e.layout.shard);
      if (e.layout.shard > 0) CHECK(e.layout.zero >= 1);
    }
    return seen;
  };
  CHECK(shards_seen("megatron-core", "tp=1,pp=1,mbs=1,recompute=none") ==
        std::set<int64_t>{0, 8, 16});
  CHECK(shards_seen("deepspeed", "tp=1,pp=1,mbs=1,recompute=none") == std::set<int64_t>{0});
  CHECK(shards_seen("deepspeed", "tp=1,pp=1,mbs=1,recompute=none,shard=64") ==
        std::set<int64_t>{64});
}

TEST_CASE("hybrid sharding: each rank order's shard groups follow its data-parallel stride") {
  // 512 GPUs at pp = 2 (dp = 256), nodes of 8 in racks of 16. With dp inside pp (tp, cp, dp, pp)
  // the dp ranks are adjacent: a node holds 8 of them, a rack 16. With pp inside dp (tp, cp, pp,
  // dp) they stride by 2: 4 and 8. Items of one shape in the two orders share everything else.
  ClusterSpec c = two_level_cluster(64);
  c.network = {{"nvlink", 8, 400e9, 5e-6, 1.0},
               {"rack", 16, 50e9, 10e-6, 1.0},
               {"ib", 512, 50e9, 10e-6, 1.0}};
  std::set<std::pair<int64_t, int64_t>> seen;  // (dp stride, shard)
  for (const Estimate& e :
       search_all("megatron-core", "tp=1,cp=1,pp=2,mbs=1,recompute=none", c, 512).ranked)
    seen.insert({e.layout.stride(Dim::dp), e.layout.shard});
  CHECK(seen ==
        std::set<std::pair<int64_t, int64_t>>{{1, 0}, {1, 8}, {1, 16}, {2, 0}, {2, 4}, {2, 8}});
}

TEST_CASE(
    "TP overlap: the search turns it on with sequence parallelism where the framework has it") {
  auto overlaps = [&](const std::string& framework, const std::string& fix) {
    std::set<std::pair<bool, bool>> seen;  // (sp, tp_overlap) of layouts with tp > 1
    for (const Estimate& e : search_all(framework, fix).ranked)
      if (e.layout.tp > 1) seen.insert({e.layout.sp, e.layout.tp_overlap});
    return seen;
  };
  using Seen = std::set<std::pair<bool, bool>>;
  CHECK(overlaps("megatron-core", "") == Seen{{true, true}, {false, false}});
  CHECK(overlaps("deepspeed", "") == Seen{{true, false}, {false, false}});
  CHECK(overlaps("megatron-core", "tp_overlap=false") == Seen{{true, false}, {false, false}});
}

TEST_CASE(
    "CP variants: the framework's kinds are searched, a variant no faster than another "
    "is dropped, hybrid needs a group strictly inside cp") {
  ModelSpec m = shipped_model("llama3-8b");  // 32 query heads, 8 KV heads
  TrainingSpec t{32768, 8, Precision::bf16};
  ClusterSpec c = two_level_cluster(1);
  auto search = [&](const std::string& framework, const std::string& fix) {
    return framework_search(m, c, t, framework, fix, 1000);
  };
  const std::string shape = "tp=2,cp=4,pp=1,mbs=1,zero=1,sp=true,recompute=none,recompute_layers=0";
  // Megatron-Core: ring, allgather, a2a (16 query and 4 KV heads per TP rank split 4 ways) and
  // hybrid, whose group (the CP ranks in the 8-GPU node: all 4) would be all of cp.
  SearchResult core = search("megatron-core", shape);
  CHECK(core.skipped.at("cp_a2a_splits_cp") == 1);
  const int64_t dropped = core.skipped.count("cp_kind no faster than another")
                              ? core.skipped.at("cp_kind no faster than another")
                              : 0;
  CHECK(static_cast<int64_t>(core.ranked.size()) + dropped == 3);
  std::set<CpKind> kinds;
  for (const Estimate& e : core.ranked) kinds.insert(e.layout.cp_kind);
  CHECK(kinds.size() == core.ranked.size());
  // torchtitan rotates K/V (ring) or gathers them; it has no head split.
  for (const Estimate& e : search("torchtitan", shape).ranked)
    CHECK((e.layout.cp_kind == CpKind::ring || e.layout.cp_kind == CpKind::allgather));
  // A kind the user pins is searched whatever the framework.
  SearchResult pinned = search("torchtitan", shape + ",cp_kind=a2a");
  REQUIRE(pinned.ranked.size() == 1);
  CHECK(pinned.ranked[0].layout.cp_kind == CpKind::a2a);
  // Pinned hybrid with its group: a2a over 2 ranks of the node, a ring of 2 across.
  SearchResult hybrid = search("megatron-core", shape + ",cp_kind=hybrid,cp_a2a=2");
  REQUIRE(hybrid.ranked.size() == 1);
  CHECK(hybrid.ranked[0].layout.cp_ring_size() == 2);
}

TEST_CASE(
    "EP overlap: searched on where the framework overlaps, off with full or block "
    "recompute, on with pp only beside vpp") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  TrainingSpec t{4096, 64, Precision::bf16};
  ClusterSpec c = two_level_cluster(2);
  auto search = [&](const std::string& framework, const std::string& fix) {
    return framework_search(m, c, t, framework, fix, 100000);
  };
  SearchResult core = search("megatron-core", "tp=1,ep=8,mbs=1,zero=1");
  REQUIRE(!core.ranked.empty());
  bool on = false, full = false;
  for (const Estimate& e : core.ranked) {
    const Layout& l = e.layout;
    const bool allowed =
        l.recompute != Recompute::full && l.recompute_layers == 0 && (l.pp == 1 || l.vpp > 1);
    CHECK(l.ep_overlap == allowed);
    on = on || l.ep_overlap;
    full = full || l.recompute == Recompute::full;
  }
  CHECK(on);
  CHECK(full);
  for (const Estimate& e : search("fsdp2", "tp=1,ep=8,mbs=1,zero=1").ranked)
    CHECK(!e.layout.ep_overlap);
  // Pinned, it stays on whatever the recompute.
  for (const Estimate& e : search("fsdp2", "tp=1,ep=8,mbs=1,zero=1,ep_overlap=true").ranked)
    CHECK(e.layout.ep_overlap);
}

TEST_CASE("the search overlaps TP communication only where the TP group is in one NVLink node") {
  const ModelSpec m = shipped_model("llama3-8b");
  const TrainingSpec t{4096, 64, Precision::bf16};
  const ClusterSpec c = two_level_cluster(2);  // two 8-GPU NVLink domains
  auto search = [&](const std::string& fix) {
    return framework_search(m, c, t, "megatron-core", fix, 1000);
  };
  const SearchResult across = search("tp=16,mbs=1");
  REQUIRE(!across.ranked.empty());
  for (const Estimate& e : across.ranked) CHECK(!e.layout.tp_overlap);
  bool overlapped = false;
  for (const Estimate& e : search("tp=8,mbs=1").ranked) overlapped |= e.layout.tp_overlap;
  CHECK(overlapped);
  // Pinned on, tp 16 leaves nothing to run: each candidate is skipped by the rule.
  const SearchResult pinned = search("tp=16,mbs=1,tp_overlap=true");
  CHECK(pinned.ranked.empty());
  REQUIRE(pinned.skipped.count("tp_overlap_within_domain") == 1);
  CHECK(pinned.skipped.at("tp_overlap_within_domain") > 0);
}

TEST_CASE("etp: the search tries 1 beside tp where the framework folds experts, pinnable") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  TrainingSpec t{4096, 64, Precision::bf16};
  auto expert_tps = [&](const ClusterSpec& c, const std::string& framework,
                        const std::string& fix) {
    std::set<std::pair<int64_t, int64_t>> seen;  // (tp, expert tp)
    for (const Estimate& e : framework_search(m, c, t, framework, fix, 100000).ranked) {
      Layout l = e.layout;
      CAPTURE(to_string(l));
      CHECK(check_layout(l, m, c.gpus(), t).empty());
      seen.insert({l.tp, l.expert_tp()});
    }
    return seen;
  };
  using Seen = std::set<std::pair<int64_t, int64_t>>;
  // tp=4 on 16 GPUs, ep = 8: only the fold gives ep 8 ranks (dp·cp is 4).
  const std::string shape = "tp=4,ep=8,pp=1,mbs=1,zero=1";
  CHECK(expert_tps(two_level_cluster(2), "megatron-core", shape) == Seen{{4, 1}});
  // On 32 GPUs dp·cp = 8 holds ep = 8 either way.
  const ClusterSpec c = two_level_cluster(4);
  CHECK(expert_tps(c, "megatron-core", shape) == Seen{{4, 4}, {4, 1}});
  CHECK(expert_tps(c, "deepspeed", shape) == Seen{{4, 4}});
  CHECK(expert_tps(c, "megatron-core", shape + ",etp=2") == Seen{{4, 2}});
}

// Branch and bound (SearchResult::pruned) must not change the answer: the same top layouts, step
// times and counts as a search that times every layout that fits.
void check_pruning_exact(const ModelSpec& m, const ClusterSpec& c, const TrainingSpec& t,
                         const std::string& framework, int threads) {
  CAPTURE(framework);
  CostOptions options;
  apply_framework(find_framework(framework).value(), options);
  CostModel model(m, c, CalibrationProfile{}, t, options);
  SearchOptions o;
  o.top_k = 10;
  o.threads = threads;
  const SearchResult pruned = search_layouts(model, c.gpus(), o);
  o.prune = false;
  const SearchResult all = search_layouts(model, c.gpus(), o);
  CHECK(all.pruned == 0);
  CHECK(pruned.pruned > 0);
  CHECK(pruned.feasible == all.feasible);
  CHECK(pruned.evaluated == all.evaluated);
  CHECK(pruned.rejected == all.rejected);
  REQUIRE(pruned.ranked.size() == 10);
  REQUIRE(all.ranked.size() == 10);
  for (size_t i = 0; i < pruned.ranked.size(); ++i) {
    CHECK(to_string(pruned.ranked[i].layout) == to_string(all.ranked[i].layout));
    CHECK(pruned.ranked[i].step_time_s == all.ranked[i].step_time_s);
  }
}

TEST_CASE("pruning by the step-time floor keeps the exact top layouts") {
  const TrainingSpec t{4096, 64, Precision::bf16};
  check_pruning_exact(shipped_model("llama3-8b"), two_level_cluster(2), t, "megatron-core", 1);
  check_pruning_exact(shipped_model("llama3-8b"), two_level_cluster(2), t, "torchtitan", 2);
  check_pruning_exact(shipped_model("mixtral-8x7b"), two_level_cluster(4), t, "megatron-core", 2);
}

TEST_CASE("the search's split timing (pipeline, then ZeRO terms) equals evaluate bit for bit") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  const TrainingSpec t{4096, 64, Precision::bf16};
  ClusterSpec c = two_level_cluster(4);
  CostModel model(m, c, CalibrationProfile{}, t);
  CostModel::PipelineTiming timing;
  for (const char* text : {"tp=2,pp=4,dp=4,ep=4,zero=3,mbs=1,vpp=2,schedule=interleaved",
                           "tp=4,pp=2,dp=4,ep=2,zero=0,mbs=2,recompute=selective",
                           "tp=1,pp=8,dp=4,ep=4,zero=2,mbs=1,recompute=full,schedule=zb-h1"}) {
    CAPTURE(text);
    Layout l = parse_layout(text, "test").value();
    REQUIRE(check_layout(l, m, c.gpus(), t).empty());
    const CostModel::ShapeRef shape = model.shape_ref(l);
    model.time_pipeline(l, shape, timing);
    const double floor = CostModel::step_time_floor_s(timing);
    const double step = model.finish_step(l, shape, timing);
    CHECK(floor <= step);
    CHECK(step == model.evaluate(l, false).step_time_s);
    CHECK(model.peak_stage_memory(l, shape).total_bytes() ==
          estimate_memory(m, c.gpu, l, t).peak_bytes);
  }
}

TEST_CASE(
    "a shape's step-time lower bound is below the floor of every recompute choice and schedule, "
    "and the floor itself without a pipeline") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  const TrainingSpec t{4096, 64, Precision::bf16};
  ClusterSpec c = two_level_cluster(4);
  CostModel model(m, c, CalibrationProfile{}, t);
  CostModel::PipelineTiming timing;
  int checked = 0;
  for (const char* schedule : {"1f1b", "gpipe", "interleaved", "zb-h1", "zb-v", "dualpipev"}) {
    for (const char* recompute : {"recompute=none", "recompute=selective", "recompute=full",
                                  "recompute=none,recompute_layers=4"}) {
      const std::string text = fmt::format("tp=2,pp=4,dp=4,ep=4,zero=1,mbs=1,vpp={},schedule={},{}",
                                           std::string_view(schedule) == "1f1b" ||
                                                   std::string_view(schedule) == "gpipe" ||
                                                   std::string_view(schedule) == "zb-h1"
                                               ? 1
                                               : 2,
                                           schedule, recompute);
      CAPTURE(text);
      Layout l = parse_layout(text, "test").value();
      if (!check_layout(l, m, c.gpus(), t).empty()) continue;
      const CostModel::ShapeRef shape = model.shape_ref(l);
      model.time_pipeline(l, shape, timing);
      CHECK(model.step_time_lower_bound_s(l, shape) <= CostModel::step_time_floor_s(timing));
      ++checked;
    }
  }
  CHECK(checked == 24);
  // One stage: the floor is the micro-batches times the stage's time, which the bound takes.
  Layout l = parse_layout("tp=2,pp=1,dp=16,ep=4,zero=1,mbs=1", "test").value();
  REQUIRE(check_layout(l, m, c.gpus(), t).empty());
  const CostModel::ShapeRef shape = model.shape_ref(l);
  model.time_pipeline(l, shape, timing);
  const double floor = CostModel::step_time_floor_s(timing);
  REQUIRE(timing.per_class.size() == 1);
  CHECK(floor ==
        doctest::Approx(64.0 / 16 * timing.per_class[0].per_micro_batch_s()).epsilon(1e-14));
  CHECK(model.step_time_lower_bound_s(l, shape) <= floor);
  CHECK(model.step_time_lower_bound_s(l, shape) == doctest::Approx(floor).epsilon(1e-11));
}

TEST_CASE("the CP-dominance terms of a layout are its layer costs' own, for every CP kind") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  const TrainingSpec t{32768, 64, Precision::bf16};
  ClusterSpec c = two_level_cluster(8);
  CostModel model(m, c, CalibrationProfile{}, t);
  auto layer = [](const LayerCost& l) {
    return CostModel::CpTerms::Layer{l.forward_s,           l.backward_s,   l.backward_weight_s,
                                     l.attention_forward_s, l.cp_forward_s, l.cp_backward_s};
  };
  int checked = 0;
  for (const char* kind : {"cp=1", "cp=4", "cp=4,cp_kind=allgather", "cp=4,cp_kind=a2a",
                           "cp=4,cp_kind=hybrid,cp_a2a=2"}) {
    std::vector<CostModel::CpTerms::Layer> by_order;
    // CP inside a node, then across nodes (its stride past the node's eight GPUs).
    for (const char* order : {"", ",order=tp-dp-cp-pp"}) {
      const std::string text = fmt::format("tp=2,pp=2,ep=4,mbs=1,{}{}", kind, order);
      CAPTURE(text);
      Layout l = parse_layout(text, "test").value();
      l.dp = c.gpus() / (l.tp * l.cp * l.pp);
      REQUIRE(check_layout(l, m, c.gpus(), t).empty());
      // Asked first, then after the layer costs (the caches answer either way).
      const CostModel::CpTerms first = model.cp_terms(l);
      const CostModel::LayerPair costs = model.layer_costs(l);
      const CostModel::CpTerms& again = model.cp_terms(l);
      CHECK(first.dense == layer(costs.dense));
      CHECK(first.moe == layer(costs.moe));
      CHECK(again.dense == first.dense);
      CHECK(again.moe == first.moe);
      CHECK(first.moe != first.dense);
      if (l.cp > 1) CHECK(first.dense[4] > 0);
      by_order.push_back(first.dense);
      ++checked;
    }
    if (std::string_view(kind) != "cp=1") CHECK(by_order[1][4] > by_order[0][4]);
  }
  CHECK(checked == 10);
}

TEST_CASE("a search above max_layouts does not run: it reports the count and the same error") {
  const ModelSpec m = shipped_model("llama3-8b");
  const TrainingSpec t{4096, 64, Precision::bf16};
  const ClusterSpec c = two_level_cluster(2);
  CostModel model(m, c, CalibrationProfile{}, t);
  SearchOptions o;
  const int64_t n = count_search_layouts(model, c.gpus(), o);
  CHECK(search_layouts(model, c.gpus(), o).evaluated >= n);  // with the uniform-group retries
  o.max_layouts = n - 1;
  const SearchResult r = search_layouts(model, c.gpus(), o);
  CHECK(r.refused == n);
  CHECK(r.evaluated == 0);
  CHECK(r.ranked.empty());
  const std::optional<Diagnostic> from_result = check_search_size(r, "plan");
  const std::optional<Diagnostic> from_count = check_search_size(model, c.gpus(), o, "plan");
  REQUIRE(from_result);
  REQUIRE(from_count);
  CHECK(format_diagnostic(*from_result) == format_diagnostic(*from_count));
  o.max_layouts = n;
  CHECK(!check_search_size(search_layouts(model, c.gpus(), o), "plan"));
}

TEST_CASE("a launcher check drops the layouts it refuses, counted by field, and nothing else") {
  const ModelSpec m = gpt_like(8, 256, 4, 1000, 128);
  const ClusterSpec c = two_level_cluster(1);
  const TrainingSpec t{128, 16, Precision::bf16};
  CostModel model(m, c, CalibrationProfile{}, t);
  SearchOptions o;
  o.top_k = 1000000;
  const SearchResult all = search_layouts(model, c.gpus(), o);
  int64_t zero_one = 0, interleaved = 0;  // fitting layouts the fake launcher refuses
  for (const Estimate& e : all.ranked) {
    if (e.layout.zero == 1)
      ++zero_one;
    else if (e.layout.schedule == Schedule::interleaved && e.layout.pp > 1)
      ++interleaved;
  }
  REQUIRE(zero_one > 0);
  REQUIRE(interleaved > 0);
  // Refuses ZeRO-1 first, then interleaving, as a launcher's rules do in their order.
  o.launcher = {"Fake",
                [](const ModelSpec&, const TrainingSpec&, const Layout& l) -> const char* {
                  if (l.zero == 1) return "zero";
                  if (l.schedule == Schedule::interleaved && l.pp > 1) return "schedule";
                  return nullptr;
                },
                {}};
  for (int threads : {1, 2}) {
    o.threads = threads;
    const SearchResult r = search_layouts(model, c.gpus(), o);
    CHECK(r.evaluated == all.evaluated);
    CHECK(r.launcher_refused == zero_one + interleaved);
    CHECK(r.feasible == all.feasible - zero_one - interleaved);
    CHECK(r.rejected.at("Fake cannot run it: zero") == zero_one);
    CHECK(r.rejected.at("Fake cannot run it: schedule") == interleaved);
    // The ranking is the unfiltered one without the refused layouts, in the same order.
    std::vector<std::string> expected, got;
    for (const Estimate& e : all.ranked)
      if (e.layout.zero != 1 && !(e.layout.schedule == Schedule::interleaved && e.layout.pp > 1))
        expected.push_back(to_string(e.layout));
    for (const Estimate& e : r.ranked) got.push_back(to_string(e.layout));
    CHECK(got == expected);
  }
}

TEST_CASE("when the launcher refuses every layout that fits, the reason says so") {
  const ModelSpec m = gpt_like(8, 256, 4, 1000, 128);
  const ClusterSpec c = two_level_cluster(1);
  const TrainingSpec t{128, 16, Precision::bf16};
  CostModel model(m, c, CalibrationProfile{}, t);
  SearchOptions o;
  o.launcher = {"Fake",
                [](const ModelSpec&, const TrainingSpec&, const Layout& l) -> const char* {
                  return l.pp > 1 ? "pp" : "tp";
                },
                {}};
  const SearchResult r = search_layouts(model, c.gpus(), o);
  REQUIRE(r.ranked.empty());
  const NoLayoutReason why = explain_no_layout(r, m, t, c.gpus(), o);
  CHECK(why.kind == NoLayoutKind::launcher);
  CHECK(why.launcher_refused == r.launcher_refused);
  const int64_t pp = r.rejected.at("Fake cannot run it: pp");
  const int64_t tp = r.rejected.at("Fake cannot run it: tp");
  CHECK(pp + tp == r.launcher_refused);
  const std::string most = pp >= tp ? fmt::format("pp ({} layouts), tp ({} layouts)", pp, tp)
                                    : fmt::format("tp ({} layouts), pp ({} layouts)", tp, pp);
  CHECK(why.text == fmt::format("launcher: {} layouts fit, but Fake cannot run any of them; it "
                                "refuses {} (export --format says why; --any-launcher ranks "
                                "them anyway)",
                                r.launcher_refused, most));
}

TEST_CASE(
    "recompute counts: block counts in multiples of vpp, none beside selective unless pinned") {
  // 8 layers on pp = 2 (4 per stage), vpp = 2: recompute none with 0, 2 or 4 full layers,
  // selective, full. Standard attention, whose scores selective recompute drops.
  ModelSpec m = gpt_like(8, 256, 4, 1000, 128);
  m.attention = AttentionKind::standard;
  const ClusterSpec c = two_level_cluster(1);
  const TrainingSpec t{128, 16, Precision::bf16};
  CostModel model(m, c, CalibrationProfile{}, t);
  SearchOptions o;
  o.top_k = 1000000;
  o.fix = parse_layout_fix("tp=1,pp=2,vpp=2,cp=1,mbs=1,zero=1,order=tp-cp-dp-pp").value();
  std::multiset<std::pair<int, int64_t>> seen;  // (recompute, recompute_layers)
  for (const Estimate& e : search_layouts(model, c.gpus(), o).ranked)
    seen.insert({static_cast<int>(e.layout.recompute), e.layout.recompute_layers});
  const std::multiset<std::pair<int, int64_t>> expected = {
      {static_cast<int>(Recompute::none), 0},
      {static_cast<int>(Recompute::none), 2},
      {static_cast<int>(Recompute::none), 4},
      {static_cast<int>(Recompute::selective), 0},
      {static_cast<int>(Recompute::full), 0}};
  CHECK(std::set<std::pair<int, int64_t>>(seen.begin(), seen.end()) ==
        std::set<std::pair<int, int64_t>>(expected.begin(), expected.end()));
  // A pinned count is searched with selective too, and need not be a multiple of vpp.
  o.fix = parse_layout_fix("tp=1,pp=2,vpp=2,cp=1,mbs=1,zero=1,recompute_layers=3").value();
  bool selective = false;
  for (const Estimate& e : search_layouts(model, c.gpus(), o).ranked) {
    CHECK(e.layout.recompute_layers == 3);
    selective = selective || e.layout.recompute == Recompute::selective;
  }
  CHECK(selective);
  // A framework without the block method (torchtitan) offers no count at all.
  CostOptions titan;
  apply_framework(find_framework("torchtitan").value(), titan);
  CostModel tt(m, c, CalibrationProfile{}, t, titan);
  o.fix = parse_layout_fix("tp=1,pp=2,cp=1,mbs=1,zero=2").value();
  for (const Estimate& e : search_layouts(tt, c.gpus(), o).ranked)
    CHECK(e.layout.recompute_layers == 0);
}

TEST_CASE("fields never searched take the value --fix pins on every candidate that can carry it") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  TrainingSpec t{4096, 64, Precision::bf16};
  SearchResult r =
      framework_search(m, two_level_cluster(4), t, "megatron-core",
                       "tp=1,pp=1,mbs=1,zero=1,dispatch=allgather,act_offload=1", 1000);
  REQUIRE(!r.ranked.empty());
  for (const Estimate& e : r.ranked) {
    CHECK(e.layout.dispatch == Dispatch::allgather);
    CHECK(e.layout.act_offload == 1);
    CHECK(e.layout.ep > 1);
  }
  // Candidates without expert parallelism cannot dispatch: skipped and counted.
  CHECK(r.skipped.at("dispatch_needs_ep") > 0);
}

TEST_CASE(
    "pinned recompute modules are searched with selective even where the core drops nothing") {
  const ModelSpec m = shipped_model("llama3-8b");  // flash attention, BF16
  const SearchResult r =
      framework_search(m, two_level_cluster(1), {4096, 64, Precision::bf16}, "megatron-core",
                       "tp=2,pp=1,mbs=1,zero=1,recompute=selective,recompute_modules=mlp", 1000);
  REQUIRE(!r.ranked.empty());
  for (const Estimate& e : r.ranked) CHECK(e.layout.recompute_modules == bit(RecomputeModule::mlp));
}
