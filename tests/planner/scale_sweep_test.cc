#include "planner/scale_sweep.h"

#include <doctest/doctest.h>

#include "planner/cluster_extension.h"
#include "planner/training_time.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

SweepRequest gpu_sweep(std::vector<int64_t> counts, int threads = 1) {
  SweepRequest r;
  r.gpu_counts = std::move(counts);
  r.search.threads = threads;
  return r;
}

}  // namespace

TEST_CASE("training time: 3.6e9 tokens at 1e6 tokens/s on 8 GPUs is 1 h, 8 GPU-hours, $16") {
  const TrainingTime t = training_time(3.6e9, 1e6, 8, 2.0);
  CHECK(t.seconds == 3600);
  CHECK(t.gpu_hours == 8);
  CHECK(t.cost_usd == 16);
}

TEST_CASE("batch rules: fixed, tokens per step over the sequence, sequences per GPU") {
  const TrainingSpec base{8192, 1024, Precision::bf16};
  CHECK(global_batch_for({}, base, 64, 8192) == 1024);
  CHECK(global_batch_for({BatchRule::fixed_sequences, 256}, base, 64, 8192) == 256);
  CHECK(global_batch_for({BatchRule::tokens_per_step, 4194304}, base, 64, 8192) == 512);
  CHECK(global_batch_for({BatchRule::tokens_per_step, 4194304}, base, 64, 4096) == 1024);
  CHECK(global_batch_for({BatchRule::tokens_per_step, 4194304}, base, 64, 3000) == 0);
  CHECK(global_batch_for({BatchRule::sequences_per_gpu, 2}, base, 64, 8192) == 128);
}

TEST_CASE("extending a cluster adds nodes of the same kind and widens only the outermost level") {
  const ClusterSpec c = two_level_cluster(4);  // 32 GPUs: nvlink span 8, ib span 32
  const ClusterSpec same = extend_cluster(c, 32);
  CHECK(same.nodes == 4);
  CHECK(same.network.back().span == 32);
  CHECK_FALSE(needs_extension(c, 32));
  const ClusterSpec big = extend_cluster(c, 100);  // ceil(100 / 8) = 13 nodes
  CHECK(needs_extension(c, 100));
  CHECK(big.nodes == 13);
  CHECK(big.gpus_per_node == 8);
  CHECK(big.gpu.name == c.gpu.name);
  REQUIRE(big.network.size() == 2);
  CHECK(big.network[0].span == 8);
  CHECK(big.network[0].bandwidth_bytes_per_s == c.network[0].bandwidth_bytes_per_s);
  CHECK(big.network[1].span == 104);
  CHECK(big.network[1].bandwidth_bytes_per_s == c.network[1].bandwidth_bytes_per_s);
  CHECK(big.network[1].latency_s == c.network[1].latency_s);
}

TEST_CASE("the sweep's best layout at each count is the search's (plan's) best at that count") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = two_level_cluster(2);  // 16 GPUs
  const CostModel model(m, c, CalibrationProfile{}, {8192, 64, Precision::bf16});
  const SweepResult s = run_sweep(model, gpu_sweep({4, 8, 16})).value();
  REQUIRE(s.rows.size() == 3);
  for (const SweepRow& row : s.rows) {
    CAPTURE(row.gpus);
    SearchOptions o;
    SearchResult plan = search_layouts(model, row.gpus, o);
    REQUIRE(row.best);
    REQUIRE(!plan.ranked.empty());
    CHECK(to_string(row.best->layout) == to_string(plan.ranked.front().layout));
    CHECK(row.best->step_time_s == plan.ranked.front().step_time_s);
    CHECK(row.evaluated == plan.evaluated);
    CHECK(row.feasible == plan.feasible);
    CHECK_FALSE(row.cluster_extended);
    CHECK(row.nodes == 2);
  }
}

TEST_CASE("a sweep past the cluster runs on the extended cluster and says so") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = two_level_cluster(1);  // 8 GPUs
  const CostModel model(m, c, CalibrationProfile{}, {8192, 64, Precision::bf16});
  const SweepResult s = run_sweep(model, gpu_sweep({8, 32})).value();
  REQUIRE(s.rows.size() == 2);
  CHECK_FALSE(s.rows[0].cluster_extended);
  CHECK(s.rows[1].cluster_extended);
  CHECK(s.rows[1].nodes == 4);
  // The same as planning on a 4-node cluster of the same kind.
  const CostModel four(m, two_level_cluster(4), CalibrationProfile{}, {8192, 64, Precision::bf16});
  SearchResult plan = search_layouts(four, 32, SearchOptions{});
  REQUIRE(s.rows[1].best);
  CHECK(to_string(s.rows[1].best->layout) == to_string(plan.ranked.front().layout));
  CHECK(s.rows[1].best->step_time_s == plan.ranked.front().step_time_s);
}

TEST_CASE("time to train, GPU-hours, cost and scaling efficiency follow from tokens/s") {
  const ModelSpec m = shipped_model("llama3-8b");
  const CostModel model(m, two_level_cluster(2), CalibrationProfile{}, {8192, 64, Precision::bf16});
  SweepRequest r = gpu_sweep({4, 8, 16});
  r.tokens = 1e12;
  r.gpu_hour_cost_usd = 2.5;
  const SweepResult s = run_sweep(model, r).value();
  REQUIRE(s.rows.size() == 3);
  const double base_per_gpu = s.rows[0].best->tokens_per_s / 4;
  for (const SweepRow& row : s.rows) {
    CAPTURE(row.gpus);
    REQUIRE(row.best);
    CHECK(row.time_to_train_s == doctest::Approx(1e12 / row.best->tokens_per_s));
    CHECK(row.gpu_hours == doctest::Approx(row.gpus * row.time_to_train_s / 3600));
    CHECK(row.cost_usd == doctest::Approx(2.5 * row.gpu_hours));
    CHECK(row.scaling_efficiency ==
          doctest::Approx(row.best->tokens_per_s / row.gpus / base_per_gpu));
  }
  CHECK(s.rows[0].scaling_efficiency == 1.0);
}

TEST_CASE("a count no split passes says which divisibility rules stopped it") {
  // 40 = 8 · 5: the 5 fits neither tp (32 heads), cp (2·5 does not divide 8192), pp (32 layers
  // on 5, 10 or 20 stages leave more than 2 layers short; 40 exceeds them) nor dp (64 sequences).
  const ModelSpec m = shipped_model("llama3-8b");
  const CostModel model(m, two_level_cluster(8), CalibrationProfile{}, {8192, 64, Precision::bf16});
  const SweepResult s = run_sweep(model, gpu_sweep({40})).value();
  REQUIRE(s.rows.size() == 1);
  const SweepRow& row = s.rows[0];
  CHECK_FALSE(row.best);
  REQUIRE(row.no_layout);
  CHECK(row.no_layout->kind == NoLayoutKind::divisibility);
  CHECK(row.evaluated == 0);
  CHECK(row.no_layout->text.rfind(
            "divisibility: no tp·cp·pp·dp split of 40 GPUs passes the layout rules: ", 0) == 0);
  CHECK(row.no_layout->text.find("dp must divide the global batch (64 sequences)") !=
        std::string::npos);
  CHECK(row.no_layout->text.find("2·cp must divide the sequence length (8192)") !=
        std::string::npos);
  CHECK(row.no_layout->text.find("no valid layout") == std::string::npos);
}

TEST_CASE("a count where nothing fits says memory, and by how much") {
  // llama3-70b on one 8-GPU node: even ZeRO-3 leaves 70.6e9 · 18 / 8 bytes of model states.
  const ModelSpec m = shipped_model("llama3-70b");
  const CostModel model(m, two_level_cluster(1), CalibrationProfile{}, {8192, 64, Precision::bf16});
  const SweepResult s = run_sweep(model, gpu_sweep({8})).value();
  const SweepRow& row = s.rows.at(0);
  REQUIRE(row.no_layout);
  CHECK(row.no_layout->kind == NoLayoutKind::memory);
  CHECK(row.no_layout->over_bytes() > 0);
  CHECK(row.no_layout->over_bytes() ==
        doctest::Approx(row.no_layout->smallest_peak_bytes - row.no_layout->capacity_bytes));
  CHECK(row.no_layout->dominant == "model states");
  CHECK(row.no_layout->text.rfind("memory: the smallest layout (", 0) == 0);
  CHECK(row.no_layout->text.find("GiB over the 79.65 GiB capacity (model states dominate)") !=
        std::string::npos);
}

TEST_CASE("a sequence-length sweep keeps the GPU count and derives the batch per length") {
  const ModelSpec m = shipped_model("llama3-8b");
  const CostModel model(m, two_level_cluster(1), CalibrationProfile{}, {8192, 64, Precision::bf16});
  SweepRequest r = gpu_sweep({8});
  r.seq_lens = {4096, 8192};
  r.batch = {BatchRule::tokens_per_step, 524288};
  const SweepResult s = run_sweep(model, r).value();
  REQUIRE(s.axis == SweepAxis::seq_len);
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].seq_len == 4096);
  CHECK(s.rows[0].global_batch == 128);
  CHECK(s.rows[1].global_batch == 64);
  CHECK(s.rows[0].scaling_efficiency == 0);
}

TEST_CASE("sweep rows are identical for 1 and 2 search threads") {
  const ModelSpec m = shipped_model("llama3-8b");
  const CostModel model(m, two_level_cluster(2), CalibrationProfile{}, {8192, 64, Precision::bf16});
  const SweepResult a = run_sweep(model, gpu_sweep({8, 16, 40}, 1)).value();
  const SweepResult b = run_sweep(model, gpu_sweep({8, 16, 40}, 2)).value();
  REQUIRE(a.rows.size() == b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    CHECK(a.rows[i].best.has_value() == b.rows[i].best.has_value());
    if (a.rows[i].best) {
      CHECK(to_string(a.rows[i].best->layout) == to_string(b.rows[i].best->layout));
      CHECK(a.rows[i].best->step_time_s == b.rows[i].best->step_time_s);
    }
    CHECK(a.rows[i].rejected == b.rows[i].rejected);
  }
}

TEST_CASE("a global-batch sweep keeps the GPU count and sequence length, one row per batch") {
  const ModelSpec m = shipped_model("llama3-8b");
  const CostModel model(m, two_level_cluster(1), CalibrationProfile{}, {8192, 64, Precision::bf16});
  SweepRequest r = gpu_sweep({8});
  r.global_batches = {32, 64, 128};
  const SweepResult s = run_sweep(model, r).value();
  REQUIRE(s.axis == SweepAxis::global_batch);
  REQUIRE(s.rows.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(s.rows[i].gpus == 8);
    CHECK(s.rows[i].seq_len == 8192);
    CHECK(s.rows[i].global_batch == r.global_batches[i]);
    // The same as planning with that batch.
    const CostModel plan_model(m, two_level_cluster(1), CalibrationProfile{},
                               {8192, r.global_batches[i], Precision::bf16});
    SearchResult plan = search_layouts(plan_model, 8, SearchOptions{});
    REQUIRE(s.rows[i].best);
    CHECK(to_string(s.rows[i].best->layout) == to_string(plan.ranked.front().layout));
  }
}
