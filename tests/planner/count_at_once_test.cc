// Runs of recompute counts counted at once (SearchOptions::count_at_once): lost tails (once a
// recompute count's step-time floor lost, the larger counts) and unfit heads (the counts up to
// the first at which a ZeRO stage fits). The counts, the top layouts and their step times must be
// those of the search placing every layout.
#include <doctest/doctest.h>

#include <string>

#include "launchers/launcher_export.h"
#include "planner/framework_preset.h"
#include "planner/layout_search.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

// `plan --framework megatron-lm`'s launcher check, with counts_alike as `plan` declares it.
SearchOptions::LauncherCheck megatron_check() {
  return {"Megatron-LM",
          [](const ModelSpec& model, const TrainingSpec& training, const Layout& layout) {
            return launcher_refuses(Launcher::megatron, model, training, layout);
          },
          [](const ModelSpec& model, const TrainingSpec& training, Layout& layout,
             const std::array<bool, 4>& zeros, std::array<const char*, 4>& out) {
            launcher_refuses_by_zero(Launcher::megatron, model, training, layout, zeros, out);
          },
          /*counts_alike=*/true};
}

// The search counting runs at once against placing each layout: the same counts, top layouts and
// step times. Returns the first.
SearchResult check_counts_exact(const ModelSpec& m, const ClusterSpec& c, const TrainingSpec& t,
                                const std::string& framework, bool launcher, int threads,
                                bool prune = true) {
  CAPTURE(m.name);
  CAPTURE(framework);
  CAPTURE(launcher);
  CAPTURE(threads);
  CostOptions options;
  apply_framework(find_framework(framework).value(), options);
  CostModel model(m, c, CalibrationProfile{}, t, options);
  SearchOptions o;
  o.top_k = 10;
  o.threads = threads;
  o.prune = prune;
  if (launcher) o.launcher = megatron_check();
  const SearchResult counted = search_layouts(model, c.gpus(), o);
  o.count_at_once = false;
  const SearchResult each = search_layouts(model, c.gpus(), o);
  CHECK(counted.counted_at_once > 0);
  CHECK(each.counted_at_once == 0);
  CHECK(counted.evaluated == each.evaluated);
  CHECK(counted.feasible == each.feasible);
  // With more threads `pruned` varies with which thread ran which item (SearchResult::pruned).
  if (threads == 1) CHECK(counted.pruned == each.pruned);
  CHECK(counted.launcher_refused == each.launcher_refused);
  CHECK(counted.rejected == each.rejected);
  CHECK(counted.skipped == each.skipped);
  REQUIRE(counted.ranked.size() == each.ranked.size());
  for (size_t i = 0; i < counted.ranked.size(); ++i) {
    CHECK(to_string(counted.ranked[i].layout) == to_string(each.ranked[i].layout));
    CHECK(counted.ranked[i].step_time_s == each.ranked[i].step_time_s);
  }
  return counted;
}

}  // namespace

TEST_CASE("counting lost recompute tails at once keeps every count and the top layouts") {
  const TrainingSpec t{4096, 256, Precision::bf16};
  check_counts_exact(shipped_model("llama3-70b"), two_level_cluster(8), t, "megatron-core", false,
                     1);
  check_counts_exact(shipped_model("llama3-70b"), two_level_cluster(8), t, "megatron-core", true,
                     2);
  check_counts_exact(shipped_model("mixtral-8x7b"), two_level_cluster(4), t, "megatron-core", true,
                     1);
}

// Without pruning no tail is lost: what is counted at once are the unfit heads, the counts of a
// recompute choice up to the first at which a ZeRO stage fits. llama3-70b at 8,192 tokens on 32
// GPUs leaves most counts unfit, some rejected under their activations, some under the states.
TEST_CASE("counting unfit recompute heads at once keeps every rejection by its dominant term") {
  const TrainingSpec t{8192, 256, Precision::bf16};
  const SearchResult counted = check_counts_exact(shipped_model("llama3-70b"), two_level_cluster(4),
                                                  t, "megatron-core", false, 1, /*prune=*/false);
  CHECK(counted.counted_at_once > 0);
  CHECK(counted.rejected.at("exceeds memory: activations dominate") > 0);
  CHECK(counted.rejected.at("exceeds memory: model states dominate") > 0);
}
