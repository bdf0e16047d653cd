// Expert tensor parallelism (Layout::etp): Mixtral 8x7B (8 experts of width 14336, top-2,
// hidden 4096, no shared experts) on one 8-GPU NVLink node of the test cluster (5 µs per step,
// 400 GB/s, no measured fits: tests/planner/collective_model_test.cc), 4K-token sequences.
// tp=8 with etp=1 and ep=8 keeps attention split 8 ways and puts one whole expert on each rank.
#include <doctest/doctest.h>

#include "core/layer_geometry.h"
#include "planner/activation_memory.h"
#include "planner/calibration.h"
#include "planner/cost_model.h"
#include "planner/layer_cost.h"
#include "planner/param_count.h"
#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

Layout resolved(const char* text) {
  Layout l = parse_layout(text).value();
  if (l.etp == l.tp) l.etp = 0;
  return l;
}

constexpr double kTokens = 4096, kHidden = 4096, kFfn = 14336;

}  // namespace

TEST_CASE("etp < tp folds a stage's ranks as etp × ep × expert-dp, innermost first") {
  const Layout l = resolved("tp=8,dp=2,ep=8,etp=1");
  CHECK(l.expert_dp() == 2);  // 16 ranks over 1 · 8
  const GroupShape ep = ep_group(l), edp = expert_dp_group(l), etp = expert_tp_group(l);
  CHECK(ep.size() == 8);
  CHECK(ep.dims[0].stride == 1);  // the EP group is the TP ranks of one node
  CHECK(edp.size() == 2);
  CHECK(edp.dims[0].stride == 8);
  CHECK(etp.size() == 1);
  // etp = 2: pairs of ranks split each expert, EP strides over the pairs.
  const Layout half = resolved("tp=8,dp=2,ep=4,etp=2");
  CHECK(ep_group(half).dims[0].stride == 2);
  CHECK(expert_dp_group(half).size() == 2);
  CHECK(expert_dp_group(half).dims[0].stride == 8);
  CHECK(expert_tp_group(half).size() == 2);
  // Without the fold EP is carved from dp·cp: stride tp.
  const Layout plain = resolved("tp=2,dp=8,ep=8");
  CHECK(ep_group(plain).dims[0].stride == 2);
  CHECK(expert_dp_group(plain).size() == 1);
}

TEST_CASE("etp divides the experts' parameters per GPU instead of tp") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const LayerParams p = layer_params(m, 0);
  // Eight SwiGLU experts: 3 · 4096 · 14336 weights each.
  CHECK(p.routed_experts == 8 * 3 * 4096 * 14336);
  const std::vector<StageParams> folded = stage_params(m, resolved("tp=8,dp=1,ep=8,etp=1"));
  const std::vector<StageParams> split = stage_params(m, resolved("tp=8,dp=1,ep=1"));
  CHECK(folded[0].expert_per_gpu == 32 * p.routed_experts / 8);  // one whole expert per layer
  CHECK(split[0].expert_per_gpu == 32 * p.routed_experts / 8);   // every expert, 1/8 wide
  CHECK(stage_params(m, resolved("tp=8,dp=2,ep=8,etp=2"))[0].expert_per_gpu ==
        32 * p.routed_experts / 16);
}

TEST_CASE(
    "etp=1 under tp=8: whole-width expert GEMMs on the rank's own tokens, no expert TP "
    "collectives, each rank dispatching its SP share") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const ClusterSpec c = testing::two_level_cluster(1);
  const TrainingSpec t{4096, 1024, Precision::bf16};
  CostModel model(m, c, CalibrationProfile{}, t);
  const Layout folded = resolved("tp=8,dp=1,ep=8,etp=1,sp=true");
  const Layout split = resolved("tp=8,dp=1,ep=1,sp=true");
  const LayerCost f = model.layer_costs(folded).moe;
  const LayerCost s = model.layer_costs(split).moe;
  const CollectiveModel& net = model.collectives();
  const GroupShape node = GroupShape::of(8, 1);
  // TP under SP: attention's all-gather and reduce-scatter of the 4K tokens' hidden states
  // (2 bytes); the split experts add an all-gather and reduce-scatter of the top-2 copies of
  // the TP group's tokens; the folded experts none (etp = 1).
  const double bytes = 2 * kTokens * kHidden;
  const double attention = 2 * (net.time_s(Collective::all_gather, node, bytes) +
                                net.time_s(Collective::reduce_scatter, node, bytes));
  const double routed = 2 * (net.time_s(Collective::all_gather, node, 2 * bytes) +
                             net.time_s(Collective::reduce_scatter, node, 2 * bytes));
  CHECK(f.tp_forward_s == doctest::Approx(attention / 2).epsilon(1e-12));
  CHECK(s.tp_forward_s == doctest::Approx((attention + routed) / 2).epsilon(1e-12));
  // Dispatch: each rank sends the top-2 copies of its 512 SP tokens, there and back.
  CHECK(f.ep_forward_s ==
        doctest::Approx(2 * net.time_s(Collective::all_to_all, node, kTokens / 8 * 2 * 2 * kHidden))
            .epsilon(1e-12));
  // The expert GEMMs do the same FLOPs: one expert at full width on 4096 / 8 · 2 · 8 / 8 = 1024
  // rows, or eight experts at 1/8 width on 4096 · 2 / 8 = 1024 rows each.
  const GemmModel& g = model.gemm();
  const double folded_gemms = routed_row_tile_factor(1024) * (g.time_s(1024, 2 * kFfn, kHidden, 1) +
                                                              g.time_s(1024, kHidden, kFfn, 1));
  const double split_gemms =
      routed_row_tile_factor(1024) *
      (g.time_s(1024, 2 * kFfn / 8, kHidden, 8) + g.time_s(1024, kHidden, kFfn / 8, 8));
  // The permutation (all-to-all dispatcher): both ranks permute their 512 SP tokens to their
  // 1,024 top-2 copies and back, 2 · (512 + 1024) rows; the split rank, eight local experts,
  // also sorts the 8,192 rows gathered over the expert-TP group by expert and back (4 · 8192
  // rows), the folded rank's one expert needs no sort. BF16 rows of 4096.
  const double hbm_rate =
      resolve_calibration(CalibrationProfile{}, c.gpu, Precision::bf16).hbm_bytes_per_s.value;
  const double sort_bytes = 4 * 8192 * 2 * kHidden;
  CHECK(f.forward_s - s.forward_s ==
        doctest::Approx(folded_gemms - split_gemms - sort_bytes / hbm_rate).epsilon(1e-9));
}

TEST_CASE(
    "etp=1 under tp=8 keeps each rank's routed tokens whole-width: the same expert "
    "activations as tp=8") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  ActivationShape split{1, 4096, 8, 1, 1, true};
  ActivationShape folded = split;
  folded.ep = 8, folded.etp = 1;
  const LayerActivations s = layer_activations(m, 0, split), f = layer_activations(m, 0, folded);
  // Split: 8192 routed rows (4096 tokens · top-2) of the dispatched input and expert output
  // (2 + 2 bytes · 4096) and the intermediates 1/8 wide; folded: 1024 rows of both at full width.
  const double s_routed = 8192 * 4 * kHidden + 8192 * (2 * 2 * kFfn + 2 * kFfn) / 8;
  const double f_routed = 1024 * 4 * kHidden + 1024 * (2 * 2 * kFfn + 2 * kFfn);
  CHECK(f.mlp - s.mlp == doctest::Approx(f_routed - s_routed).epsilon(1e-12));
}
