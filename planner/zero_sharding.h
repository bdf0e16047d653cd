// ZeRO / FSDP sharding in one place: for a ZeRO stage, which model states are sharded over the
// data-parallel group and which collectives that implies (Rajbhandari et al. 2020, arXiv
// 1910.02054 §5: stage 1 shards optimizer states, 2 also gradients, 3 also weights; FSDP's
// FULL_SHARD is stage 3, SHARD_GRAD_OP stage 2).
#pragma once

#include <cassert>
#include <cstdint>

namespace meshplan {

struct ZeroSharding {
  bool optimizer = false;  // optimizer states (fp32 master weights, moments)
  bool grads = false;      // gradients: reduce-scattered, not all-reduced, and kept as a shard
  bool weights = false;    // weights: gathered layer by layer before use (ZeRO-3 / FSDP)

  // Shards each state is divided into over a data-parallel group of `group` GPUs (dp·cp for
  // dense parameters, dp·cp/ep for experts): `group` where sharded, else 1.
  double optimizer_shards(int64_t group) const {
    return optimizer ? static_cast<double>(group) : 1.0;
  }
  double grad_shards(int64_t group) const { return grads ? static_cast<double>(group) : 1.0; }
  double weight_shards(int64_t group) const { return weights ? static_cast<double>(group) : 1.0; }
  // Gradients leave the backward reduce-scattered (any sharded state) rather than all-reduced.
  bool reduce_scatters_grads() const { return optimizer || grads || weights; }
  // Updated weights are all-gathered once per step after a sharded optimizer step (ZeRO-1/2).
  bool gathers_updated_weights() const { return optimizer && !weights; }
};

// REQUIRES: 0 ≤ zero ≤ 3. Inline: the search calls it for every layout it evaluates.
inline ZeroSharding zero_sharding(int zero) {
  assert(zero >= 0 && zero <= 3);
  return {.optimizer = zero >= 1, .grads = zero >= 2, .weights = zero >= 3};
}

}  // namespace meshplan
