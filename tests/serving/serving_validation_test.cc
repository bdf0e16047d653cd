// The serving development set: how rows map to problems, which are skipped and why, and the
// error summaries.
#include "serving/serving_validation.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace meshplan;
using namespace meshplan::serving;

namespace {

const std::string kRuns = std::string(MESHPLAN_TEST_DATA) + "/serving_runs.yaml";

const ServingRun& run(const std::vector<ServingRun>& runs, const std::string& id) {
  const auto it =
      std::find_if(runs.begin(), runs.end(), [&](const ServingRun& r) { return r.id == id; });
  REQUIRE(it != runs.end());
  return *it;
}

}  // namespace

TEST_CASE("serving validation: a perf-overview row takes its dataset size and KV fraction") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  const ServingRun& r = run(runs.value(), "trt017-11");  // Llama-3.1-70B FP8, 8 × H100, 1000/1000
  CHECK(r.skip_reason.empty());
  CHECK(r.model_file == "models/llama3-70b.yaml");
  CHECK(r.cluster_file == "topologies/dgx-h100-1n.yaml");
  CHECK(r.layout.tp == 8);
  CHECK(r.layout.replicas == 1);
  CHECK(r.options.weights == WeightFormat::fp8);
  CHECK(r.options.kv == KvFormat::fp8);
  CHECK(r.options.engine == Engine::trtllm);
  CHECK(r.options.memory_fraction == 0.95);
  CHECK(r.workload.load == LoadKind::offline);
  CHECK(r.workload.requests == 3000);
  CHECK(r.measured[0] == 11451.16);
}

TEST_CASE("serving validation: trtllm-bench's build limits from its KV estimate") {
  // 4600 requests fit: capped at 4096 (a multiple of 256); 4096 × (1 + 1000/1000) = 8192 tokens.
  BenchLimits b = trtllm_bench_limits(4600, 1000, 1000, 1);
  CHECK(b.max_batch == 4096);
  CHECK(b.max_num_tokens == 8192);
  // 700 → 768 (multiple of 128); 700 × 2 = 1400 tokens → the 2048 floor.
  b = trtllm_bench_limits(700, 1000, 1000, 1);
  CHECK(b.max_batch == 768);
  CHECK(b.max_num_tokens == 2048);
  // 100 / pp 2 = 50 → the 64 floor; 50 × (1 + 2048/128) = 850 tokens → 2048.
  b = trtllm_bench_limits(100, 2048, 128, 2);
  CHECK(b.max_batch == 64);
  CHECK(b.max_num_tokens == 2048);
  // 3000 × 17 = 51000 tokens → capped at 32768.
  b = trtllm_bench_limits(3000, 2048, 128, 1);
  CHECK(b.max_batch == 3072);
  CHECK(b.max_num_tokens == 32768);
}

TEST_CASE("serving validation: online and AIConfigurator rows carry their load and latencies") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  const ServingRun& online = run(runs.value(), "trtol-03");
  CHECK(online.workload.load == LoadKind::request_rate);
  CHECK(online.workload.request_rate_per_s == 16);
  CHECK(online.workload.requests == 500);
  CHECK(online.measured[1] == doctest::Approx(0.175));
  CHECK(online.measured[2] == doctest::Approx(0.066));
  const ServingRun& infinite = run(runs.value(), "trtol-05");
  CHECK(infinite.workload.load == LoadKind::offline);
  const ServingRun& aic = run(runs.value(), "aic-11");  // vLLM, 70B FP8, H200, c4
  CHECK(aic.options.engine == Engine::vllm);
  CHECK(aic.workload.load == LoadKind::concurrency);
  CHECK(aic.workload.concurrency == 4);
  CHECK(aic.measured[0] == 0);
  CHECK(aic.measured[2] == doctest::Approx(0.02147));
}

TEST_CASE("serving validation: MLPerf rows run NVIDIA's harness settings and sample counts") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  // Offline, Llama 2 70B FP8 (FP8 cache: its README's quantize step) on 4 × tp 2 H100s.
  const ServingRun& offline = run(runs.value(), "mlp41-01");
  CHECK(offline.group == "mlperf");
  CHECK(offline.skip_reason.empty());
  CHECK(offline.model_file == "models/llama2-70b.yaml");
  CHECK(offline.layout.tp == 2);
  CHECK(offline.layout.replicas == 4);
  CHECK(offline.options.engine == Engine::trtllm);
  CHECK(offline.options.weights == WeightFormat::fp8);
  CHECK(offline.options.kv == KvFormat::fp8);
  CHECK(offline.layout.max_batch == 896);  // gpu_batch_size
  CHECK(offline.options.max_step_tokens == 4096);
  CHECK(offline.workload.load == LoadKind::offline);
  CHECK(offline.workload.requests == 200640);  // the run's samples_per_query
  CHECK(offline.workload.isl == 222);
  CHECK(offline.workload.osl == 290);
  CHECK(offline.measured[0] == 24524.9);
  // Server: LoadGen's Poisson arrivals at the target rate, the run's query count.
  const ServingRun& server = run(runs.value(), "mlp41-04");
  CHECK(server.layout.tp == 1);
  CHECK(server.layout.replicas == 8);
  CHECK(server.layout.max_batch == 896);
  CHECK(server.workload.load == LoadKind::request_rate);
  CHECK(server.workload.request_rate_per_s == 101);
  CHECK(server.workload.requests == 245760);
  CHECK(server.measured[1] == doctest::Approx(0.1983));
  CHECK(server.measured[2] == doctest::Approx(0.1233));
  // Mixtral 8x7B: one GPU per engine, eight engines, its own token budget.
  const ServingRun& mixtral = run(runs.value(), "mlp41-06");
  CHECK(mixtral.skip_reason.empty());
  CHECK(mixtral.layout.tp == 1);
  CHECK(mixtral.layout.replicas == 8);
  CHECK(mixtral.options.max_step_tokens == 16384);
  CHECK(mixtral.workload.request_rate_per_s == 348);
}

TEST_CASE("serving validation: rows it cannot express are skipped with the reason") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  CHECK(run(runs.value(), "trt017-17").skip_reason.empty());  // models/mixtral-8x22b.yaml
  CHECK(run(runs.value(), "trt017-17").model_file == "models/mixtral-8x22b.yaml");
  const ServingRun& adp = run(runs.value(), "aic-22");  // tp 1 × attention_dp 8, ep 8
  CHECK(adp.skip_reason.empty());
  CHECK(adp.layout.tp == 8);
  CHECK(adp.layout.attention_dp);
  CHECK(adp.layout.ep == 8);
  CHECK(run(runs.value(), "aic-23").skip_reason ==
        "disaggregated: the source leaves the prefill and decode worker counts blank");
}

TEST_CASE("serving validation: summaries per metric, then per group and metric") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  Result<ServingValidation> v = validate_serving(runs.value(), MESHPLAN_SOURCE_DIR);
  REQUIRE(v.ok());
  REQUIRE(v->summaries.size() >= 3);
  CHECK(v->summaries[0].name == "throughput");
  CHECK(v->summaries[1].name == "ttft");
  CHECK(v->summaries[2].name == "tpot");
  for (const ServingRunResult& r : v->results) CHECK(r.error.empty());
  for (const ServingErrorSummary& s : v->summaries) CHECK(s.mean_abs <= s.max_abs);
}

TEST_CASE("serving validation: dense and MoE models' rows summarized apart, after the groups") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  Result<ServingValidation> v = validate_serving(runs.value(), MESHPLAN_SOURCE_DIR);
  REQUIRE(v.ok());
  const auto summary = [&](const std::string& name) -> const ServingErrorSummary& {
    const auto it = std::find_if(v->summaries.begin(), v->summaries.end(),
                                 [&](const ServingErrorSummary& s) { return s.name == name; });
    REQUIRE(it != v->summaries.end());
    return *it;
  };
  // The rows' models: Mixtral 8x7B and 8x22B (trt017-15..17, mlp41-05/06) and DeepSeek (aic-20..22)
  // have routed experts; every other row is dense.
  int moe_tpot = 0;
  for (const ServingRunResult& r : v->results) {
    CHECK(r.moe == (r.run->model_file.find("mixtral") != std::string::npos ||
                    r.run->model_file.find("deepseek") != std::string::npos));
    if (r.moe && r.run->measured[2] > 0) ++moe_tpot;
  }
  CHECK(moe_tpot == 4);  // mlp41-06, aic-20, aic-21, aic-22
  for (const char* metric : {"throughput", "ttft", "tpot"}) {
    CAPTURE(metric);
    const std::string m = metric;
    CHECK(summary("dense " + m).count + summary("moe " + m).count == summary(m).count);
  }
  CHECK(summary("moe tpot").count == moe_tpot);
  CHECK(summary("moe throughput").count == 5);  // trt017-15..17, mlp41-05/06
  // Overall metrics first, then groups, then the dense and MoE lines.
  const auto position = [&](const std::string& name) {
    return &summary(name) - v->summaries.data();
  };
  CHECK(position("trtllm-offline throughput") < position("dense throughput"));
  CHECK(position("aiconfigurator tpot") < position("dense throughput"));
  CHECK(v->summaries.back().name.rfind("moe ", 0) == 0);
}

TEST_CASE("serving validation: the same results in the same order on 1 or 3 threads") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  Result<ServingValidation> one = validate_serving(runs.value(), MESHPLAN_SOURCE_DIR, {}, 1);
  Result<ServingValidation> three = validate_serving(runs.value(), MESHPLAN_SOURCE_DIR, {}, 3);
  REQUIRE(one.ok());
  REQUIRE(three.ok());
  REQUIRE(one->results.size() == three->results.size());
  REQUIRE(one->results.size() > 30);
  for (size_t i = 0; i < one->results.size(); ++i) {
    CAPTURE(one->results[i].run->id);
    CHECK(three->results[i].run->id == one->results[i].run->id);
    for (int m = 0; m < 3; ++m)
      CHECK(three->results[i].predicted[m] == one->results[i].predicted[m]);
  }
  CHECK(serving_validation_table(three.value()) == serving_validation_table(one.value()));
}

TEST_CASE("serving validation: a file without rows names the field") {
  const std::string path = std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml";
  Result<std::vector<ServingRun>> runs = load_serving_runs(path);
  REQUIRE_FALSE(runs.ok());
  CHECK(runs.errors()[0].field == "rows");
}

TEST_CASE("serving validation: a profile swap reprices exactly the rows of that profile's GPU") {
  Result<std::vector<ServingRun>> runs = load_serving_runs(kRuns);
  REQUIRE(runs.ok());
  Result<ServingValidation> plain = validate_serving(runs.value(), MESHPLAN_SOURCE_DIR);
  Result<ServingValidation> swapped = validate_serving(
      runs.value(), MESHPLAN_SOURCE_DIR,
      ProfileSwaps(std::map<std::string, std::string>{{"h200-published", "h200-measured"}}));
  REQUIRE(plain.ok());
  REQUIRE(swapped.ok());
  REQUIRE(plain->results.size() == swapped->results.size());
  int changed = 0;
  for (size_t i = 0; i < plain->results.size(); ++i) {
    const ServingRun& r = *plain->results[i].run;
    CAPTURE(r.id);
    const bool h200 = r.cluster_file == "topologies/dgx-h200-64n.yaml";
    const double* a = plain->results[i].predicted;
    const double* b = swapped->results[i].predicted;
    CHECK((a[0] != b[0] || a[2] != b[2]) == h200);
    changed += h200;
  }
  CHECK(changed == 18);  // 16 rows, and MLPerf's two H200 rows (mlp41-03, -04)
  Result<ServingValidation> typo = validate_serving(
      runs.value(), MESHPLAN_SOURCE_DIR,
      ProfileSwaps(std::map<std::string, std::string>{{"h200-publish", "h200-measured"}}));
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.errors()[0].rule == "no run's cluster uses profile h200-publish");
}

TEST_CASE("serving validation: AIConfigurator's silicon rows, one group per engine") {
  const std::string path = std::string(MESHPLAN_TEST_DATA) + "/serving_runs_aiconfigurator.yaml";
  Result<std::vector<ServingRun>> runs = load_serving_runs(path);
  REQUIRE(runs.ok());
  CHECK(runs->size() == 1460);
  // The rows of models added later come last (scripts/aiconfigurator-rows.py), so earlier ids hold:
  // MiniMax-M2.5 on vLLM 0.18.0, from aicx-1071 on.
  const ServingRun& minimax = run(runs.value(), "aicx-1071");
  CHECK(minimax.group == "aic vllm");
  CHECK(minimax.model_file == "models/minimax-m2.5.yaml");
  CHECK(minimax.options.weights == WeightFormat::fp8);
  // gpt-oss-120b from aicx-1185 on: its Hopper rows labelled nvfp4 replay its MXFP4 experts with
  // a BF16 cache (AIConfigurator's own reading of an mxfp4 checkpoint); the five labelled fp8
  // stay FP8.
  const ServingRun& oss = run(runs.value(), "aicx-1190");
  CHECK(oss.model_file == "models/gpt-oss-120b.yaml");
  CHECK(oss.options.weights == WeightFormat::mxfp4);
  CHECK(oss.options.kv == KvFormat::bf16);
  CHECK(run(runs.value(), "aicx-1185").options.weights == WeightFormat::fp8);
  // GLM-5 (DeepSeek Sparse Attention) FP8 on SGLang's glm5-hopper image, 8 H200s, from aicx-1431.
  const ServingRun& glm = run(runs.value(), "aicx-1431");
  CHECK(glm.model_file == "models/glm-5.yaml");
  CHECK(glm.group == "aic sglang");
  CHECK(glm.options.weights == WeightFormat::fp8);
  CHECK(glm.layout.tp == 8);
  // Qwen3-235B-A22B FP8 with TensorRT-LLM 1.0.0rc3 on 4 H100s, ep 2, 128/128 tokens, 16 users.
  const ServingRun& trt = run(runs.value(), "aicx-001");
  CHECK(trt.group == "aic trtllm");
  CHECK(trt.model_file == "models/qwen3-235b-a22b.yaml");
  CHECK(trt.layout.tp == 4);
  CHECK(trt.layout.ep == 2);
  CHECK(trt.options.weights == WeightFormat::fp8);
  CHECK(trt.workload.concurrency == 16);
  // The generator's agg max_num_tokens when the rows were measured: max_batch + isl + 1500 in
  // blocks of 32: 16 + 128 + 1500 = 1644 → 1664; max_batch_size: the batch.
  CHECK(trt.options.max_step_tokens == 1664);
  CHECK(trt.layout.max_batch == 16);
  // An FP8-block checkpoint: the generator launches it with an FP8 KV cache.
  CHECK(trt.options.kv == KvFormat::fp8);
  CHECK(trt.measured[1] == doctest::Approx(0.246730755196875));
  for (const ServingRun& r : runs.value()) {
    CAPTURE(r.id);
    CHECK(r.skip_reason.empty());
    if (r.group == "aic sglang") {
      CHECK(r.options.engine == Engine::sglang);
      CHECK(r.options.max_step_tokens == 0);  // its chunked-prefill size
    }
    // The KV cache follows the weights (the CSV states neither KV format).
    CHECK((r.options.kv == KvFormat::fp8) == (r.options.weights == WeightFormat::fp8));
    // vllm.rule: max_batch + isl + 1500.
    if (r.group == "aic vllm")
      CHECK(r.options.max_step_tokens ==
            static_cast<int64_t>(r.workload.concurrency) + r.workload.isl + 1500);
  }
}

TEST_CASE("serving validation: SGLang rows measured after the generator's mixed-chunk fix run it") {
  // sglang.rule at 095f58a: --enable-mixed-chunk and --max-prefill-tokens isl + 1500, since
  // 07a377923 (2026-01-19). aicx-557: DeepSeek-R1, SGLang 0.5.9, measured 2026-03-25, isl 1024;
  // aicx-203: Qwen3-32B, SGLang 0.5.1.post1, undated: SGLang's defaults.
  const std::string path = std::string(MESHPLAN_TEST_DATA) + "/serving_runs_aiconfigurator.yaml";
  Result<std::vector<ServingRun>> runs = load_serving_runs(path);
  REQUIRE(runs.ok());
  const ServingRun& dated = run(runs.value(), "aicx-557");
  CHECK(dated.options.mixed_chunk);
  CHECK(dated.options.max_prefill_tokens == 1024 + 1500);
  const ServingRun& undated = run(runs.value(), "aicx-203");
  CHECK_FALSE(undated.options.mixed_chunk);
  CHECK(undated.options.max_prefill_tokens == 0);
  // TensorRT-LLM rows of the same dates keep their own rules.
  for (const ServingRun& r : runs.value())
    if (r.options.engine != Engine::sglang) CHECK_FALSE(r.options.mixed_chunk);
}

TEST_CASE(
    "serving validation: GPUStack's DeepSeek-V3.2 rows send every prompt at once to engines at "
    "their defaults") {
  const std::string path = std::string(MESHPLAN_TEST_DATA) + "/serving_runs_gpustack.yaml";
  Result<std::vector<ServingRun>> runs = load_serving_runs(path);
  REQUIRE(runs.ok());
  CHECK(runs->size() == 10);
  // vLLM 0.13.0 at -tp 8: 500 random prompts of 4,000 tokens, answers of 200, BF16 cache (auto).
  const ServingRun& vllm = run(runs.value(), "gps-03");
  CHECK(vllm.group == "gpustack");
  CHECK(vllm.skip_reason.empty());
  CHECK(vllm.model_file == "models/deepseek-v3.2.yaml");
  CHECK(vllm.options.engine == Engine::vllm);
  CHECK(vllm.options.weights == WeightFormat::fp8);
  CHECK(vllm.options.kv == KvFormat::bf16);
  CHECK(vllm.layout.tp == 8);
  CHECK(!vllm.layout.attention_dp);
  CHECK(vllm.layout.replicas == 1);
  CHECK(vllm.workload.load == LoadKind::offline);
  CHECK(vllm.workload.requests == 500);
  CHECK(vllm.workload.isl == 4000);
  CHECK(vllm.workload.osl == 200);
  CHECK(vllm.options.max_step_tokens == 0);  // the engine's default
  CHECK(vllm.measured[0] == 474.96);
  CHECK(vllm.measured[1] == doctest::Approx(103.38688));
  CHECK(vllm.measured[2] == doctest::Approx(0.22674));
  // SGLang 0.5.6.post2 with --tp-size 8 --dp-size 8 --enable-dp-attention: tp 8 under
  // attention-DP on one engine; 984 of 1,000 prompts succeeded.
  const ServingRun& sglang = run(runs.value(), "gps-06");
  CHECK(sglang.options.engine == Engine::sglang);
  CHECK(sglang.layout.tp == 8);
  CHECK(sglang.layout.attention_dp);
  CHECK(sglang.layout.replicas == 1);
  CHECK(sglang.workload.requests == 984);
  CHECK(!sglang.options.mixed_chunk);  // SGLang's default prefill-first scheduler
  // DeepSeek-V3 and R1 rows elsewhere keep DeepSeek-V3's file.
  Result<std::vector<ServingRun>> aic =
      load_serving_runs(std::string(MESHPLAN_TEST_DATA) + "/serving_runs_aiconfigurator.yaml");
  REQUIRE(aic.ok());
  CHECK(run(aic.value(), "aicx-557").model_file == "models/deepseek-v3.yaml");
}
