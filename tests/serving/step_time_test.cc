// Step time: decode of one sequence is weight-bandwidth bound; prefill is compute bound; TP adds
// two all-reduces per layer.
#include "serving/step_time.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "planner/gemm_model.h"
#include "planner/profile_lookup.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::serving;
using meshplan::testing::shipped_cluster;
using meshplan::testing::shipped_model;

namespace {

CalibrationProfile profile_of(const ClusterSpec& c) {
  Result<CalibrationProfile> p = resolve_profile(c, "", ProfileSearchPath{});
  REQUIRE(p.ok());
  return p.value();
}

StepBatch one_decode(double context) {
  StepBatch b;
  b.decodes = 1;
  b.sampled = 1;
  b.decode_context_tokens = context;
  return b;
}

// The same decode with no row sampling a token (no LM head, no logits gathered): the layers'
// communication alone.
StepBatch one_unsampled_decode() {
  StepBatch b = one_decode(0);
  b.sampled = 0;
  return b;
}

}  // namespace

TEST_CASE(
    "step time: a batch-1 decode of llama3-8b reads every BF16 weight once at read bandwidth") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  const StepBreakdown t = model.time(one_decode(0));
  // 32 layers × 218,103,808 linear weights + the 128,256 × 4096 LM head, two bytes each.
  const double weight_bytes = 2 * (32.0 * 218'103'808 + 128'256.0 * 4096);
  // H100 read bandwidth: the profile's 2575 GB/s (h100-published.yaml hbm_GBps).
  CHECK(read_bandwidth(p, c.gpu) == doctest::Approx(2575e9));
  CHECK(t.gemm_s == doctest::Approx(weight_bytes / read_bandwidth(p, c.gpu)).epsilon(0.001));
  CHECK(t.communication_s == 0);
  CHECK(t.overhead_s == 0);
}

TEST_CASE("step time: decode attention reads the cached K/V at read bandwidth") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  const double context = 1e6;  // one million cached tokens over the batch
  const StepBreakdown t = model.time(one_decode(context));
  // 2 · 8 heads · 128 · 2 bytes per token and layer, 32 layers, each layer's kernel after its
  // fixed cost.
  CHECK(t.attention_s ==
        doctest::Approx(context * 4096 * 32 / read_bandwidth(p, c.gpu) + 32 * kKernelLatencyS)
            .epsilon(1e-9));
}

TEST_CASE("step time: a sliding-window layer's decode reads its window's K/V only") {
  ModelSpec m = shipped_model("llama3-8b");
  m.window = AttentionWindow{4096, WindowKind::sliding, 2};  // 16 local layers of 32
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  StepBatch b;
  b.add_decode(m.window, 1'000'000);  // one sequence of a million tokens
  b.sampled = 1;
  CHECK(b.decode_local_tokens == 4096);
  // Half the layers read 1,000,000 tokens, half 4,096: 4,096 bytes per token and layer, and
  // each of the 32 layers' kernels its fixed cost.
  CHECK(model.time(b).attention_s ==
        doctest::Approx((1e6 + 4096) / 2 * 4096 * 32 / read_bandwidth(p, c.gpu) +
                        32 * kKernelLatencyS)
            .epsilon(1e-9));
}

TEST_CASE(
    "step time: FP8 weights halve the bytes a batch-1 decode reads of the layers, the LM head's "
    "stay BF16") {
  const ModelSpec m = shipped_model("llama3-70b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout l;
  l.tp = 2;
  ServingOptions bf16, fp8;
  fp8.weights = WeightFormat::fp8;
  const double t16 = StepTimeModel(m, c, p, l, bf16, HostOverhead{}).time(one_decode(0)).gemm_s;
  const double t8 = StepTimeModel(m, c, p, l, fp8, HostOverhead{}).time(one_decode(0)).gemm_s;
  // The LM head stays BF16, so a little more than half.
  CHECK(t8 / t16 > 0.5);
  CHECK(t8 / t16 < 0.53);
  // FP8 saves one byte per layer weight: 80 layers of 855,638,016 (q and o 8192², k and v
  // 8192 × 1024 each, gate and up 8192 × 28,672 each, down 28,672 × 8192), halved by tp 2; the
  // LM head (128,256 × 8192) reads its BF16 bytes either way, as the kernels' fixed costs are.
  CHECK(t16 - t8 ==
        doctest::Approx(80 * 855'638'016.0 / 2 / read_bandwidth(p, c.gpu)).epsilon(1e-6));
}

TEST_CASE("step time: tp adds two all-reduces per layer, the host overhead is added once") {
  const ModelSpec m = shipped_model("llama3-70b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  CalibrationProfile p = profile_of(c);
  p.peer_all_reduce = {};  // NCCL's all-reduce alone
  ServingLayout l;
  l.tp = 8;
  const StepBreakdown t = StepTimeModel(m, c, p, l, ServingOptions{}, HostOverhead{1e-3, 0})
                              .time(one_unsampled_decode());
  const CollectiveModel coll(p, c);
  const double one = coll.time_s(Collective::all_reduce, GroupShape::of(8, 1), 8192 * 2);
  CHECK(t.communication_s == doctest::Approx(2 * 80 * one));
  CHECK(t.overhead_s == 1e-3);
}

TEST_CASE("step time: a q/k norm over the whole layer adds an all-reduce of its mean squares") {
  // MiniMax-M2.5 (62 layers) on tp 8: vLLM's MiniMaxText01RMSNormTP all-reduces a (tokens, 2)
  // FP32 tensor in every layer; per-head norms stay on each rank.
  Result<ModelSpec> loaded =
      load_model(std::string(MESHPLAN_SOURCE_DIR) + "/models/minimax-m2.5.yaml");
  REQUIRE(loaded.ok());
  ModelSpec per_layer = loaded.value(), per_head = per_layer;
  per_head.qk_norm = QkNorm::per_head;
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  CalibrationProfile p = profile_of(c);
  p.peer_all_reduce = {};
  ServingLayout l;
  l.tp = 8;
  StepBatch batch = one_unsampled_decode();
  batch.decodes = 4;
  const double with = StepTimeModel(per_layer, c, p, l, ServingOptions{}, HostOverhead{})
                          .time(batch)
                          .communication_s;
  const double without = StepTimeModel(per_head, c, p, l, ServingOptions{}, HostOverhead{})
                             .time(batch)
                             .communication_s;
  const CollectiveModel coll(p, c);
  CHECK(with - without ==
        doctest::Approx(62 * coll.time_s(Collective::all_reduce, GroupShape::of(8, 1), 4 * 2 * 4)));
  // One GPU has nothing to reduce.
  l.tp = 1;
  CHECK(StepTimeModel(per_layer, c, p, l, ServingOptions{}, HostOverhead{})
            .time(batch)
            .communication_s == 0);
}

TEST_CASE(
    "step time: under tp the sampled rows' logits are all-gathered and every rank samples the "
    "whole vocabulary") {
  const ModelSpec m = shipped_model("llama3-70b");  // vocabulary 128,256
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  CalibrationProfile p = profile_of(c);
  p.peer_all_reduce = {};
  StepBatch sampled = one_unsampled_decode(), unsampled = one_unsampled_decode();
  sampled.decodes = unsampled.decodes = 64;
  sampled.sampled = 64;
  const CollectiveModel coll(p, c);
  const double hbm = read_bandwidth(p, c.gpu);
  for (int64_t tp : {1, 8}) {
    CAPTURE(tp);
    ServingLayout l;
    l.tp = tp;
    const StepTimeModel model(m, c, p, l, ServingOptions{}, HostOverhead{});
    const StepBreakdown with = model.time(sampled), without = model.time(unsampled);
    // 64 rows × 128,256 BF16 logits through one all-gather over the 8 ranks (none at tp 1).
    const double gather =
        tp == 1 ? 0 : coll.time_s(Collective::all_gather, GroupShape::of(8, 1), 64 * 128'256 * 2);
    CHECK(with.communication_s - without.communication_s == doctest::Approx(gather));
    // Their FP32 copy written and read back, whole on every rank: one kernel (3.4 µs fixed cost).
    CHECK(with.other_s - without.other_s == doctest::Approx(3.4e-6 + 2 * 64 * 128'256 * 4.0 / hbm));
  }
}

TEST_CASE("step time: a decode's all-reduce in one node takes the engine's peer kernel") {
  const ModelSpec m = shipped_model("llama3-70b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);  // h100-published: 6.7 µs, 402 GB/s
  REQUIRE(p.peer_all_reduce.known());
  ServingLayout l;
  l.tp = 8;
  const StepBreakdown t =
      StepTimeModel(m, c, p, l, ServingOptions{}, HostOverhead{}).time(one_unsampled_decode());
  // One token's 16 KiB: one-shot 6.7 µs + 7 · 16384 B / 402 GB/s, against NCCL's 25 µs fit.
  const double peer = 6.7e-6 + 7 * 16384 / 402e9;
  const CollectiveModel coll(p, c);
  CHECK(coll.time_s(Collective::all_reduce, GroupShape::of(8, 1), 16384) > 3 * peer);
  CHECK(t.communication_s == doctest::Approx(2 * 80 * peer));
  // A 1024-token prefill's 16 MiB is above the kernel's 8 MiB: NCCL's all-reduce.
  StepBatch prefill;
  prefill.chunks.push_back({1024, 0});
  const StepBreakdown p16 =
      StepTimeModel(m, c, p, l, ServingOptions{}, HostOverhead{}).time(prefill);
  const double nccl = coll.time_s(Collective::all_reduce, GroupShape::of(8, 1), 1024 * 8192 * 2);
  CHECK(p16.communication_s == doctest::Approx(2 * 80 * nccl));
  // A 512-token chunk's 8 MiB is the kernel's max_size itself, which it does not take
  // (should_custom_ar: inp_size < max_size): NCCL's as well.
  StepBatch chunk;
  chunk.chunks.push_back({512, 0});
  const StepBreakdown p8 = StepTimeModel(m, c, p, l, ServingOptions{}, HostOverhead{}).time(chunk);
  const double nccl8 = coll.time_s(Collective::all_reduce, GroupShape::of(8, 1), 512 * 8192 * 2);
  CHECK(p8.communication_s == doctest::Approx(2 * 80 * nccl8));
}

TEST_CASE("step time: the host overhead grows by its per-sequence part for each decode and chunk") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{5e-4, 1e-5});
  StepBatch b = one_decode(1000);
  b.decodes = 30;
  b.chunks = {{256, 0}, {128, 512}};
  // 0.5 ms + 10 µs × (30 decodes + 2 prompt chunks).
  CHECK(model.time(b).overhead_s == doctest::Approx(5e-4 + 32 * 1e-5));
}

TEST_CASE("step time: a skinny GEMM takes the CTA tile that leaves fewest SMs idle") {
  // 256 × 4096 on 132 SMs: 2 × 16 = 32 tiles of 128×256 (32/132 busy); 64×128 tiles make
  // 4 × 32 = 128 (128/132).
  CHECK(wave_efficiency(256, 4096, 1, 132) == doctest::Approx(32.0 / 132));
  CHECK(best_tile_wave_efficiency(256, 4096, 1, 132) == doctest::Approx(128.0 / 132));
  // 8192 × 8192: 128×256 tiles, 1,024 in 8 waves of 132 (1024/1056 = 0.970); 64×128 tiles,
  // 128 × 64 = 8,192 in 63 waves (8192/8316 = 0.985), the best.
  CHECK(wave_efficiency(8192, 8192, 1, 132) == doctest::Approx(1024.0 / 1056));
  CHECK(best_tile_wave_efficiency(8192, 8192, 1, 132) == doctest::Approx(8192.0 / 8316));
  CHECK(best_tile_wave_efficiency(16, 4096, 1, 0) == 1);
}

TEST_CASE("step time: a long prefill is compute bound, near 2 · params · tokens / GEMM peak") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  StepBatch b;
  b.chunks.push_back({8192, 0});
  b.sampled = 1;
  const StepBreakdown t = model.time(b);
  const double peak = 0.803 * 989e12 * 0.848;  // h100-published: efficiency × peak × sustained
  // At or a little above (wave quantization over 132 SMs costs up to a few percent here).
  const double ideal = 2 * 32.0 * 218'103'808 * 8192 / peak;
  CHECK(t.gemm_s >= ideal);
  CHECK(t.gemm_s <= 1.06 * ideal);
  CHECK(t.attention_s > 0);
}

TEST_CASE(
    "step time: a MoE layer under attention TP pays two all-reduces whatever its ep, and under "
    "attention-DP its tokens go to their experts by all-to-all") {
  const ModelSpec m = shipped_model("mixtral-8x7b");  // 32 MoE layers, hidden 4096, top-2
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  CalibrationProfile p = profile_of(c);
  p.peer_all_reduce = {};  // NCCL's all-reduce alone
  const CollectiveModel coll(p, c);
  const double all_reduce = coll.time_s(Collective::all_reduce, GroupShape::of(8, 1), 4096 * 2);
  const StepBatch b = one_unsampled_decode();
  for (int64_t ep : {1, 2, 8}) {
    ServingLayout l;
    l.tp = 8;
    l.ep = ep;
    CAPTURE(ep);
    // Every rank holds the token after attention's all-reduce; its experts' partial sums meet in
    // the MLP's.
    CHECK(StepTimeModel(m, c, p, l, ServingOptions{}, HostOverhead{}).time(b).communication_s ==
          doctest::Approx(2 * 32 * all_reduce));
  }
  ServingLayout adp;
  adp.tp = 8;
  adp.ep = 8;
  adp.attention_dp = true;
  // Each rank's tokens (1/8 of the batch) to their top-2 experts' ranks and back.
  const double routed = 4096.0 * 2 / 8 * 2;
  CHECK(
      StepTimeModel(m, c, p, adp, ServingOptions{}, HostOverhead{}).time(b).communication_s ==
      doctest::Approx(32 * 2 * coll.time_s(Collective::all_to_all, GroupShape::of(8, 1), routed)));
}

TEST_CASE("step time: MoE decode reads only the experts its tokens touch") {
  const ModelSpec m = shipped_model("mixtral-8x7b");  // 8 experts, top-2
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  StepBatch one = one_decode(0), many = one_decode(0);
  many.decodes = 64;
  many.sampled = 64;
  // One token touches 2 of 8 experts; 64 tokens touch 8·(1 − 0.75^64) ≈ all 8.
  const double t1 = model.time(one).gemm_s, t64 = model.time(many).gemm_s;
  CHECK(t64 / t1 > 2.5);
  CHECK(t64 / t1 < 4.0);
}

TEST_CASE("step time: MoE layers add the routing permute and unpermute") {
  const ModelSpec m = shipped_model("mixtral-8x7b");  // 32 MoE layers, hidden 4096, top-2
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  const StepTimeModel model(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  StepBatch b;
  b.decodes = 4096;  // no LM head rows: other_s is the layers' memory-bound kernels only
  b.decode_context_tokens = 4096;
  // a = 4096 tokens × 4096 × 2 bytes. Per layer: 4 small kernels of 2a, and the permute and
  // unpermute, each the token's a plus its top-2 rows' 2a; each of the six kernels after its
  // fixed cost.
  const double a = 4096.0 * 4096 * 2;
  CHECK(model.time(b).other_s ==
        doctest::Approx(
            32 * ((4 * 2 * a + 2 * 3 * a) / read_bandwidth(p, c.gpu) + 6 * kKernelLatencyS)));
}

TEST_CASE("step time: one sequence on pp = 2 reads each stage's weights and the LM head once") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout two;
  two.pp = 2;
  const StepTimeModel pp1(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  const StepTimeModel pp2(m, c, p, two, ServingOptions{}, HostOverhead{});
  const StepBreakdown t1 = pp1.time(one_decode(0));
  const StepBreakdown t2 = pp2.time(one_decode(0));
  // One micro-batch through both stages of 16 layers: the same layer weights as pp = 1's 32, and
  // the last stage's LM head (128,256 × 4096 BF16) once, as pp = 1 (pp times before 2026-12-02).
  const double head_s = 2 * 128'256.0 * 4096 / read_bandwidth(p, c.gpu);
  CHECK(t2.gemm_s == doctest::Approx(t1.gemm_s).epsilon(1e-12));
  CHECK(t2.gemm_s - pp2.time(one_unsampled_decode()).gemm_s ==
        doctest::Approx(head_s).epsilon(0.01));
  // Two hops: stage 0 → 1, and the sampled token back to stage 0.
  const CollectiveModel coll(p, c);
  CHECK(t2.communication_s == doctest::Approx(2 * coll.p2p_time_s(1, 0.5 * 4096 * 2)));
}

TEST_CASE("step time: a pipeline round lasts one micro-batch's way or the last stage's work") {
  // A stage of 10 ms, a head of 4 ms, hops of 1 ms, on 4 stages. One micro-batch: its way,
  // 4 × (10 + 1) + 4 = 48 ms (the last stage's work, 15 ms, is less). Four: 4 × 15 = 60 ms.
  // Three with a head of 30 ms: the last stage's 3 × 41 = 123 ms against a way of 74 ms.
  StepBreakdown stage, head;
  stage.gemm_s = 0.010;
  head.gemm_s = 0.004;
  CHECK(pipeline_round(stage, head, 0.001, 4, 1).total_s() == doctest::Approx(0.048));
  CHECK(pipeline_round(stage, head, 0.001, 4, 4).total_s() == doctest::Approx(0.060));
  head.gemm_s = 0.030;
  CHECK(pipeline_round(stage, head, 0.001, 4, 3).total_s() == doctest::Approx(0.123));
  CHECK(pipeline_round(stage, head, 0.001, 1, 1).total_s() == doctest::Approx(0.040));
}

TEST_CASE("step time: under pp = 4 a step of fewer sequences runs one micro-batch each") {
  // One decode at 8,000 cached tokens: one micro-batch through four stages of 8 layers reads its
  // K/V in all 32 layers, as pp = 1 does (split into four quarter-sequences it read a quarter).
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout four;
  four.pp = 4;
  const StepTimeModel pp1(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  const StepTimeModel pp4(m, c, p, four, ServingOptions{}, HostOverhead{});
  CHECK(micro_batches(one_decode(8000), 4) == 1);
  CHECK(pp4.time(one_decode(8000)).attention_s == pp1.time(one_decode(8000)).attention_s);
  // Two decodes at 8,000 each: two micro-batches of one; eight or more: four.
  StepBatch two = one_decode(8000);
  two.add_decode(std::nullopt, 8000);
  CHECK(micro_batches(two, 4) == 2);
  // Two micro-batches of one sequence pass the four stages side by side: a round takes one
  // sequence's attention through 32 layers, half of pp = 1's for both.
  CHECK(pp4.time(two).attention_s == doctest::Approx(pp1.time(two).attention_s / 2));
  StepBatch eight;
  for (int i = 0; i < 8; ++i) eight.add_decode(std::nullopt, 8000);
  CHECK(micro_batches(eight, 4) == 4);
  // The decode-only price answers the same (its attention term divides by the micro-batches).
  const DecodeStepPrice price = pp4.decode_price(1, 1);
  CHECK(price.micro_batches == 1);
  CHECK(price.step_s(8000, 8000) == pp4.time(one_decode(8000)).total_s());
}

TEST_CASE("step time: under pp = 2 a lone prompt chunk stays whole, through every layer") {
  // 4,000 tokens of one prompt, none sampled (no LM head): on pp = 2 one micro-batch carries
  // them all through both stages of 16 layers, the same GEMMs, attention and small kernels as
  // pp = 1's 32 layers, plus the hops; split in two micro-batches it would cost about half.
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout two;
  two.pp = 2;
  StepBatch lone;
  lone.chunks.push_back({4000, 0});
  const StepBreakdown t1 =
      StepTimeModel(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{}).time(lone);
  const StepTimeModel pp2(m, c, p, two, ServingOptions{}, HostOverhead{});
  const StepBreakdown t2 = pp2.time(lone);
  CHECK(t2.gemm_s == t1.gemm_s);
  CHECK(t2.attention_s == t1.attention_s);
  CHECK(t2.other_s == t1.other_s);
  const CollectiveModel coll(p, c);
  CHECK(t2.communication_s == doctest::Approx(2 * coll.p2p_time_s(1, 4000.0 * 4096 * 2)));
  // Two prompts of 2,000 tokens: one in each micro-batch, each half the tokens.
  StepBatch pair;
  pair.chunks = {{2000, 0}, {2000, 0}};
  const StepBreakdown halves = pp2.time(pair);
  CHECK(halves.gemm_s < 0.6 * t2.gemm_s);
}

TEST_CASE("step time: the LM head's and the pipeline hop's kept costs answer as computed anew") {
  // tp 2, pp 2: the head's rows (the sampling sequences) are kept apart from the layers' token
  // count, the hops with the layers. A step of 64 decodes and a 100-token prompt chunk samples
  // 64 rows over 164 tokens; asked after others sharing their slots, and of a fresh model, it
  // costs the same.
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout l;
  l.tp = 2;
  l.pp = 2;
  auto step = [](int64_t decodes, int64_t chunk) {
    StepBatch b = one_decode(1000);
    b.decodes = decodes;
    b.decode_context_tokens = 1000.0 * static_cast<double>(decodes);
    b.chunks = {{chunk, 0}};
    b.sampled = decodes;
    return b;
  };
  const StepTimeModel used(m, c, p, l, ServingOptions{}, HostOverhead{});
  auto anew = [&](const StepBatch& b) {
    return StepTimeModel(m, c, p, l, ServingOptions{}, HostOverhead{}).time(b).total_s();
  };
  const StepBreakdown first = used.time(step(64, 100));
  CHECK(first.communication_s > 0);
  // The head's slot (rows 32 and 1,056 per stage), then the layers' (82 and 1,106 tokens).
  for (const StepBatch& b : {step(64 + 2048, 100), step(64, 100 + 2048), step(64, 100)})
    CHECK(used.time(b).total_s() == anew(b));
  CHECK(used.time(step(64 + 2048, 100)).total_s() > first.total_s());
}

TEST_CASE("step time: a token count asked again after others in its memo slot costs the same") {
  // The layer costs are kept per token count modulo 1,024 slots: 64 decodes, then 64 + 1,024
  // (the same slot), then 64 again must give the first answer exactly, and a fresh model the
  // same as a used one.
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  auto decodes = [](int64_t n) {
    StepBatch b = one_decode(1000);
    b.decodes = n;
    b.sampled = n;
    b.decode_context_tokens = 1000.0 * static_cast<double>(n);
    return b;
  };
  const StepTimeModel used(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  const double first = used.time(decodes(64)).total_s();
  const double other = used.time(decodes(64 + 1024)).total_s();
  CHECK(other > first);
  CHECK(used.time(decodes(64)).total_s() == first);
  CHECK(used.time(decodes(64 + 1024)).total_s() == other);
  const StepTimeModel fresh(m, c, p, ServingLayout{}, ServingOptions{}, HostOverhead{});
  CHECK(fresh.time(decodes(64 + 1024)).total_s() == other);
}

TEST_CASE(
    "step time: a decode-only step priced from its fixed terms is the step model's, bit for bit") {
  // decode_price computes a run's GEMM, communication, small-kernel, LM-head, hop and host terms
  // once and attention per step; each step must cost exactly what time() answers for the batch:
  // dense with tp 2 / pp 2 and TensorRT-LLM's host costs, MoE with local attention (Llama 4
  // Scout's chunks: local keys fewer than the context), MLA under attention-DP.
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const CalibrationProfile p = profile_of(c);
  struct Case {
    const char* model;
    ServingLayout layout;
  };
  ServingLayout dense;
  dense.tp = 2;
  dense.pp = 2;
  ServingLayout moe;
  moe.tp = 8;
  moe.ep = 8;
  ServingLayout mla = moe;
  mla.attention_dp = true;
  ServingOptions fp8;
  fp8.weights = WeightFormat::fp8;
  fp8.kv = KvFormat::fp8;
  for (const Case& k :
       {Case{"llama3-8b", dense}, Case{"llama4-scout", moe}, Case{"deepseek-v3", mla}}) {
    CAPTURE(k.model);
    const StepTimeModel model(shipped_model(k.model), c, p, k.layout, fp8,
                              engine_preset(Engine::trtllm).host);
    for (const int64_t decodes : {1, 7, 64, 300}) {
      for (const int64_t sampled : {decodes, decodes - 1}) {
        const DecodeStepPrice price = model.decode_price(decodes, sampled);
        for (const double context : {0.0, 1.0, 12'345.0, 3.3e6}) {
          CAPTURE(decodes);
          CAPTURE(sampled);
          CAPTURE(context);
          StepBatch b;
          b.decodes = decodes;
          b.sampled = sampled;
          b.decode_context_tokens = context;
          b.decode_local_tokens = std::floor(context / 3);
          CHECK(price.step_s(context, b.decode_local_tokens) == model.time(b).total_s());
        }
      }
    }
  }
}

// StepTimeModel::step_ops: the step's time op by op, each op's seconds × how many the stage
// runs adding up to time(batch) and to each of its components.
TEST_CASE("step ops: a DeepSeek-V3 decode step op by op adds up to the step and its parts") {
  const ModelSpec m = shipped_model("deepseek-v3");
  const ClusterSpec c = shipped_cluster("dgx-h200-64n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout l;
  l.tp = 8, l.ep = 8;
  const StepTimeModel model(m, c, p, l, ServingOptions{}, HostOverhead{1e-3, 2e-6});
  StepBatch b;
  for (int i = 0; i < 64; ++i) b.add_decode(m.window, 1536);
  b.sampled = 64;
  const StepOps ops = model.step_ops(b);
  const StepBreakdown t = model.time(b);
  CHECK(ops.total.total_s() == t.total_s());
  CHECK(ops.tokens == 64);
  CHECK(ops.stage_dense_layers == 3);  // DeepSeek-V3's first three layers are dense
  CHECK(ops.stage_moe_layers == 58);
  std::array<double, 5> by_kind{};  // gemm, attention, memory, communication, host
  auto add = [&](const std::vector<StepOp>& list, double count) {
    for (const StepOp& op : list) by_kind[static_cast<size_t>(op.kind)] += op.seconds * count;
  };
  add(ops.dense, ops.stage_dense_layers);
  add(ops.moe, ops.stage_moe_layers);
  by_kind[1] += ops.attention_layer_s * (ops.stage_dense_layers + ops.stage_moe_layers);
  add(ops.head, 1);
  add(ops.host, 1);
  CHECK(by_kind[0] == doctest::Approx(t.gemm_s).epsilon(1e-12));
  CHECK(by_kind[1] == doctest::Approx(t.attention_s).epsilon(1e-12));
  CHECK(by_kind[2] == doctest::Approx(t.other_s).epsilon(1e-12));
  CHECK(by_kind[3] == doctest::Approx(t.communication_s).epsilon(1e-12));
  // The host's work: 1 ms a step + 2 µs for each of the 64 sequences.
  CHECK(by_kind[4] == doctest::Approx(1e-3 + 64 * 2e-6).epsilon(1e-12));
  // The routed experts' GEMMs are named as theirs, the shared experts' too.
  int routed = 0, shared = 0;
  for (const StepOp& op : ops.moe) {
    routed += std::string_view(op.of) == "routed experts";
    shared += std::string_view(op.of) == "shared experts";
  }
  CHECK(routed == 2);  // up (gate and up fused) and down
  CHECK(shared == 2);
}

// A prompt step's routed experts are bound by their math, which runs at the engine's fused-MoE
// share of the dense rate (engine_preset.h MoeGemmEfficiency); the dense maps keep the dense rate
// and a decode's experts, bound by reading their weights, are priced alike on every engine.
TEST_CASE(
    "step time: a prompt step's routed experts run at the engine's fused-MoE share of the rate") {
  const ModelSpec m = shipped_model("mixtral-8x7b");
  const ClusterSpec c = shipped_cluster("dgx-h200-64n");
  const CalibrationProfile p = profile_of(c);
  ServingLayout l;
  l.tp = 1;
  auto ops_of = [&](Engine e, const StepBatch& b) {
    ServingOptions o;
    o.engine = e;
    return StepTimeModel(m, c, p, l, o, HostOverhead{}).step_ops(b);
  };
  auto seconds = [](const StepOps& ops, std::string_view name, std::string_view of) {
    for (const StepOp& op : ops.moe)
      if (op.name == name && op.of == of) return op.seconds - kKernelLatencyS;
    FAIL("no op " << name);
    return 0.0;
  };
  StepBatch prompt;
  prompt.chunks.push_back({8192, 0});
  prompt.sampled = 1;
  const StepOps vllm = ops_of(Engine::vllm, prompt), sglang = ops_of(Engine::sglang, prompt);
  // 8,192 tokens × top-2 over 8 experts: 2,048 rows each, far past the weights' reads. Each
  // expert 14,336 wide on the one rank: 2^13.807, between the curves' points at 2^13 and 2^14.
  const double vllm_share = engine_preset(Engine::vllm).moe_gemm.bf16.at(14336);
  const double sglang_share = engine_preset(Engine::sglang).moe_gemm.bf16.at(14336);
  const double f = std::log2(14336.0) - 13;
  CHECK(vllm_share == doctest::Approx(0.761 + f * (0.750 - 0.761)));    // 0.752
  CHECK(sglang_share == doctest::Approx(0.539 + f * (0.525 - 0.539)));  // 0.528
  CHECK(seconds(sglang, "mlp_up", "routed experts") / seconds(vllm, "mlp_up", "routed experts") ==
        doctest::Approx(vllm_share / sglang_share).epsilon(1e-12));
  CHECK(seconds(sglang, "mlp_down", "routed experts") /
            seconds(vllm, "mlp_down", "routed experts") ==
        doctest::Approx(vllm_share / sglang_share).epsilon(1e-12));
  // 2 · 2,048 rows · 28,672 · 4,096 per expert, × 8, at that share of the dense rate (the
  // profile's best BF16 efficiency 0.837 × 989 TFLOP/s × the sustained ratio 0.848; full waves).
  const double dense_flops_per_s = 0.837 * 989e12 * 0.848;
  CHECK(seconds(vllm, "mlp_up", "routed experts") ==
        doctest::Approx(2.0 * 2048 * 28672 * 4096 * 8 / (vllm_share * dense_flops_per_s))
            .epsilon(1e-3));
  // On four ranks each expert is split four ways, 3,584 wide: the curves' shares there.
  l.tp = 4;
  const double narrow = engine_preset(Engine::vllm).moe_gemm.bf16.at(3584) /
                        engine_preset(Engine::sglang).moe_gemm.bf16.at(3584);
  CHECK(narrow != doctest::Approx(vllm_share / sglang_share));
  CHECK(seconds(ops_of(Engine::sglang, prompt), "mlp_up", "routed experts") /
            seconds(ops_of(Engine::vllm, prompt), "mlp_up", "routed experts") ==
        doctest::Approx(narrow).epsilon(1e-12));
  l.tp = 1;
  CHECK(seconds(sglang, "qkv", "") == seconds(vllm, "qkv", ""));
  StepBatch decode;
  for (int i = 0; i < 8; ++i) decode.add_decode(m.window, 1024);
  decode.sampled = 8;
  CHECK(seconds(ops_of(Engine::sglang, decode), "mlp_up", "routed experts") ==
        seconds(ops_of(Engine::vllm, decode), "mlp_up", "routed experts"));
}

TEST_CASE(
    "step time: a prompt chunk's attention runs at the engine's own kernel for its cache format, "
    "else at FlashAttention-3's") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  CalibrationProfile p = profile_of(c);
  auto sample = [](const char* kernel, double tflops) {
    return AttentionSample{kernel, 128, 4096, true, tflops * 1e12, 0, 0, "test"};
  };
  p.attention = {sample("fa3", 600), sample("vllm", 400), sample("trtllm-fp8kv", 800)};
  StepBatch b;
  b.chunks.push_back({4096, 0});
  auto attention_s = [&](Engine e, KvFormat kv) {
    ServingOptions o;
    o.engine = e;
    o.kv = kv;
    return StepTimeModel(m, c, p, ServingLayout{}, o, HostOverhead{}).time(b).attention_s;
  };
  // 32 layers, each one kernel: its fixed cost plus the causal FLOPs of 32 heads × (128 + 128)
  // over 4,096 × 2,048 query-key pairs, 2 FLOPs each, at the sample's rate × the profile's
  // sustained share (h100-published.yaml 0.848).
  const double flops = 2.0 * 32 * 256 * 4096 * 2048;
  auto expected = [&](double tflops) {
    return 32 * (kKernelLatencyS + flops / (tflops * 1e12 * 0.848));
  };
  CHECK(attention_s(Engine::vllm, KvFormat::bf16) == doctest::Approx(expected(400)));
  CHECK(attention_s(Engine::trtllm, KvFormat::fp8) == doctest::Approx(expected(800)));
  // No samples for the engine and format: the BF16 kernels' preference, FlashAttention-3 first.
  CHECK(attention_s(Engine::trtllm, KvFormat::bf16) == doctest::Approx(expected(600)));
  CHECK(attention_s(Engine::vllm, KvFormat::fp8) == doctest::Approx(expected(600)));
  CHECK(attention_s(Engine::sglang, KvFormat::bf16) == doctest::Approx(expected(600)));
}
