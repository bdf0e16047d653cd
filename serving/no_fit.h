// Why no serving layout fits on the GPUs given, and what would make one fit.
//
// A layout fits when the KV budget its engine's rule leaves beside the weights, workspace and
// reserved memory (serving_memory.h) holds one request's cache (ServingMemory::fits: the
// search's own test, serving_search.h). Where no candidate of a search fits at any weight
// format it searched, explain_no_fit names the nearest (the least memory short per GPU) with
// its memory, and the changes that would make a layout fit, each with the fewest GPUs it needs
// (one replica, tp·pp GPUs, of the search's own candidates: tp within a node, pp a power of two
// up to 8) within the cluster:
//   - more GPUs, at the weight formats searched;
//   - a lighter weight format than those searched (FP8 where the GPU has FP8 tensor cores,
//     MXFP4 where the checkpoint holds its routed experts so, INT4), where it needs fewer GPUs;
//   - an FP8 KV cache (with a BF16 one), where it needs fewer GPUs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serving/serving_plan.h"

namespace meshplan::serving {

// One change that makes a layout fit: the flags to give, and the layout it fits (one replica).
struct NoFitRemedy {
  std::string flags;  // "--gpus 32", "--weights fp8", "--weights fp8 --gpus 32", …
  WeightFormat weights = WeightFormat::bf16;
  KvFormat kv = KvFormat::bf16;
  ServingLayout layout;  // replicas 1, max_batch resolved
  int64_t max_concurrency = 0;
};

struct NoFit {
  ServingLayout nearest;  // max_batch resolved
  WeightFormat weights = WeightFormat::bf16;
  ServingMemory memory;  // the nearest's, per GPU
  // The cache one request takes per GPU, with a shared prefix's one copy (bytes), and what the
  // engine's rule leaves for it (below zero where weights and workspace exceed its share).
  double request_kv_bytes = 0;
  double signed_budget_bytes = 0;
  double short_bytes() const { return request_kv_bytes - signed_budget_bytes; }
  // Fewest GPUs first; empty where nothing fits within the cluster.
  std::vector<NoFitRemedy> remedies;
};

// nullopt when some candidate of `p` (any weight format it searches) fits.
std::optional<NoFit> explain_no_fit(const ServingProblem& p);
// `layout` (max_batch as given) as NoFit's nearest, at the weight format it comes nearest to
// fitting with; no remedies. REQUIRES: weight_formats(p) not empty.
NoFit layout_shortfall(const ServingProblem& p, const ServingLayout& layout);

// One request's cache per GPU of a layout with memory `m` (with a shared prefix's one copy), and
// the budget its engine's rule leaves before it stops at zero (signed_kv_budget_bytes).
double request_kv_bytes(const ServingMemory& m);
double signed_budget_bytes(const ServingProblem& p, const ServingMemory& m);

}  // namespace meshplan::serving
