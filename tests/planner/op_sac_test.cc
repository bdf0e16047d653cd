#include "planner/op_sac.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/layer_geometry.h"
#include "planner/activation_memory.h"
#include "planner/flop_count.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using meshplan::testing::shipped_model;

namespace {

// "name:share:saved" for each mm, in call order.
std::vector<std::string> calls(const ModelSpec& m, int64_t layer) {
  const std::vector<LinearMap> maps = layer_linears(m, layer);
  std::vector<std::string> out;
  for (const OpSacMm& mm : op_sac_mms(m, maps))
    out.push_back(std::string(maps[mm.map].name) + ":" + std::to_string(mm.share) +
                  (mm.saved ? ":saved" : ":recomputed"));
  return out;
}

}  // namespace

TEST_CASE("op SAC on a Llama block: wq, wv, w1 and w2 saved, wk, wo and w3 recomputed") {
  // torchtitan's block calls wq, wk, wv, wo, w1, w3, w2; the policy saves the odd ones.
  const ModelSpec m = shipped_model("llama3-8b");  // q 4096, k = v 1024 columns
  CHECK(calls(m, 0) == std::vector<std::string>{
                           "qkv:0.666667:saved", "qkv:0.166667:recomputed", "qkv:0.166667:saved",
                           "attn_out:1.000000:recomputed", "mlp_up:0.500000:saved",
                           "mlp_up:0.500000:recomputed", "mlp_down:1.000000:saved"});
  const std::vector<double> shares = op_sac_recomputed_shares(m, layer_linears(m, 0));
  CHECK(shares == std::vector<double>{1.0 / 6, 1, 0.5, 0});
}

TEST_CASE("op SAC on MoE and MLA blocks: routed experts are no mm and always recomputed") {
  // Mixtral: wq wk wv wo, then the router's gate, recomputed by v0.2.2's default
  // per_op_sac_force_recompute_mm_shapes_by_fqns; the experts' grouped GEMMs are not aten.mm.
  const ModelSpec mixtral = shipped_model("mixtral-8x7b");
  const std::vector<std::string> moe = calls(mixtral, 0);
  REQUIRE(moe.size() == 5);
  CHECK(moe[4] == "router:1.000000:recomputed");
  const std::vector<double> shares = op_sac_recomputed_shares(mixtral, layer_linears(mixtral, 0));
  CHECK(shares == std::vector<double>{1.0 / 6, 1, 1, 1, 1});  // qkv, out, router, experts' up, down
  // DeepSeek-V3's MoE layer: q_a q_b kv_a kv_b wo, the router outside the count, then the shared
  // expert's w1 (the sixth mm), w3 and w2.
  const ModelSpec ds = shipped_model("deepseek-v3");
  CHECK(calls(ds, ds.first_moe_layer()) ==
        std::vector<std::string>{
            "q_a:1.000000:saved", "q_b:1.000000:recomputed", "kv_a:1.000000:saved",
            "kv_b:1.000000:recomputed", "attn_out:1.000000:saved", "router:1.000000:recomputed",
            "mlp_up:0.500000:recomputed", "mlp_up:0.500000:saved", "mlp_down:1.000000:recomputed"});
}

TEST_CASE("op SAC keeps 63,616 bytes per token of a Llama 3 8B block, by hand") {
  const ModelSpec m = shipped_model("llama3-8b");
  ActivationShape a{1, 1, 1, 1, 1, false};
  a.op_sac = true;
  // Input 2·4096, wq 2·4096, wv 2·1024, w1 2·14336, w2 2·4096, SDPA out 2·4096 and its
  // log-sum-exp 4·32.
  CHECK(op_sac_stored_bytes(m, 0, a) == 8192 + 8192 + 2048 + 28672 + 8192 + 8192 + 128);
  const LayerActivations act = layer_activations(m, 0, a);
  CHECK(act.selective() == doctest::Approx(63616).epsilon(1e-12));
  CHECK(act.largest_module(kDefaultRecomputeModules) == act.no_recompute() - 63616);
  // TP 2 with sequence parallelism: the input and the two reduce-scattered outputs split; w2's
  // partial sums are whole rows.
  ActivationShape t = a;
  t.tp = 2, t.sp = true;
  CHECK(op_sac_stored_bytes(m, 0, t) == 4096 + 4096 + 1024 + 14336 + 8192 + 4096 + 64 + 8192);
}

TEST_CASE("op SAC repeats the forward FLOPs of wk, wo and w3 and none of attention") {
  const ModelSpec m = shipped_model("llama3-8b");
  FlopOptions o;
  o.op_sac = true;
  const LayerFlops f = layer_forward_flops(m, 0, 1, 8192, o);
  CHECK(f.selective(kDefaultRecomputeModules) == 2.0 * (4096 * 1024 + 4096 * 4096 + 4096 * 14336));
  CHECK(layer_forward_flops(m, 0, 1, 8192).selective(kDefaultRecomputeModules) == f.attention_core);
}
