// A layer's cost op by op (CostModel::layer_ops, planner/layer_cost.h layer_ops): each op's
// shape and work by hand, and the ops adding up to the layer cost the step is priced from.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "planner/cost_model.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

struct Job {
  ModelSpec model;
  ClusterSpec cluster = two_level_cluster(4);
  TrainingSpec training;
  Layout layout;
  Job(const std::string& name, Precision precision, const std::string& layout_text)
      : model(shipped_model(name)), training{8192, 64, precision} {
    layout = parse_layout(layout_text).value();
    const std::vector<Diagnostic> errors = check_layout(layout, model, cluster.gpus(), training);
    REQUIRE_MESSAGE(errors.empty(), format_diagnostics(errors));
  }
};

const OpCost& op_named(const std::vector<OpCost>& ops, std::string_view name) {
  for (const OpCost& op : ops)
    if (name == op.name) return op;
  FAIL("no op " << name);
  return ops.front();
}

// The ops' seconds against the layer cost's compute (forward_s, backward_s: no communication).
void check_sums(const std::vector<OpCost>& ops, const LayerCost& c) {
  double forward = 0, backward = 0, weight = 0;
  for (const OpCost& op : ops) {
    forward += op.forward_s, backward += op.backward_s, weight += op.weight_grad_s;
    CHECK(op.forward_s > 0);
    CHECK(op.backward_s > 0);
  }
  CHECK(forward == doctest::Approx(c.forward_s).epsilon(1e-12));
  CHECK(backward == doctest::Approx(c.backward_s).epsilon(1e-12));
  CHECK(weight == doctest::Approx(c.backward_weight_s).epsilon(1e-12));
}

}  // namespace

TEST_CASE(
    "a dense layer's ops: each GEMM on one TP rank, attention, HBM ops, summing to the layer") {
  const Job job("llama3-8b", Precision::fp8, "tp=2,pp=1,dp=16,cp=1,mbs=1,sp=true");
  CostModel m(job.model, job.cluster, CalibrationProfile{}, job.training);
  const CostModel::LayerOps ops = m.layer_ops(job.layout);
  CHECK(ops.moe.empty());
  REQUIRE(ops.dense.size() == 8);  // qkv, attn_out, mlp_up, mlp_down, attention, 3 HBM ops
  // Llama 3 8B (hidden 4096, 32 heads and 8 KV heads of 128, SwiGLU 14336) at tp 2, 8192
  // tokens: QKV is 8192 × (4096 + 2·1024)/2 × 4096, the fused gate and up 8192 × 14336 × 4096.
  const OpCost& qkv = op_named(ops.dense, "qkv");
  CHECK(qkv.kind == OpKind::gemm);
  CHECK(!qkv.bf16);
  CHECK(qkv.rows == 8192);
  CHECK(qkv.cols == 3072);
  CHECK(qkv.inner == 4096);
  CHECK(qkv.count == 1);
  CHECK(qkv.forward_flops == 2.0 * 8192 * 3072 * 4096);
  const OpCost& up = op_named(ops.dense, "mlp_up");
  CHECK(up.cols == 14336);
  CHECK(up.forward_flops == 2.0 * 8192 * 14336 * 4096);
  CHECK(op_named(ops.dense, "mlp_down").inner == 7168);
  // Each GEMM op is the GEMM model's three products of its shape (dgrad m×k×n, wgrad k×n×m),
  // FP8 casts included.
  CHECK(qkv.forward_s == m.gemm().time_s(8192, 3072, 4096));
  CHECK(qkv.weight_grad_s == m.gemm().time_s(4096, 3072, 8192));
  CHECK(qkv.backward_s == m.gemm().time_s(8192, 4096, 3072) + qkv.weight_grad_s);
  // Causal flash attention of 16 heads at tp 2: each query meets 4096 keys on average (the
  // kernel skips masked blocks, CostOptions::causal_attention_time), 2·8192·4096·16·(128 + 128).
  const OpCost& attention = op_named(ops.dense, "attention core");
  CHECK(attention.kind == OpKind::attention);
  CHECK(attention.forward_flops == doctest::Approx(2.0 * 8192 * 4096 * 16 * 256).epsilon(1e-12));
  // The SwiGLU activation reads gate and up and writes their product, 6 bytes per element of
  // the rank's 7168 columns.
  const OpCost& act = op_named(ops.dense, "activation");
  CHECK(act.kind == OpKind::memory_bound);
  CHECK(act.forward_bytes == 6.0 * 8192 * 7168);
  check_sums(ops.dense, m.layer_costs(job.layout).dense);
  // The LM head, kept in BF16 under FP8: 8192 × 128256/2 × 4096.
  const OpCost& head = ops.head.front();
  CHECK(head.bf16);
  CHECK(head.cols == 64128);
  CHECK(head.forward_flops == 2.0 * 8192 * 64128 * 4096);
  double forward = 0, backward = 0;
  for (const OpCost& op : ops.head) forward += op.forward_s, backward += op.backward_s;
  CHECK(forward == doctest::Approx(m.layer_costs(job.layout).head.forward_s).epsilon(1e-12));
  CHECK(backward == doctest::Approx(m.layer_costs(job.layout).head.backward_s).epsilon(1e-12));
}

TEST_CASE(
    "an MoE layer's ops: the router in BF16 under FP8, each rank's experts as one grouped GEMM") {
  const Job job("mixtral-8x7b", Precision::fp8, "tp=1,pp=1,dp=32,cp=1,ep=4,mbs=1");
  CostModel m(job.model, job.cluster, CalibrationProfile{}, job.training);
  const CostModel::LayerOps ops = m.layer_ops(job.layout);
  CHECK(ops.dense.empty());  // every Mixtral layer is MoE
  const OpCost& router = op_named(ops.moe, "router");
  CHECK(router.bf16);
  CHECK(router.cols == 8);
  // Each rank's 8192 tokens go to 2 of 8 experts, and under ep 4 a rank receives as many rows
  // as it sends (expert_rows): 16384 rows over its 2 local experts, 8192 each.
  bool found = false;
  for (const OpCost& op : ops.moe) {
    if (op.kind != OpKind::gemm || op.count != 2) continue;
    found = true;
    CHECK(op.rows == 8192);
    CHECK(op.forward_flops == 2.0 * 8192 * op.cols * op.inner * 2);
  }
  CHECK(found);
  check_sums(ops.moe, m.layer_costs(job.layout).moe);
}

TEST_CASE("a model with dense and MoE layers has ops for both, MLA's projections among them") {
  const Job job("deepseek-v3", Precision::bf16, "tp=1,pp=1,dp=32,cp=1,ep=32,mbs=1");
  CostModel m(job.model, job.cluster, CalibrationProfile{}, job.training);
  const CostModel::LayerOps ops = m.layer_ops(job.layout);
  REQUIRE(!ops.dense.empty());
  REQUIRE(!ops.moe.empty());
  CHECK(op_named(ops.dense, "kv_b").kind == OpKind::gemm);
  CHECK(!op_named(ops.moe, "router").bf16);  // a BF16 job's router is its other GEMMs' dtype
  check_sums(ops.dense, m.layer_costs(job.layout).dense);
  check_sums(ops.moe, m.layer_costs(job.layout).moe);
}
