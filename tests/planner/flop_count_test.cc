#include "planner/flop_count.h"

#include <doctest/doctest.h>

#include "planner/cost_model.h"
#include "planner/model_flops_eq3.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

Layout layout_with(Recompute r) {
  Layout l;
  l.dp = 1;
  l.recompute = r;
  return l;
}

}  // namespace

TEST_CASE("GPT-style model FLOPs equal Megatron's 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h))") {
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
  ModelSpec m = gpt_like(96, 12288, 96, 51200, 2048);
  TrainingSpec t{2048, 1536, Precision::bf16};
  StepFlops f = step_flops(m, layout_with(Recompute::none), t);
  CHECK(f.model == doctest::Approx(72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)))
                       .epsilon(1e-12));
  CHECK(f.hardware == doctest::Approx(f.model).epsilon(1e-15));
}

TEST_CASE("full recompute counts 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) hardware FLOPs (eq. 3)") {
  const double B = 512, s = 2048, L = 24, h = 2304, V = 51200;
  ModelSpec m = gpt_like(24, 2304, 24, 51200, 2048);
  TrainingSpec t{2048, 512, Precision::bf16};
  StepFlops f = step_flops(m, layout_with(Recompute::full), t);
  const double eq3 = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  CHECK(f.hardware == doctest::Approx(eq3).epsilon(1e-12));
  m.training = t;
  CHECK(eq3_flops_per_step(m, 512) == doctest::Approx(eq3).epsilon(1e-15));
}

TEST_CASE("causal attention FLOPs halve only the s/(6h) term") {
  const double B = 8, s = 4096, L = 4, h = 1024, V = 1000;
  ModelSpec m = gpt_like(4, 1024, 8, 1000, 4096);
  TrainingSpec t{4096, 8, Precision::bf16};
  FlopOptions causal;
  causal.causal_attention = true;
  StepFlops f = step_flops(m, layout_with(Recompute::none), t, causal);
  CHECK(f.model == doctest::Approx(72 * B * s * L * h * h * (1 + s / (12 * h) + V / (12 * L * h)))
                       .epsilon(1e-12));
}

TEST_CASE("selective recompute adds one forward of the attention core per layer") {
  const double B = 4, s = 2048, L = 8, h = 1024;
  ModelSpec m = gpt_like(8, 1024, 16, 5000, 2048);
  TrainingSpec t{2048, 4, Precision::bf16};
  StepFlops none = step_flops(m, layout_with(Recompute::none), t);
  StepFlops sel = step_flops(m, layout_with(Recompute::selective), t);
  CHECK(sel.hardware - none.hardware == doctest::Approx(4 * B * s * s * h * L).epsilon(1e-12));
}

TEST_CASE("SwiGLU and GQA: Llama 3 8B forward FLOPs per token are 2·(active weights) + attention") {
  ModelSpec m = shipped_model("llama3-8b");
  const double tokens = 8192, seq = 8192;
  LayerFlops f = layer_forward_flops(m, 0, tokens, seq);
  // q, k, v, o = 4096·(4096 + 1024 + 1024 + 4096); MLP 3·4096·14336.
  const double weights = 4096.0 * (4096 + 1024 + 1024 + 4096) + 3.0 * 4096 * 14336;
  CHECK(f.dense_gemms == doctest::Approx(2 * tokens * weights).epsilon(1e-15));
  CHECK(f.attention_core == doctest::Approx(2 * tokens * seq * 32 * (128 + 128)).epsilon(1e-15));
}

TEST_CASE("MoE layers count top-k experts plus the router") {
  ModelSpec m = shipped_model("mixtral-8x7b");
  LayerFlops f = layer_forward_flops(m, 0, 1, 4096);
  const double attention = 4096.0 * (4096 + 1024 + 1024 + 4096);
  CHECK(f.dense_gemms ==
        doctest::Approx(2 * (attention + 4096.0 * 8 + 2 * 3.0 * 4096 * 14336)).epsilon(1e-15));
}

TEST_CASE("the cost model reports the same step FLOPs as step_flops") {
  ModelSpec m = shipped_model("llama3-70b");
  ClusterSpec c = shipped_cluster("dgx-h100-64n");
  TrainingSpec t{8192, 1024, Precision::bf16};
  CostModel model(m, c, CalibrationProfile{}, t);
  Result<Layout> l = parse_layout("tp=8,pp=4,recompute=selective,recompute_layers=3");
  Layout layout = l.value();
  REQUIRE(check_layout(layout, m, 512, t).empty());
  Estimate e = model.evaluate(layout);
  StepFlops f = step_flops(m, layout, t);
  CHECK(e.model_flops == doctest::Approx(f.model).epsilon(1e-12));
  CHECK(e.hardware_flops == doctest::Approx(f.hardware).epsilon(1e-12));
  CHECK(e.mfu == doctest::Approx(f.model / (e.step_time_s * 512 * 989e12)).epsilon(1e-12));
  CHECK(e.breakdown.total_s() == doctest::Approx(e.step_time_s).epsilon(1e-15));
}

TEST_CASE("a sliding window cuts the attention term of its layers, the cost model agrees") {
  // Half the layers slide over 1,024 keys at s = 4,096: (4096·1024 − 1024²/2)/4096 = 896 keys
  // per query under the mask, 1,792 by the full square (global: 4,096), so those layers' s/(6h)
  // term shrinks to 1792/4096 of itself.
  const double B = 8, s = 4096, L = 4, h = 1024, V = 1000;
  ModelSpec m = gpt_like(4, 1024, 8, 1000, 4096);
  m.window = AttentionWindow{1024, WindowKind::sliding, 2};
  TrainingSpec t{4096, 8, Precision::bf16};
  const StepFlops f = step_flops(m, layout_with(Recompute::none), t);
  const double attention_term = s / (6 * h) * (1 + 1792.0 / 4096) / 2;
  CHECK(f.model == doctest::Approx(72 * B * s * L * h * h * (1 + attention_term + V / (12 * L * h)))
                       .epsilon(1e-12));
  // Every layer of the kind at the mean of its local and global layers: the same total.
  const LayerFlops mean = kind_forward_flops(m, false, B * s, s);
  CHECK(mean.attention_core ==
        doctest::Approx((layer_forward_flops(m, 0, B * s, s).attention_core +
                         layer_forward_flops(m, 1, B * s, s).attention_core) /
                        2)
            .epsilon(1e-15));
  ClusterSpec c = shipped_cluster("dgx-h100-1n");
  m.training = t;
  CostModel model(m, c, CalibrationProfile{}, t);
  Layout l = parse_layout("tp=1,pp=2").value();
  REQUIRE(check_layout(l, m, 8, t).empty());
  CHECK(model.evaluate(l).model_flops == doctest::Approx(f.model).epsilon(1e-12));
}
