// The engines' peer all-reduce: one-shot reads n − 1 peers' buffers after one latency, two-shot
// pays two latencies and reads 2(n − 1)/n of a buffer; the faster of the two is taken.
#include "serving/peer_all_reduce.h"

#include <doctest/doctest.h>

using namespace meshplan;
using namespace meshplan::serving;

namespace {

// h100-published: 6.7 µs + (n − 1)·S / 402 GB/s (vLLM PR 24111, least squares).
PeerAllReduceFit h100_fit() {
  PeerAllReduceFit f;
  f.latency_s = 6.7e-6;
  f.peer_read_bytes_per_s = 402e9;
  return f;
}

}  // namespace

TEST_CASE("peer all-reduce: a decode's 16 KiB over 8 GPUs takes the one-shot kernel") {
  // one-shot 6.7 µs + 7 · 16384 B / 402 GB/s = 6.985 µs; two-shot 13.4 + 0.071 = 13.47 µs.
  CHECK(peer_all_reduce_s(h100_fit(), 8, 16384) == doctest::Approx(6.7e-6 + 7 * 16384 / 402e9));
  CHECK(peer_all_reduce_s(h100_fit(), 8, 16384) == doctest::Approx(6.985e-6).epsilon(1e-3));
}

TEST_CASE("peer all-reduce: a prefill's 16 MiB over 8 GPUs takes the two-shot kernel") {
  // one-shot 6.7 + 7 · 16 MiB / 402 GB/s = 298.8 µs; two-shot 13.4 + 1.75 · 16 MiB / 402 GB/s
  // = 86.43 µs.
  const double bytes = 16.0 * 1024 * 1024;
  CHECK(peer_all_reduce_s(h100_fit(), 8, bytes) == doctest::Approx(13.4e-6 + 1.75 * bytes / 402e9));
  CHECK(peer_all_reduce_s(h100_fit(), 8, bytes) == doctest::Approx(86.43e-6).epsilon(1e-3));
}

TEST_CASE("peer all-reduce: two GPUs read one peer, so one-shot wins up to twice the latency") {
  // one-shot α + S/B, two-shot 2α + S/B: one-shot at every size.
  for (double bytes : {1.0e3, 1.0e6, 1.0e9})
    CHECK(peer_all_reduce_s(h100_fit(), 2, bytes) == doctest::Approx(6.7e-6 + bytes / 402e9));
}

TEST_CASE("peer all-reduce: the engines' kernels serve 2, 4, 6 or 8 GPUs, NCCL every other group") {
  // vLLM and SGLang: _SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]; TensorRT-LLM: even, at most 8.
  for (int64_t ranks : {2, 4, 6, 8}) CHECK(peer_all_reduce_serves(ranks));
  for (int64_t ranks : {0, 1, 3, 5, 7, 9, 10, 16}) CHECK_FALSE(peer_all_reduce_serves(ranks));
}
