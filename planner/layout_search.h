// Exhaustive layout search (no sampling): every factorisation of the GPU count into
// dp·tp·pp·cp (and ep for MoE), ZeRO stage, recompute policy and recompute_layers count,
// micro-batch size dividing the batch, virtual-stage count, SP on/off and schedule. Layouts
// breaking a rule of core/layout_rules.h are never generated (each pruned branch is counted
// under the rule's name); layouts that do not fit are rejected on memory before timing.
// Multithreaded and deterministic: results are identical for any thread count (ties broken by
// enumeration order).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/layout_fields.h"
#include "planner/cost_model.h"

namespace meshplan {

enum class Objective { mfu, tokens_per_s, memory };

// Parses "tp=8,pp=16,..." (layout keys; LayoutFix is in core/layout_fields.h). Each key is pinned
// by its kLayoutFields entry; a field the search derives (uneven) is refused. Errors carry the
// column.
Result<LayoutFix> parse_layout_fix(const std::string& text);

// The most layouts one search evaluates: 10^8, about half a minute on one core. Llama 3 405B on
// 16,384 GPUs evaluates 1.0·10^7; the count grows with layers (every recompute_layers value).
constexpr int64_t kMaxSearchLayouts = 100'000'000;

struct SearchOptions {
  LayoutFix fix;
  Objective objective = Objective::mfu;
  int top_k = 10;
  int threads = 1;
  // Largest uneven deficit considered: chunk counts not dividing the layers are searched when
  // the first and last chunks together are at most this many layers short (Llama 3 405B: 126
  // layers on 16 stages, first and last hold 7).
  int64_t max_uneven_deficit = 2;
  // Rank orders searched (innermost first) unless --fix pins one: Megatron-LM's tp-cp-dp-pp,
  // and on clusters with more than two network levels also Llama 3's tp-cp-pp-dp, which keeps
  // data-parallel groups (the largest per-step traffic) inside pods (arXiv 2407.21783 §3.3.2).
  bool search_orders = true;
  // Branch and bound: a layout that fits is timed in full only while its step-time floor can
  // still enter the top_k (exact: the same results either way). Off, every layout that fits is
  // timed: the reference the tests and `meshplan bench` compare against.
  bool prune = true;
  // Runs of recompute counts whose outcome is known without placing each are counted at once:
  // the same counts and results. With prune, once a recompute count's step-time floor lost (every
  // larger count of that recompute mode, shape and schedule then cannot rank), the larger counts
  // (a lost tail); and the counts up to the first at which a ZeRO stage fits, which the memory
  // rejects (an unfit head). Off, each is generated and placed one by one: the reference the
  // tests and `meshplan bench` compare against.
  bool count_at_once = true;
  // A search that would evaluate more layouts than this does not run (SearchResult::refused).
  int64_t max_layouts = kMaxSearchLayouts;
  // The launcher the plan is for (`plan --framework X`, issue 14): a layout that fits but that
  // the launcher's export would refuse is not ranked, and is counted in SearchResult::rejected
  // under "<launcher> cannot run it: <field>", the first field it refuses. `refuses` returns
  // that field's key (a string literal) or nullptr; it is called from worker threads. Unset
  // (empty `refuses`): every layout that fits is ranked.
  struct LauncherCheck {
    std::string launcher;  // "Megatron-LM"
    std::function<const char*(const ModelSpec&, const TrainingSpec&, const Layout&)> refuses;
    // Optional, `refuses` for each ZeRO stage the array marks at once (the layout's zero is set
    // to each in turn, then restored), into the answers' array (its other entries left as they
    // are): the same answers, asked once per layout the search places at several ZeRO stages.
    // Unset: `refuses` per stage.
    std::function<void(const ModelSpec&, const TrainingSpec&, Layout&, const std::array<bool, 4>&,
                       std::array<const char*, 4>&)>
        refuses_by_zero;
    // Whether `refuses` answers alike for any two recompute_layers ≥ 2 that are multiples of the
    // layout's vpp, the rest of the layout equal (launcher_refuses' rules read the count only as
    // > 0, > 1 and % vpp): the search then asks once for a run of such counts. Unset: per count.
    bool counts_alike = false;
  };
  LauncherCheck launcher;
  // Called from worker threads with (work items done, total); must be thread-safe.
  std::function<void(int64_t, int64_t)> progress;
};

struct SearchResult {
  int64_t evaluated = 0;  // layouts generated and evaluated (memory at least)
  int64_t feasible = 0;   // of which fit in memory (and the launcher runs, when one is set)
  // Layouts that fit but that SearchOptions::launcher refuses (also in `rejected`, by field),
  // and that launcher's name ("" when none was set).
  int64_t launcher_refused = 0;
  std::string launcher;
  // Of those, layouts never timed in full: their step-time floor (the pipeline without the ZeRO
  // terms, CostModel::step_time_floor_s) already lost to top_k others (branch and bound). It
  // varies with the thread count and timing (each thread prunes against its own best), so only
  // `meshplan bench` prints it; the results do not vary.
  int64_t pruned = 0;
  // Of `evaluated`, layouts of lost recompute tails and unfit heads counted at once, never placed
  // one by one (SearchOptions::count_at_once). Like `pruned` it varies with the thread count; only
  // `meshplan bench` prints it.
  int64_t counted_at_once = 0;
  double wall_s = 0;
  std::vector<Estimate> ranked;             // best first, at most top_k, with detail
  std::map<std::string, int64_t> rejected;  // reason → count (memory by dominant term, rules)
  // Branches of the enumeration pruned by a layout rule (core/layout_rules.h: predicate name →
  // count) or by max_uneven_deficit. Kept apart from `rejected`, which reports print.
  std::map<std::string, int64_t> skipped;
  std::optional<Estimate> smallest;  // least peak memory, when nothing fits
  // Nothing fit on the GPUs alone, so the search ran again letting each candidate that did not
  // fit offload its optimizer states (the framework's devices); `evaluated` counts both passes.
  bool offload_fallback = false;
  // Above 0: the layouts the search would have evaluated, more than SearchOptions::max_layouts;
  // it did not run (check_search_size(result, ...) words the error).
  int64_t refused = 0;
};

SearchResult search_layouts(const CostModel& model, int64_t gpus, const SearchOptions& options);

// The layouts search_layouts would evaluate, counted without evaluating them.
int64_t count_search_layouts(const CostModel& model, int64_t gpus, const SearchOptions& options);

// An error (at `origin`: the command, e.g. "plan") when the search would evaluate more than
// kMaxSearchLayouts layouts, so that it is refused up front instead of running for hours.
std::optional<Diagnostic> check_search_size(const CostModel& model, int64_t gpus,
                                            const SearchOptions& options,
                                            const std::string& origin);
// The same error for a search that refused to run (SearchResult::refused), without counting the
// layouts a second time.
std::optional<Diagnostic> check_search_size(const SearchResult& result, const std::string& origin);

}  // namespace meshplan
