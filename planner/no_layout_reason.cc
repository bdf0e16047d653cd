#include "planner/no_layout_reason.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <utility>

#include "core/layout_rules.h"
#include "core/units.h"

namespace meshplan {
namespace {

// The rule behind a counter of SearchResult::skipped or ::rejected, as a sentence. Counters
// without an entry are memory rejections (handled apart) or printed by name.
std::string rule_sentence(const std::string& counter, const ModelSpec& m, const TrainingSpec& t,
                          int64_t max_uneven_deficit) {
  if (counter == "tp_splits_heads") return fmt::format("tp must divide the heads ({})", m.heads);
  if (counter == "tp_splits_kv_heads")
    return fmt::format("tp must divide the KV heads ({}) or be a multiple of them", m.kv_heads);
  if (counter == "tp_splits_ffn")
    return fmt::format("tp must divide ffn_hidden ({})", m.ffn_hidden);
  if (counter == "tp_splits_expert_ffn")
    return fmt::format("tp must divide the experts' ffn ({})",
                       m.moe ? m.moe->expert_ffn_hidden : 0);
  if (counter == "cp_splits_sequence")
    return fmt::format("2·cp must divide the sequence length ({})", t.seq_len);
  if (counter == "cp_kind_needs_cp") return "cp_kind other than ring needs cp > 1";
  if (counter == "cp_a2a_splits_cp")
    return "hybrid CP needs an all-to-all group (the CP ranks in a node, or cp_a2a) strictly "
           "between 1 and cp, dividing cp";
  if (counter == "cp_a2a_splits_heads")
    return fmt::format(
        "CP's all-to-all must split each TP rank's query heads ({}) and KV heads "
        "({}) evenly",
        m.heads, m.kv_heads);
  if (counter == "chunks_within_layers")
    return fmt::format(
        "pp must not exceed the layers + {} ({}: the embedding and the loss may "
        "each fill a stage of their own)",
        kEmbeddingAndLossChunks, m.layers + kEmbeddingAndLossChunks);
  if (counter == "uneven deficit above max_uneven_deficit")
    return fmt::format("pp·vpp must split the {} layers evenly, or at most {} short", m.layers,
                       max_uneven_deficit);
  if (counter == "ep_fits_dp_cp") return "ep must divide dp·cp";
  if (counter == "sp_splits_sequence")
    return fmt::format("tp must divide each CP rank's sequence ({}) under sequence parallelism",
                       t.seq_len);
  if (counter == "global batch not divisible by dp")
    return fmt::format("dp must divide the global batch ({} sequences)", t.global_batch);
  if (counter == "interleaving needs micro-batches in multiples of pp")
    return "interleaving needs micro-batches in multiples of pp";
  return counter;
}

bool is_memory_counter(const std::string& counter) {
  return counter.rfind("exceeds memory", 0) == 0;
}

const char* dominant_of(const StageMemory& s) {
  const double states = s.params_bytes + s.grads_bytes + s.optimizer_bytes;
  if (states >= s.activations_bytes && states >= s.other_bytes()) return "model states";
  return s.activations_bytes >= s.other_bytes() ? "activations" : "logits/buffers";
}

bool any_fixed(const LayoutFix& f) {
  return f.dp || f.tp || f.pp || f.cp || f.ep || f.mbs || f.vpp || f.recompute_layers || f.zero ||
         f.recompute || f.schedule || f.sp || f.order || f.tp_overlap || f.shard || f.cp_kind ||
         f.cp_a2a;
}

// Layouts fit, but the launcher refuses each (SearchResult::rejected's "<launcher> cannot run
// it: <field>" counters), most refused field first.
NoLayoutReason launcher_reason(const SearchResult& r) {
  NoLayoutReason out;
  out.kind = NoLayoutKind::launcher;
  out.launcher_refused = r.launcher_refused;
  const std::string prefix = r.launcher + " cannot run it: ";
  std::vector<std::pair<int64_t, std::string>> counts;
  for (const auto& [name, n] : r.rejected)
    if (name.rfind(prefix, 0) == 0) counts.push_back({n, name.substr(prefix.size())});
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [n, field] : counts)
    out.refused_fields.push_back(fmt::format("{} ({} layouts)", field, n));
  out.text = fmt::format(
      "launcher: {} layouts fit, but {} cannot run any of them; it refuses {} (export --format "
      "says why; --any-launcher ranks them anyway)",
      r.launcher_refused, r.launcher, fmt::join(out.refused_fields, ", "));
  return out;
}

std::string gib_text(double bytes) { return fmt::format("{:.2f} GiB", bytes / units::kGiB); }

}  // namespace

const char* to_string(NoLayoutKind kind) {
  switch (kind) {
    case NoLayoutKind::divisibility:
      return "divisibility";
    case NoLayoutKind::memory:
      return "memory";
    case NoLayoutKind::fixed:
      return "fixed";
    case NoLayoutKind::launcher:
      return "launcher";
  }
  return "";
}

NoLayoutReason explain_no_layout(const SearchResult& r, const ModelSpec& model,
                                 const TrainingSpec& training, int64_t gpus,
                                 const SearchOptions& options) {
  assert(r.ranked.empty());
  NoLayoutReason out;
  if (r.launcher_refused > 0) return launcher_reason(r);
  if (r.smallest) {
    const Estimate& e = *r.smallest;
    out.kind = NoLayoutKind::memory;
    out.smallest_peak_bytes = e.peak_bytes;
    out.capacity_bytes = e.capacity_bytes;
    out.smallest_layout = to_string(e.layout);
    out.dominant = static_cast<size_t>(e.peak_stage) < e.memory.stages.size()
                       ? dominant_of(e.memory.stages[static_cast<size_t>(e.peak_stage)])
                       : "";
    out.text =
        fmt::format("memory: the smallest layout ({}) needs {} per GPU, {} over the {} capacity{}",
                    out.smallest_layout, gib_text(out.smallest_peak_bytes),
                    gib_text(out.over_bytes()), gib_text(out.capacity_bytes),
                    out.dominant.empty() ? "" : fmt::format(" ({} dominate)", out.dominant));
    return out;
  }
  // Rules by pruned branches, most first; equal counts by name (the maps' order).
  std::vector<std::pair<int64_t, std::string>> counts;
  for (const auto* counters : {&r.skipped, &r.rejected})
    for (const auto& [name, n] : *counters)
      if (!is_memory_counter(name)) counts.push_back({n, name});
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [n, name] : counts)
    out.rules.push_back(rule_sentence(name, model, training, options.max_uneven_deficit));
  if (out.rules.empty()) {
    out.kind = NoLayoutKind::fixed;
    out.text = fmt::format("fixed fields: no layout of {} GPUs has the pinned values", gpus);
    return out;
  }
  out.kind = NoLayoutKind::divisibility;
  out.text = fmt::format(
      "divisibility: no tp·cp·pp·dp split of {} GPUs{} passes the layout rules: {}", gpus,
      any_fixed(options.fix) ? " with the fixed fields" : "", fmt::join(out.rules, "; "));
  return out;
}

}  // namespace meshplan
