// planner/memory_bound_ops.cc: a layer's memory-bound ops and the loss, bytes by hand.
#include "planner/memory_bound_ops.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "tests/test_inputs.h"

namespace meshplan {
namespace {

TEST_CASE("llama3-8b layer, one 4096-token sequence, tp=1: norms, RoPE, SwiGLU") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const std::vector<MemoryBoundOp> ops =
      layer_memory_bound_ops(m, CostOptions{}, {1, false, false, 4096});
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].forward_bytes == 4096.0 * 4096 * 20);  // two norms, two residual adds
  CHECK(std::string(ops[1].name) == "rope");
  CHECK(ops[1].forward_bytes == 4.0 * 4096 * (4096 + 1024));  // Q and K, read and written
  CHECK(ops[2].forward_bytes == 6.0 * 4096 * 14336);          // SwiGLU: 6 bytes per element
  CHECK(forward_bytes(ops) == 771'751'936.0);
  CHECK(backward_bytes(ops) == 2 * 771'751'936.0);
}

TEST_CASE("sequence parallelism splits only the norm/residual part by tp") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const auto ops = layer_memory_bound_ops(m, CostOptions{}, {4, true, false, 4096});
  CHECK(ops[0].forward_bytes == 1024.0 * 4096 * 20);
  CHECK(ops[1].forward_bytes == 4.0 * 4096 * 5120 / 4);
}

TEST_CASE("Mixtral MoE layer: top-2 experts' activation and the all-to-all's permutation") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const auto ops = layer_memory_bound_ops(m, CostOptions{}, {1, false, true, 1000});
  REQUIRE(ops.size() == 4);
  CHECK(ops[2].forward_bytes == 6.0 * 2000 * 14336);  // 2 routed tokens per token
  CHECK(std::string(ops[3].name) == "moe permute");
  // ep 1, eight local experts: 1000 tokens permuted to their 2000 copies and back (2 · 3000
  // rows), the 2000 sorted by expert and back (4 · 2000); BF16 rows of 4096; the backward the
  // same rows.
  CHECK(ops[3].forward_bytes == 2.0 * 4096 * (2 * 3000 + 4 * 2000));
  CHECK(ops[3].backward_bytes == ops[3].forward_bytes);
  CHECK(shared_memory_bound_ops(m, CostOptions{}, {1, false, true, 1000}).size() == 3);
}

// Qwen3-235B-A22B (128 experts of top-8, hidden 4096), tp 2 under SP with etp 1, ep 8: the
// 16,384 tokens of an mbs-4 micro-batch, 8,192 on the rank.
TEST_CASE("MoE permutation rows by dispatcher: the rank's SP share, not its TP group's tokens") {
  const ModelSpec m = testing::shipped_model("qwen3-235b-a22b");
  MemoryBoundShape shape{2, true, true, 16384, 1, 8, Dispatch::alltoall};
  // All-to-all: 8,192 tokens to their 65,536 copies and back, 16 local experts sorted and back.
  CHECK(moe_permuted_rows(m, shape) == 2 * (8192 + 65536) + 4 * 65536.0);
  // DeepEP: a token reaches 8 · (1 − (7/8)^8) of the 8 ranks once each; those rows permuted to
  // the 65,536 copies and back.
  shape.dispatch = Dispatch::deepep;
  const double ranks = 8 * (1 - std::pow(7.0 / 8, 8));
  CHECK(moe_permuted_rows(m, shape) == doctest::Approx(2 * (65536 * ranks / 8 + 65536)));
  // All-gather: the copies picked from the 8 · 8,192 gathered tokens and written, then added
  // back into a buffer of all of them.
  shape.dispatch = Dispatch::allgather;
  CHECK(moe_permuted_rows(m, shape) == 4 * 65536.0 + 8 * 8192);
  // Expert TP over the two TP ranks: the sort covers the group's 131,072 gathered copies.
  shape.dispatch = Dispatch::alltoall, shape.etp = 2;
  CHECK(moe_permuted_rows(m, shape) == 2 * (8192 + 65536) + 4 * 131072.0);
}

TEST_CASE("cross entropy: 38 bytes per logit forward, 14 backward") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const auto ops = loss_memory_bound_ops(m, 2, 4096);
  CHECK(forward_bytes(ops) == 38.0 * 4096 * 64128);
  CHECK(backward_bytes(ops) == 14.0 * 4096 * 64128);
}

}  // namespace
}  // namespace meshplan
