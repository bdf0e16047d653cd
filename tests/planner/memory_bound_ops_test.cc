// planner/memory_bound_ops.cc: a layer's memory-bound ops and the loss, bytes by hand.
#include "planner/memory_bound_ops.h"

#include <doctest/doctest.h>

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

TEST_CASE("Mixtral MoE layer: top-2 experts' activation and the permutation") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const auto ops = layer_memory_bound_ops(m, CostOptions{}, {1, false, true, 1000});
  REQUIRE(ops.size() == 4);
  CHECK(ops[2].forward_bytes == 6.0 * 2000 * 14336);  // 2 routed tokens per token
  CHECK(std::string(ops[3].name) == "moe permute");
  CHECK(ops[3].forward_bytes == 8.0 * 2000 * 4096);
}

TEST_CASE("cross entropy: 38 bytes per logit forward, 14 backward") {
  const ModelSpec m = testing::shipped_model("llama3-8b");
  const auto ops = loss_memory_bound_ops(m, 2, 4096);
  CHECK(forward_bytes(ops) == 38.0 * 4096 * 64128);
  CHECK(backward_bytes(ops) == 14.0 * 4096 * 64128);
}

}  // namespace
}  // namespace meshplan
