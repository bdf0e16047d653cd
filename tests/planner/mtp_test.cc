// Multi-token prediction in training (ModelSpec::mtp_layers): the modules close the last pipeline
// chunk (Megatron-Core's placement without a pipeline layout), each a layer of the last layer's
// kind with its projection, its own pass through the LM head and loss, and the last stage's copy
// of the embedding, kept in sync with the first stage's.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "planner/cost_model.h"
#include "planner/flop_count.h"
#include "planner/memory_model.h"
#include "planner/model_flops_megatron.h"
#include "planner/param_count.h"
#include "planner/simulated_plan.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

ModelSpec with_mtp(ModelSpec m, int64_t layers) {
  m.mtp_layers = layers;
  return m;
}

}  // namespace

TEST_CASE("MTP layers close the last chunk and take the last layer's kind") {
  const ModelSpec gpt = with_mtp(gpt_like(8, 1024, 16, 5000, 2048), 1);
  Layout l;
  l.pp = 4, l.dp = 1;
  CHECK(chunk_boundaries(gpt, l) == std::vector<int64_t>{0, 2, 4, 6, 9});
  const std::vector<StageLayerMix> mix = stage_layer_mix(gpt, l);
  CHECK(mix[0].dense_layers == 2);
  CHECK(mix[3].dense_layers == 3);
  CHECK(mix[3].moe_layers == 0);
  // DeepSeek-V3: 3 dense layers then 58 MoE; its MTP layer is MoE like layer 60.
  const ModelSpec ds = with_mtp(shipped_model("deepseek-v3"), 1);
  CHECK(ds.moe_layers_in(0, 61) == 58);
  CHECK(ds.moe_layers_in(0, 62) == 59);
  CHECK(ds.moe_layers_in(61, 62) == 1);
  CHECK(ds.moe_layers_in(0, 3) == 0);
  // A model whose last layer is dense (MoE every other layer from the second): a dense MTP layer.
  ModelSpec alternating = shipped_model("mixtral-8x7b");
  alternating.moe->layer_step = 2;
  alternating.layers = 31;  // MoE layers 1, 3, …, 29; layer 30 dense
  alternating.mtp_layers = 2;
  CHECK(alternating.moe_layers_in(0, 31) == 15);
  CHECK(alternating.moe_layers_in(0, 33) == 15);
}

TEST_CASE("the last stage holds the MTP module and its own copy of the embedding") {
  // GPT-like, untied, LayerNorm (2h parameters a norm), no biases: a layer is 12h² + 2·2h, the
  // module adds the 2h → h projection (2h²) and three norms; the copy is vocab × h.
  const int64_t h = 1024, vocab = 5000;
  const ModelSpec plain = gpt_like(8, h, 16, vocab, 2048);
  const ModelSpec mtp = with_mtp(plain, 1);
  CHECK(mtp_layer_params(mtp).total() == 12 * h * h + 2 * 2 * h + 2 * h * h + 3 * 2 * h);
  CHECK(mtp_params(mtp) == 14'690'304);
  Layout l;
  l.pp = 2, l.tp = 2, l.dp = 1;
  const std::vector<StageParams> a = stage_params(plain, l), b = stage_params(mtp, l);
  CHECK(b[0].full_params == a[0].full_params);
  CHECK(b[0].dense_per_gpu == a[0].dense_per_gpu);
  CHECK(b[1].layers == a[1].layers + 1);
  CHECK(b[1].full_params - a[1].full_params == 14'690'304 + vocab * h);
  // Split by tp = 2: the layer's and projection's linear maps and the copy; norms whole.
  CHECK(b[1].dense_per_gpu - a[1].dense_per_gpu ==
        (12 * h * h + 2 * h * h) / 2 + (2 + 3) * 2 * h + vocab * h / 2);
  CHECK(b[1].linear_per_gpu - a[1].linear_per_gpu == (12 * h * h + 2 * h * h) / 2);
  // One stage holding everything shares the embedding: no copy.
  Layout one;
  one.dp = 1;
  CHECK(stage_params(mtp, one)[0].full_params - stage_params(plain, one)[0].full_params ==
        14'690'304);
}

TEST_CASE("MTP adds a layer's FLOPs, one more logits and the projection to the model FLOPs") {
  const double B = 16, s = 2048, h = 1024, V = 5000;
  const ModelSpec plain = gpt_like(8, 1024, 16, 5000, 2048);
  const ModelSpec mtp = with_mtp(plain, 1);
  const TrainingSpec t{2048, 16, Precision::bf16};
  Layout l;
  l.dp = 1;
  const double tokens = B * s;
  const double layer = layer_forward_flops(plain, 7, tokens, s).total();
  CHECK(layer_forward_flops(mtp, 8, tokens, s).total() == layer);
  CHECK(lm_head_forward_flops(mtp, tokens) == 2 * tokens * (2 * V * h + 2 * h * h));
  const StepFlops a = step_flops(plain, l, t), b = step_flops(mtp, l, t);
  CHECK(b.model - a.model ==
        doctest::Approx(3 * (layer + 2 * tokens * (V * h + 2 * h * h))).epsilon(1e-12));
  // The cost model's count (by layer kind) agrees.
  const ClusterSpec cluster = two_level_cluster(1);
  CostModel plain_model(plain, cluster, CalibrationProfile{}, t);
  CostModel mtp_model(mtp, cluster, CalibrationProfile{}, t);
  const Layout one = checked_layout("tp=1,pp=1,dp=8,mbs=1", mtp, 8, t);
  CHECK(mtp_model.evaluate(one).model_flops == doctest::Approx(b.model).epsilon(1e-12));
  CHECK(plain_model.evaluate(one).model_flops == doctest::Approx(a.model).epsilon(1e-12));
}

TEST_CASE("Megatron-LM's FLOP count with --mtp-num-layers") {
  // training.py num_floating_point_operations (d98e8a64): L + M layers, (1 + M) logits, and
  // 6·B·s·M·(3h + 2h²) for the modules' norms and projections. GPT-like (MHA, GELU 4h), causal.
  const double B = 8, s = 4096, h = 1024, L = 4, M = 2;
  ModelSpec m = gpt_like(4, 1024, 8, 1000, 4096);
  m.mtp_layers = 2;
  const double Vpad = 1024;  // 1000 rounded up to 128·tp, tp = 1
  const double expected = 12 * B * s * (L + M) * h * h *
                              ((1 + 1 + s / (2 * h)) + 4 + Vpad * (1 + M) / (2 * (L + M) * h)) +
                          6 * B * s * M * (3 * h + 2 * h * h);
  CHECK(megatron_flops_per_step(m, 8, 1, MegatronFlops::causal) ==
        doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("the LM head runs once more per MTP module behind its projection") {
  const TrainingSpec t{8192, 64, Precision::bf16};
  const ModelSpec plain = shipped_model("llama3-8b");
  const ModelSpec mtp = with_mtp(plain, 1);
  const ClusterSpec cluster = two_level_cluster(4);
  CostModel a(plain, cluster, CalibrationProfile{}, t);
  CostModel b(mtp, cluster, CalibrationProfile{}, t);
  const Layout l = checked_layout("tp=2,pp=2,dp=8,mbs=1,sp=true", mtp, 32, t);
  const CostModel::LayerOps ops = b.layer_ops(l);
  // logits, the loss's memory-bound ops, then mtp_proj, logits and the loss's ops again.
  const size_t per_pass = a.layer_ops(l).head.size();
  REQUIRE(ops.head.size() == 2 * per_pass + 1);
  const OpCost& proj = ops.head[per_pass];
  CHECK(std::string(proj.name) == "mtp_proj");
  CHECK(proj.rows == 8192);
  CHECK(proj.cols == 4096 / 2);
  CHECK(proj.inner == 2 * 4096);
  double forward = 0, backward = 0;
  for (const OpCost& op : ops.head) forward += op.forward_s, backward += op.backward_s;
  const HeadCost with = b.layer_costs(l).head, without = a.layer_costs(l).head;
  CHECK(with.forward_s == doctest::Approx(forward).epsilon(1e-12));
  CHECK(with.backward_s == doctest::Approx(backward).epsilon(1e-12));
  CHECK(with.forward_s == doctest::Approx(2 * without.forward_s + proj.forward_s).epsilon(1e-12));
  CHECK(with.backward_s ==
        doctest::Approx(2 * without.backward_s + proj.backward_s).epsilon(1e-12));
}

TEST_CASE("the last stage's embedding copy is synchronized as tied embeddings are") {
  // Llama 3 8B is untied: with MTP the first stage's exposed data-parallel time gains the
  // embedding's all-reduce with the last stage, exactly as the same model with tied embeddings
  // (whose first stage is the same).
  const TrainingSpec t{8192, 64, Precision::bf16};
  const ModelSpec plain = shipped_model("llama3-8b");
  ModelSpec tied = plain;
  tied.tied_embeddings = true;
  const ModelSpec mtp = with_mtp(plain, 1);
  const ClusterSpec cluster = two_level_cluster(4);
  const Layout l = checked_layout("tp=2,pp=2,dp=8,mbs=1,sp=true,zero=1", mtp, 32, t);
  CostModel a(plain, cluster, CalibrationProfile{}, t);
  CostModel b(tied, cluster, CalibrationProfile{}, t);
  CostModel c(mtp, cluster, CalibrationProfile{}, t);
  const double first_plain = a.evaluate(l).stages[0].dp_exposed_s;
  const double first_tied = b.evaluate(l).stages[0].dp_exposed_s;
  const double first_mtp = c.evaluate(l).stages[0].dp_exposed_s;
  CHECK(first_tied > first_plain);
  CHECK(first_mtp == first_tied);
}

TEST_CASE("the last stage holds both passes' logits and the MTP layer's activations") {
  const TrainingSpec t{8192, 64, Precision::bf16};
  const ModelSpec plain = shipped_model("llama3-8b");
  const ModelSpec mtp = with_mtp(plain, 1);
  const ClusterSpec cluster = two_level_cluster(4);
  const Layout l = checked_layout("tp=2,pp=2,dp=8,mbs=1,sp=true,zero=1", mtp, 32, t);
  CostModel a(plain, cluster, CalibrationProfile{}, t);
  CostModel b(mtp, cluster, CalibrationProfile{}, t);
  const MemoryEstimate ma = a.evaluate(l).memory, mb = b.evaluate(l).memory;
  REQUIRE(ma.stages.size() == 2);
  // Logits: bf16 and their fp32 copy, 6 bytes × 8192 tokens × 128256 / tp 2, twice.
  CHECK(ma.stages[1].logits_bytes == 6.0 * 8192 * 128256 / 2);
  CHECK(mb.stages[1].logits_bytes == 2 * ma.stages[1].logits_bytes);
  CHECK(mb.stages[0].total_bytes() == ma.stages[0].total_bytes());
  // 16 layers and the MTP layer: a 17th layer's stored activations per micro-batch in flight.
  CHECK(mb.stages[1].activations_bytes ==
        doctest::Approx(ma.stages[1].activations_bytes * 17 / 16).epsilon(1e-12));
}

TEST_CASE("the simulator replays the MTP layer and heads on the last chunk as the model prices") {
  // DeepSeek-V3's shape on 2,048 H100s with its module: 61 layers and the MTP layer over 62
  // chunks, the last holding the MTP layer, both heads and the loss.
  const ModelSpec ds = with_mtp(shipped_model("deepseek-v3"), 1);
  const ClusterSpec cluster = shipped_cluster("dgx-h100-2048n");
  TrainingSpec t = ds.training;
  const Layout l = checked_layout(
      "tp=4,pp=2,dp=256,ep=128,etp=1,zero=1,mbs=1,vpp=31,sp=true,schedule=interleaved,"
      "tp_overlap=true,uneven=true,ep_overlap=true",
      ds, 2048, t);
  CostModel m(ds, cluster, CalibrationProfile{}, t);
  const Estimate e = m.evaluate(l);
  Result<sim::PipelineSimulation> s = simulate_layout(m, l);
  REQUIRE(s.ok());
  CHECK(std::fabs(s->result.step_s - e.step_time_s) / e.step_time_s < 0.02);
  // The last stage runs the module: more per micro-batch than the first's 31 layers.
  CHECK(e.stages.back().per_micro_batch_s() > e.stages.front().per_micro_batch_s());
}
