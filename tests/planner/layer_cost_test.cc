// A layer's context-parallel exchange by variant (Layout::cp_kind), on llama3-8b (32 query
// heads, 8 KV heads of 128) at tp=1, 32K tokens, inside one 8-GPU NVLink node of the test
// cluster with no measured fits: each collective step costs the level's 5 µs and the bytes move
// at 400 GB/s × the default bus efficiency 0.8 (tests/planner/collective_model_test.cc).
#include "planner/layer_cost.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "planner/cost_model.h"
#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

struct Fixture {
  ModelSpec model = testing::shipped_model("llama3-8b");
  ClusterSpec cluster = testing::two_level_cluster(1);
  CalibrationProfile profile;
  CostOptions options;
  GemmModel gemm{profile, cluster.gpu, Precision::bf16, options.fp8_recipe};
  AttentionModel attention{profile, cluster.gpu, options.attention_kernels};
  CollectiveModel net{profile, cluster};
  LayerCostContext context() const {
    LayerCostContext c;
    c.model = &model, c.gemm = &gemm, c.collectives = &net, c.options = &options;
    c.attention = &attention, c.hbm_bytes_per_s = 3e12, c.seq_len = 32768;
    return c;
  }
  // Layer cost at tp=1, cp=4 (ranks 0-3 of the node, stride 1) for `kind`.
  LayerCost cost(CpKind kind, int64_t a2a, int64_t ring) const {
    LayerCostKey key{1, 4, 1, 1, false, false, kind, a2a, ring};
    const GroupShape one = GroupShape::of(1, 1);
    return layer_cost(context(), key, false, {one, GroupShape::of(4, 1), one, one});
  }
};

// An NVLink collective of `steps` steps moving `share` of `bytes`.
double nvlink_s(double steps, double share, double bytes) {
  return steps * 5e-6 + share * bytes / (400e9 * 0.8);
}

constexpr double kTokens = 32768.0 / 4;       // each CP rank's share of the sequence
constexpr double kKvBytes = 2 * 2 * 8 * 128;  // K and V of 8 heads of 128, BF16, per token
constexpr double kQBytes = 2 * 32 * 128;      // query (and output) of 32 heads

// One pass of a2a CP over `group`: Q, K, V in, the output back.
double a2a_pass_s(const Fixture& f, const GroupShape& group) {
  return f.net.time_s(Collective::all_to_all, group, kTokens * (kQBytes + kKvBytes)) +
         f.net.time_s(Collective::all_to_all, group, kTokens * kQBytes);
}

}  // namespace

TEST_CASE(
    "allgather CP: K/V gathered before attention, exposed, backward regathers and "
    "reduce-scatters dK/dV") {
  const Fixture f;
  const LayerCost c = f.cost(CpKind::allgather, 1, 1);
  // 4 ranks: 3 steps, 3/4 of the gathered buffer of 4 ranks' K and V.
  const double gather = nvlink_s(3, 3.0 / 4, 4 * kTokens * kKvBytes);
  CHECK(c.cp_forward_s == doctest::Approx(gather).epsilon(1e-9));
  CHECK(c.cp_backward_s == doctest::Approx(2 * gather).epsilon(1e-9));
}

TEST_CASE("a2a CP (Ulysses): Q, K, V in and the output back by all-to-all, each pass, exposed") {
  const Fixture f;
  const LayerCost c = f.cost(CpKind::a2a, 4, 1);
  const double pass = a2a_pass_s(f, GroupShape::of(4, 1));
  CHECK(c.cp_forward_s == doctest::Approx(pass).epsilon(1e-9));
  CHECK(c.cp_backward_s == doctest::Approx(pass).epsilon(1e-9));
  // All-to-all over 4 ranks: 3 steps, 3/4 of each rank's buffer leaves it.
  CHECK(pass == doctest::Approx(nvlink_s(3, 3.0 / 4, kTokens * (kQBytes + kKvBytes)) +
                                nvlink_s(3, 3.0 / 4, kTokens * kQBytes))
                    .epsilon(1e-9));
}

TEST_CASE(
    "ring CP: cp−1 K/V steps hidden behind attention, a2a's kernel sees the whole "
    "sequence") {
  const Fixture f;
  const LayerCost ring = f.cost(CpKind::ring, 1, 4);
  const double steps = 3 * f.net.ring_step_time_s(GroupShape::of(4, 1), kTokens * kKvBytes);
  CHECK(ring.cp_forward_s ==
        doctest::Approx(exposed_after_overlap(steps, ring.attention_forward_s, 0.7)));
  // At 8K tokens per rank the attention blocks outlast the ring: 30% of it stays exposed.
  CHECK(ring.cp_forward_s == doctest::Approx(0.3 * steps).epsilon(1e-9));
  // Same attention FLOPs per rank; the a2a rank runs 8 heads over 32K tokens, a longer and so no
  // less efficient kernel than 32 heads over 8K.
  const LayerCost a2a = f.cost(CpKind::a2a, 4, 1);
  CHECK(a2a.attention_forward_s <= ring.attention_forward_s);
}

TEST_CASE(
    "causal CP as Transformer Engine runs it: a ring's steps one causal kernel and the rest "
    "unmasked, all-gather's chunks causal in their last tile") {
  const Fixture f;
  // Unmasked kernels faster than causal ones, longer ones faster than shorter.
  CalibrationProfile p;
  auto sample = [](int64_t seq, bool causal, double fwd, double bwd) {
    AttentionSample s;
    s.kernel = "cudnn", s.head_dim = 128, s.seq_len = seq, s.causal = causal;
    s.fwd_flops_per_s = fwd, s.bwd_flops_per_s = bwd;
    return s;
  };
  p.attention = {sample(4096, true, 300e12, 200e12), sample(8192, true, 400e12, 300e12),
                 sample(4096, false, 500e12, 400e12), sample(8192, false, 600e12, 500e12)};
  const AttentionModel attention{p, f.cluster.gpu, f.options.attention_kernels};
  LayerCostContext ctx = f.context();
  ctx.attention = &attention;
  const GroupShape one = GroupShape::of(1, 1);
  const LayerCost c = layer_cost(ctx, LayerCostKey{1, 4, 1, 1, false, false, CpKind::ring, 1, 4},
                                 false, {one, GroupShape::of(4, 1), one, one});
  // 8,192 queries a rank, 16,384 keys each on average (causal over 32K), 32 heads of 128.
  const double flops = 2 * kTokens * 16384 * 32 * (128 + 128);
  const AttentionModel::Times diagonal = attention.time(flops / 4, 128, 8192, true);
  const AttentionModel::Times off = attention.time(3 * flops / 4, 128, 4096, false);
  CHECK(c.attention_forward_s ==
        doctest::Approx(diagonal.forward_s + off.forward_s).epsilon(1e-12));
  // By hand at the samples: (F/4)/400 + (3F/4)/500 TFLOP/s, over the sustained ratio.
  const double over_sustained = attention.time(1e12, 128, 8192, true).forward_s * 400e12 / 1e12;
  CHECK(c.attention_forward_s ==
        doctest::Approx(over_sustained * (flops / 4 / 400e12 + 3 * flops / 4 / 500e12))
            .epsilon(1e-9));
  // One causal kernel over the whole block would take longer.
  CHECK(c.attention_forward_s < attention.time(flops, 128, 8192, true).forward_s);
  // All-gather CP: one kernel per local chunk of 4,096 queries against the gathered keys up to
  // its end, causal in its last 4,096 × 4,096 tile only: 2 of the rank's 8 tiles' halves, 1/8
  // of the FLOPs, causal over 4,096 tokens; the rest unmasked over 4,096.
  const LayerCost g =
      layer_cost(ctx, LayerCostKey{1, 4, 1, 1, false, false, CpKind::allgather, 1, 1}, false,
                 {one, GroupShape::of(4, 1), one, one});
  CHECK(g.attention_forward_s ==
        doctest::Approx(over_sustained * (flops / 8 / 300e12 + 7 * flops / 8 / 500e12))
            .epsilon(1e-9));
}

TEST_CASE("hybrid CP: all-to-all inside groups of cp_a2a, a ring of cp/cp_a2a across them") {
  const Fixture f;
  const LayerCost c = f.cost(CpKind::hybrid, 2, 2);
  const double pass = a2a_pass_s(f, GroupShape::of(2, 1));
  // One ring step between the two groups (stride 2): the same bytes as a ring step of cp=4,
  // twice the tokens with half the heads.
  const double steps = f.net.ring_step_time_s(GroupShape::of(2, 2), kTokens * kKvBytes);
  CHECK(c.cp_forward_s ==
        doctest::Approx(pass + exposed_after_overlap(steps, c.attention_forward_s, 0.7)));
  // Backward: the same all-to-alls, and K/V with their gradients around the ring.
  CHECK(c.cp_backward_s >= pass + 0.3 * 2 * steps - 1e-12);
  CHECK(c.cp_backward_s <= pass + 2 * steps + 1e-12);
}

TEST_CASE("ep_overlap: dispatch and combine hide behind the other micro-batch's opposite pass") {
  // mixtral-8x7b, ep=8 inside the node, 4K tokens: each pass's two all-to-alls of top-2 copies.
  Fixture f;
  f.model = testing::shipped_model("mixtral-8x7b");
  LayerCostContext ctx = f.context();
  ctx.seq_len = 4096;
  const GroupShape one = GroupShape::of(1, 1), ep = GroupShape::of(8, 1);
  const LayerCostKey plain{1, 1, 8, 1, false, false, CpKind::ring, 1, 1, false};
  LayerCostKey overlapped = plain;
  overlapped.ep_overlap = true;
  const LayerCost exposed = layer_cost(ctx, plain, true, {one, one, ep, one});
  const LayerCost hidden = layer_cost(ctx, overlapped, true, {one, one, ep, one});
  const double bytes = 2.0 * 4096 * 2 * f.model.hidden;  // BF16, top-2, capacity factor 1
  const double pass = 2 * f.net.time_s(Collective::all_to_all, ep, bytes);
  CHECK(exposed.ep_forward_s == doctest::Approx(pass).epsilon(1e-12));
  CHECK(exposed.ep_backward_s == doctest::Approx(pass).epsilon(1e-12));
  // The layer's compute outlasts its all-to-alls here: 30% of them stays exposed (the SMs and
  // bandwidth they take from the compute beside them), as with TP overlap.
  CHECK(hidden.ep_forward_s == doctest::Approx(0.3 * pass).epsilon(1e-9));
  CHECK(hidden.ep_backward_s == doctest::Approx(0.3 * pass).epsilon(1e-9));
  CHECK(hidden.forward_s == exposed.forward_s);
}

TEST_CASE("MoE dispatch: DeepEP sends one copy per remote node, group limits shrink it") {
  // DeepSeek-V3 (top-8 of 256 experts, 8 groups, at most 4 per token) with ep = 64 over 8
  // nodes of 8 GPUs. A balanced router lands a token on u·(1 − (1 − 1/u)^8) nodes of the u it
  // may use: 3.60 of 4 with the limit, 5.25 of 8 without.
  ModelSpec m = meshplan::testing::shipped_model("deepseek-v3");
  REQUIRE(m.moe->groups == 8);
  REQUIRE(m.moe->group_limit == 4);
  const double limited = 4 * (1 - std::pow(0.75, 8));
  const double free = 8 * (1 - std::pow(0.875, 8));
  CHECK(limited == doctest::Approx(3.5995).epsilon(1e-4));
  CHECK(free == doctest::Approx(5.2514).epsilon(1e-4));
  ClusterSpec c = meshplan::testing::two_level_cluster(8);
  const TrainingSpec t{4096, 2048, Precision::bf16};
  auto ep_s = [&](const char* text) {
    CostModel model(m, c, CalibrationProfile{}, t);
    Layout l = parse_layout(text).value();
    return model.layer_costs(l).moe.ep_forward_s;
  };
  const double a2a = ep_s("tp=1,ep=64,dp=64");
  const double deepep = ep_s("tp=1,ep=64,dp=64,dispatch=deepep");
  m.moe->group_limit = 0;
  const double deepep_free = ep_s("tp=1,ep=64,dp=64,dispatch=deepep");
  // Cross-node bytes: 8 copies × 7/8 = 7 per token all-to-all; DeepEP 3.60 × 7/8 = 3.15 with
  // the limit, 5.25 × 7/8 = 4.60 without (the network level is the slower one here).
  CHECK(deepep < deepep_free);
  CHECK(deepep_free < a2a);
  CHECK(deepep / a2a == doctest::Approx(limited * 7 / 8 / 7).epsilon(0.02));
  CHECK(deepep_free / a2a == doctest::Approx(free * 7 / 8 / 7).epsilon(0.02));
}

TEST_CASE("MoE dispatch inside a node: DeepEP sends a token once to each rank it lands on") {
  // Qwen3-235B-A22B (top-8 of 128 experts, no group limit) with ep = 8 on one node: a token's
  // eight experts land on 8 · (1 − (7/8)^8) = 5.25 of the 8 ranks, the all-to-all moves all
  // eight copies; both over the same NVLink group, so the time ratio is the byte ratio.
  const ModelSpec m = meshplan::testing::shipped_model("qwen3-235b-a22b");
  const ClusterSpec c = meshplan::testing::two_level_cluster(1);
  const TrainingSpec t{4096, 1024, Precision::bf16};
  auto ep_s = [&](const char* text) {
    CostModel model(m, c, CalibrationProfile{}, t);
    return model.layer_costs(parse_layout(text).value()).moe.ep_forward_s;
  };
  const double a2a = ep_s("tp=1,ep=8,dp=8,mbs=4");
  const double deepep = ep_s("tp=1,ep=8,dp=8,mbs=4,dispatch=deepep");
  CHECK(deepep / a2a == doctest::Approx(8 * (1 - std::pow(0.875, 8)) / 8).epsilon(0.02));
}

TEST_CASE("dropless routing: expert forward and input-gradient GEMMs pay the routed row tiles") {
  // mixtral-8x7b at ep=1, 4,000 tokens: 4000 · 2 / 8 = 1000 rows per expert (eight tiles of
  // 128), eight experts. A capacity factor above 1 pads every expert to its capacity (equal
  // groups); a hair above 1 keeps the rows (and their tiles) and drops the random counts'.
  Fixture f;
  f.model = testing::shipped_model("mixtral-8x7b");
  LayerCostContext ctx = f.context();
  ctx.seq_len = 4000;
  const GroupShape one = GroupShape::of(1, 1);
  const LayerCostKey key{1, 1, 1, 1, false, false, CpKind::ring, 1, 1, false};
  const LayerCost dropless = layer_cost(ctx, key, true, {one, one, one, one});
  f.model.moe->capacity_factor = 1 + 1e-12;
  const LayerCost padded = layer_cost(ctx, key, true, {one, one, one, one});
  const double h = 4096, ffn = 14336, rows = 1000, experts = 8;
  const double forward = f.gemm.time_s(rows, 2 * ffn, h, experts) +  // gate and up, fused
                         f.gemm.time_s(rows, h, ffn, experts);       // down
  const double input_grad =
      f.gemm.time_s(rows, h, 2 * ffn, experts) + f.gemm.time_s(rows, ffn, h, experts);
  const double extra = routed_row_tile_factor(rows) - 1;
  // Poisson(1000) (sd 31.6) passes 1,024 rows with P = 1 − Φ(24.5 / 31.6) = 0.219: a ninth
  // tile a fifth of the time.
  CHECK(extra == doctest::Approx(0.219 / 8).epsilon(0.02));
  CHECK(dropless.forward_s - padded.forward_s == doctest::Approx(extra * forward).epsilon(1e-6));
  CHECK(dropless.backward_s - padded.backward_s ==
        doctest::Approx(extra * input_grad).epsilon(1e-6));
  CHECK(dropless.backward_weight_s == doctest::Approx(padded.backward_weight_s).epsilon(1e-9));
}

namespace {

// layer_compute(…, false) of `model_name` at tp 8, 4,096 tokens, for each (ep, etp).
std::vector<LayerCompute> dense_computes(const std::string& model_name,
                                         const std::vector<std::pair<int64_t, int64_t>>& degrees) {
  Fixture f;
  f.model = testing::shipped_model(model_name);
  LayerCostContext c = f.context();
  c.seq_len = 4096;
  std::vector<LayerCompute> out;
  for (const auto& [ep, etp] : degrees) {
    LayerCostKey key{8, 1, ep, 1, true};
    key.etp = etp;
    out.push_back(layer_compute(c, key, false));
  }
  return out;
}

bool same_compute(const LayerCompute& a, const LayerCompute& b) {
  return a.gemm_forward_s == b.gemm_forward_s && a.gemm_input_grad_s == b.gemm_input_grad_s &&
         a.gemm_weight_grad_s == b.gemm_weight_grad_s &&
         a.attention_forward_s == b.attention_forward_s &&
         a.attention_backward_s == b.attention_backward_s &&
         a.memory_forward_s == b.memory_forward_s && a.memory_backward_s == b.memory_backward_s &&
         a.module_forward_s == b.module_forward_s &&
         a.activations.attention_scores == b.activations.attention_scores &&
         a.activations.attention_other == b.activations.attention_other &&
         a.activations.mlp == b.activations.mlp &&
         a.activations.layer_input == b.activations.layer_input &&
         a.activations.module_bytes == b.activations.module_bytes;
}

}  // namespace

// CostModel::compute_of keeps a dense layer's compute without the expert degrees where the
// model's first layer is dense, and with them where it is an MoE layer.
TEST_CASE(
    "a dense layer's compute is the same for every ep and etp where the model's first layer is "
    "dense (DeepSeek-V3) and not where it is an MoE layer (Mixtral)") {
  const std::vector<std::pair<int64_t, int64_t>> degrees = {
      {1, 0}, {8, 0}, {8, 1}, {64, 1}, {256, 0}};
  const std::vector<LayerCompute> deepseek = dense_computes("deepseek-v3", degrees);
  for (size_t i = 1; i < deepseek.size(); ++i) CHECK(same_compute(deepseek[0], deepseek[i]));
  const std::vector<LayerCompute> mixtral = dense_computes("mixtral-8x7b", {{8, 0}, {8, 1}});
  CHECK_FALSE(same_compute(mixtral[0], mixtral[1]));
  CHECK(mixtral[1].activations.mlp < mixtral[0].activations.mlp);
}

// CostModel::compute_of prices an MoE layer's shared part once for every ep and etp.
TEST_CASE(
    "an MoE layer's compute from the shared part of another ep and etp is its own compute, bit "
    "for bit (DeepSeek-V3, Mixtral)") {
  for (const char* name : {"deepseek-v3", "mixtral-8x7b"}) {
    CAPTURE(name);
    Fixture f;
    f.model = testing::shipped_model(name);
    LayerCostContext c = f.context();
    c.seq_len = 4096;
    LayerCostKey first{8, 1, 1, 1, true};
    const SharedCompute shared = shared_compute(c, first, true);
    int differ = 0;
    for (const auto& [ep, etp] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {8, 0}, {8, 1}, {8, 2}, {64, 1}}) {
      CAPTURE(ep);
      CAPTURE(etp);
      if (f.model.moe->experts % ep != 0) continue;
      LayerCostKey key = first;
      key.ep = ep;
      key.etp = etp;
      const LayerCompute own = layer_compute(c, key, true);
      CHECK(same_compute(layer_compute(c, key, true, shared), own));
      differ += own.gemm_forward_s != layer_compute(c, first, true).gemm_forward_s ? 1 : 0;
    }
    CHECK(differ > 0);  // the routed experts' GEMMs do read ep and etp
    // The routed experts' two maps (gate and up fused, down) are left to the full compute.
    CHECK(std::count(shared.map_s.begin(), shared.map_s.end(), std::array<double, 3>{}) == 2);
  }
}

// LayerCostContext::bf16_gemm: Megatron-Core's output layer and MoE router are not Transformer
// Engine modules, so an FP8 job runs them in BF16. Mixtral at tp 1, 4,096 tokens: the router is
// 4,096 × 8 × 4,096 (tokens × experts × hidden), the LM head 4,096 × 32,000 × 4,096.
TEST_CASE("under FP8 the LM head and the MoE router run BF16 GEMMs, every other linear map FP8") {
  Fixture f;
  f.model = testing::shipped_model("mixtral-8x7b");
  const GemmModel fp8{f.profile, f.cluster.gpu, Precision::fp8, f.options.fp8_recipe};
  LayerCostContext all_fp8 = f.context();
  all_fp8.seq_len = 4096;
  all_fp8.gemm = &fp8;
  LayerCostContext apart = all_fp8;
  apart.bf16_gemm = &f.gemm;
  const LayerCostKey key{1, 1, 1, 1, false, false, CpKind::ring, 1, 1, false};
  // The router's three GEMMs: forward m×n×k, input gradient m×k×n, weight gradient k×n×m.
  const double t = 4096, experts = 8, h = 4096, vocab = 32000;
  auto extra = [&](double m, double n, double k) {
    return f.gemm.time_s(m, n, k) - fp8.time_s(m, n, k);
  };
  REQUIRE(extra(t, experts, h) > 0);
  const LayerCompute a = layer_compute(apart, key, true), b = layer_compute(all_fp8, key, true);
  CHECK(a.gemm_forward_s - b.gemm_forward_s == doctest::Approx(extra(t, experts, h)).epsilon(1e-9));
  CHECK(a.gemm_input_grad_s - b.gemm_input_grad_s ==
        doctest::Approx(extra(t, h, experts)).epsilon(1e-9));
  CHECK(a.gemm_weight_grad_s - b.gemm_weight_grad_s ==
        doctest::Approx(extra(h, experts, t)).epsilon(1e-9));
  const HeadCost head = lm_head_cost(apart, key), head_fp8 = lm_head_cost(all_fp8, key);
  CHECK(head.forward_s - head_fp8.forward_s == doctest::Approx(extra(t, vocab, h)).epsilon(1e-9));
  CHECK(head.backward_s - head_fp8.backward_s ==
        doctest::Approx(extra(t, h, vocab) + extra(h, vocab, t)).epsilon(1e-9));
}

// MemoryOptions::selective_op_sac: torchtitan's selective recompute repeats the mm's its policy
// does not save (wk, wo, w3 of a Llama block) and every memory-bound op of the forward, not the
// attention core (planner/op_sac.h).
TEST_CASE("under op SAC selective recompute repeats wk, wo, w3 and the element-wise ops") {
  Fixture f;
  LayerCostContext ctx = f.context();
  ctx.seq_len = 8192;
  const LayerCostKey key{1, 1, 1, 2, false, false, CpKind::ring, 1, 1, false};
  const double t = 2 * 8192, h = 4096, kv = 1024, ffn = 14336;
  const LayerCompute modules = layer_compute(ctx, key, false);
  CHECK(modules.module_forward_s[0] == modules.attention_forward_s);  // core_attn
  f.options.memory.selective_op_sac = true;
  const LayerCompute op_sac = layer_compute(ctx, key, false);
  // The fused QKV GEMM's time is split by columns: wk is 1024 of its 6144.
  const double gemms = f.gemm.time_s(t, h + 2 * kv, h) / 6 + f.gemm.time_s(t, h, h) +
                       f.gemm.time_s(t, 2 * ffn, h) / 2;
  CHECK(op_sac.module_forward_s[0] ==
        doctest::Approx(gemms + op_sac.memory_forward_s).epsilon(1e-12));
  CHECK(op_sac.gemm_forward_s == modules.gemm_forward_s);  // the pass itself is the same
  CHECK(op_sac.activations.selective() < modules.activations.selective() / 2);
}
