// Prompt and answer lengths of the requests a replay serves.
//
// From a trace (Workload::trace): its requests' lengths, in file order.
// Fixed (the default): every request has the workload's isl and osl. With a spread
// (Workload::isl_stdev / osl_stdev > 0) each length is drawn as TensorRT-LLM's
// benchmarks/cpp/prepare_dataset.py token-norm-dist draws it (utils.get_norm_dist_lengths):
// max(1, ⌈x⌉) with x normal(mean, stdev), so `--isl 500 --isl-stdev 100` replays the dataset
// `prepare_dataset.py token-norm-dist --input-mean 500 --input-stdev 100` describes (its
// lengths, not numpy's exact draws). The normal comes from the Box–Muller transform of two
// uniforms of std::mt19937_64 (top 53 bits each), seeded with the workload's seed on a stream of
// its own, so the arrivals are unchanged and the lengths are the same on every platform.
#pragma once

#include <cstdint>
#include <vector>

#include "serving/serving_options.h"

namespace meshplan::serving {

struct RequestLength {
  int64_t isl = 0, osl = 0;
  int64_t sequence() const { return isl + osl; }
};

// The lengths of the first `count` requests of `w`, in arrival order. REQUIRES: count ≥ 0 (at
// most the trace's size with a trace).
std::vector<RequestLength> request_lengths(const Workload& w, int64_t count);

// The longest isl + osl and the longest prompt among `lengths` (0 when empty).
int64_t longest_sequence(const std::vector<RequestLength>& lengths);
int64_t longest_prompt(const std::vector<RequestLength>& lengths);

// Answer tokens of all `lengths`.
int64_t total_output_tokens(const std::vector<RequestLength>& lengths);

}  // namespace meshplan::serving
