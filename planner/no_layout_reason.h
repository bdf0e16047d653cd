// Why a search found no layout to rank, in the words of the rule that stopped it: a count
// admits no layout either because no split of the GPUs into tp·cp·pp·dp passes the layout rules
// (divisibility), or because every split that passes them exceeds GPU memory (memory, by how
// much). Built from the search's own counts (SearchResult::skipped, rejected, smallest), so it
// never disagrees with `plan`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "planner/layout_search.h"

namespace meshplan {

enum class NoLayoutKind {
  divisibility,  // no layout passes the layout rules (core/layout_rules.h)
  memory,        // layouts pass the rules, none fits
  fixed,         // the pinned fields (--fix) leave nothing to enumerate
  launcher,      // layouts fit, but the launcher the plan is for runs none of them
};

struct NoLayoutReason {
  NoLayoutKind kind = NoLayoutKind::divisibility;
  // divisibility: the rules that pruned the enumeration, most pruned branches first, each as a
  // sentence ("dp must divide the global batch (1024)").
  std::vector<std::string> rules;
  // launcher: the layouts that fit and what the launcher refuses, most refused first
  // ("zero (1,204 layouts)").
  int64_t launcher_refused = 0;
  std::vector<std::string> refused_fields;
  // memory: the smallest peak any layout needs, the capacity, and what dominates it.
  double smallest_peak_bytes = 0, capacity_bytes = 0;
  std::string smallest_layout;  // to_string of that layout
  std::string dominant;         // "model states" | "activations" | "logits/buffers"
  double over_bytes() const { return smallest_peak_bytes - capacity_bytes; }
  // One line: "memory: the smallest layout (...) needs 95.31 GiB per GPU, 15.66 GiB over the
  // 79.65 GiB capacity (model states dominate)", "divisibility: no tp·cp·pp·dp split of 100
  // GPUs passes the layout rules: ...".
  std::string text;
};

// "divisibility", "memory", "fixed" or "launcher".
const char* to_string(NoLayoutKind kind);

// REQUIRES: r.ranked is empty (the search over `gpus` GPUs of `model` with `training` under
// `options` found nothing); when r.smallest is set it was evaluated with detail
// (search_layouts does).
NoLayoutReason explain_no_layout(const SearchResult& r, const ModelSpec& model,
                                 const TrainingSpec& training, int64_t gpus,
                                 const SearchOptions& options = {});

}  // namespace meshplan
