// Selective recompute by module (Layout::recompute_modules, Megatron-Core --recompute-modules):
// what each module's recompute drops from a layer's stored activations, what it repeats in the
// backward, and its FLOPs. Llama 3 8B (hidden 4096, 32 heads of 128, 8 KV heads, SwiGLU width
// 14336) and Mixtral 8x7B (8 experts of 14336, top-2), one 4K-token micro-batch, tp = 1, BF16.
#include <doctest/doctest.h>

#include "planner/activation_memory.h"
#include "planner/cost_model.h"
#include "planner/flop_count.h"
#include "planner/memory_model.h"
#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

constexpr double T = 4096, h = 4096, ffn = 14336;

double module_bytes(const LayerActivations& a, RecomputeModule m) {
  return a.module_bytes[static_cast<size_t>(m)];
}

}  // namespace

TEST_CASE("recompute modules: names joined by '+', in any order, each once") {
  CHECK(parse_recompute_modules("layernorm+core_attn") ==
        (bit(RecomputeModule::core_attn) | bit(RecomputeModule::layernorm)));
  CHECK(to_string(*parse_recompute_modules("moe_act+mla_up_proj")) == "mla_up_proj+moe_act");
  CHECK(!parse_recompute_modules("core_attn+core_attn"));
  CHECK(!parse_recompute_modules("attention"));
  CHECK(!parse_recompute_modules(""));
}

TEST_CASE("what each module's recompute drops from a dense layer") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const LayerActivations a = layer_activations(m, 0, {1, 4096, 1, 1, 1, false});
  // The two norms' outputs, the QKV and MLP GEMMs' 2-byte inputs.
  CHECK(module_bytes(a, RecomputeModule::layernorm) == 2 * 2 * T * h);
  // SwiGLU's gate and up (2 bytes each) and their product, the down-projection's input.
  CHECK(module_bytes(a, RecomputeModule::mlp) == T * (2 * 2 * ffn + 2 * ffn));
  // Flash attention in BF16 stores nothing the core's recompute would drop.
  CHECK(module_bytes(a, RecomputeModule::core_attn) == 0);
  const RecomputeModules both = bit(RecomputeModule::layernorm) | bit(RecomputeModule::mlp);
  CHECK(a.stored(Recompute::selective, both) ==
        doctest::Approx(a.no_recompute() - 2 * 2 * T * h - T * 6 * ffn).epsilon(1e-12));
  CHECK(a.largest_module(both) == T * 6 * ffn);
  CHECK(a.stored(Recompute::selective) == a.no_recompute());  // the default: core_attn
}

TEST_CASE("what each module's recompute drops from an MoE layer, moe holds moe_act's") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const LayerActivations a = layer_activations(m, 0, {1, 4096, 1, 1, 1, false});
  const double routed = 2 * T;  // top-2 copies
  CHECK(module_bytes(a, RecomputeModule::moe_act) == 2 * routed * ffn);
  // fp32 router probabilities, dispatched input and expert output, the experts' intermediates.
  CHECK(module_bytes(a, RecomputeModule::moe) ==
        doctest::Approx(4 * T * 8 + 4 * routed * h + routed * 6 * ffn).epsilon(1e-12));
  const RecomputeModules moe = bit(RecomputeModule::moe);
  CHECK(a.dropped(moe | bit(RecomputeModule::moe_act)) == a.dropped(moe));
}

TEST_CASE("what each module's recompute repeats: its forward, at the layer's own rates") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const ClusterSpec c = testing::two_level_cluster(1);
  CostModel model(m, c, CalibrationProfile{}, {4096, 8, Precision::bf16});
  const Layout l = parse_layout("tp=1,dp=8,recompute=selective").value();
  const LayerCost cost = model.layer_costs(l).dense;
  const GemmModel& g = model.gemm();
  // The default is the attention core.
  CHECK(cost.selective_forward_s(kDefaultRecomputeModules) == cost.attention_forward_s);
  // The MLP: its up (gate and up fused) and down GEMMs and SwiGLU's 6 bytes per element.
  const double mlp = g.time_s(T, 2 * ffn, h) + g.time_s(T, h, ffn);
  const double act_s = cost.module_forward_s[static_cast<size_t>(RecomputeModule::mlp)] - mlp;
  CHECK(act_s > 0);
  CHECK(cost.module_forward_s[static_cast<size_t>(RecomputeModule::layernorm)] / (2 * 4 * T * h) ==
        doctest::Approx(act_s / (6 * T * ffn)).epsilon(1e-9));  // both at the same HBM rate
}

TEST_CASE("a selective layout recomputes its modules: memory down, time up, HFU counts them") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const ClusterSpec c = testing::two_level_cluster(1);
  const TrainingSpec t{4096, 8, Precision::bf16};
  CostModel model(m, c, CalibrationProfile{}, t);
  const Layout plain = parse_layout("tp=1,dp=8,mbs=1,recompute=selective").value();
  Layout mlp = plain;
  mlp.recompute_modules = bit(RecomputeModule::mlp);
  const Estimate a = model.evaluate(plain), b = model.evaluate(mlp);
  CHECK(b.step_time_s > a.step_time_s);
  CHECK(b.peak_bytes < a.peak_bytes);
  // HFU counts the MLP's forward again, 2·T·3·h·ffn per layer and sequence, in place of the
  // attention core's, 2·T·T·32·(128 + 128) (Megatron's count: the whole score matrix).
  const StepFlops fa = step_flops(m, plain, t), fb = step_flops(m, mlp, t);
  CHECK(fb.hardware - fa.hardware ==
        doctest::Approx(8 * 32 * (2 * T * 3 * h * ffn - 2 * T * T * 32 * 256)).epsilon(1e-9));
}
