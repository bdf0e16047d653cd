#include "serving/serving_validation.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/parallel_for.h"
#include "planner/profile_lookup.h"
#include "serving/engine_preset.h"
#include "serving/request_replay.h"
#include "serving/serving_memory.h"
#include "serving/serving_plan.h"

namespace meshplan::serving {
namespace {

constexpr int64_t kOnlineTableRequests = 500;  // TensorRT-LLM online serving table, v0.14
// AIConfigurator's benchmark (bench_run.sh.j2 at 095f58a): AIPerf in a closed loop,
// --num-requests concurrency × BENCH_MULTI_ROUND (20) after --warmup-request-count
// concurrency × 2; AIPerf waits for every warm-up response before it starts measuring
// (docs/tutorials/warmup.md), so the measured requests begin as one wave on an idle engine.
constexpr int64_t kAiconfiguratorRounds = 20;

// The TensorRT-LLM perf overview's benchmark settings (perf-overview.md at the row's commit,
// "Reproducing Benchmarked Results"): requests per (isl, osl) dataset, and "in majority of
// cases ... --kv_cache_free_gpu_mem_fraction 0.95".
constexpr double kPerfOverviewKvFraction = 0.95;
struct DatasetSize {
  int64_t isl, osl, requests;
};
constexpr DatasetSize kPerfOverviewRequests[] = {
    {128, 128, 30000},  {128, 2048, 3000},  {128, 4096, 1500},
    {2048, 128, 3000},  {2048, 2048, 1500}, {5000, 500, 1500},
    {1000, 1000, 3000}, {500, 2000, 3000},  {20000, 2000, 1000}};

int64_t perf_overview_requests(int64_t isl, int64_t osl) {
  for (const DatasetSize& d : kPerfOverviewRequests)
    if (d.isl == isl && d.osl == osl) return d.requests;
  return 0;
}
constexpr double kMs = 1e-3;

// AIConfigurator's deployments (the generator its benchmark script bench_run.sh.j2 runs against):
// an aggregated worker's step budget is max_batch + isl + 1500 tokens, for TensorRT-LLM
// (max_num_tokens) in blocks of 32 and for vLLM (vllm.rule: max_num_tokens) as is; SGLang keeps
// its chunked-prefill size. max_batch is the closed loop's concurrency (the rule's
// estimated_concurrency). TensorRT-LLM's + 1500: generator/backends/trtllm.py at b642c1e
// (2025-10-29), rule_plugin/trtllm.rule from 95ddf241a (2025-12-04) and the benchmark rules
// (rule_plugin/benchmark/trtllm.rule, 2026-01-30 on); the production rule's + 500 dates from
// 1cc3526b4 (2026-04-01), after every dated TensorRT-LLM row of the CSV was measured.
int64_t aiconfigurator_step_tokens(Engine engine, const Workload& w) {
  const int64_t batch = requests_in_flight(w, 1);
  if (engine == Engine::trtllm) return (batch + w.isl + 1500 + 31) / 32 * 32;
  if (engine == Engine::vllm) return batch + w.isl + 1500;
  return 0;
}

// SGLang's launch rules there (sglang.rule): --enable-mixed-chunk and --max-prefill-tokens
// isl + 1500, since 07a377923 ("fix sglang enable mixed chunk", 2026-01-19; before it the
// templates passed neither). A row measured on or after that day (measured_on, the date the
// CSV's silicon_data_source gives) ran with them; an undated one is taken at SGLang's defaults.
constexpr const char* kAiconfiguratorMixedChunkSince = "2026-01-19";

void aiconfigurator_sglang_launch(const std::string& measured_on, const Workload& w,
                                  ServingOptions& o) {
  if (o.engine != Engine::sglang || measured_on.empty() ||
      measured_on < kAiconfiguratorMixedChunkSince)
    return;
  o.mixed_chunk = true;
  o.max_prefill_tokens = w.isl + 1500;
}

// Their batch caps (same rules): vLLM and SGLang agg_decode max_batch_size = 512, or twice the
// batch above 512; TensorRT-LLM's max_batch_size is the batch itself (backends/trtllm.py at
// b642c1e: max_batch_size = bs; rule_plugin/benchmark/trtllm.rule: the simulated batch size).
int64_t aiconfigurator_max_batch(Engine engine, const Workload& w) {
  const int64_t batch = requests_in_flight(w, 1);
  if (engine == Engine::trtllm) return batch;
  return batch < 512 ? 512 : 2 * batch;
}

std::string text(const YAML::Node& row, const char* key) {
  const YAML::Node n = row[key];
  return n && n.IsScalar() ? n.as<std::string>() : "";
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// A positive number, or 0 when absent or not a number ("not stated", "inf").
double number(const YAML::Node& row, const char* key) {
  const std::string s = text(row, key);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v) && v > 0 ? v : 0;
}

std::string model_file(const std::string& name) {
  if (has(name, "Llama-3.1-8B")) return "models/llama3-8b.yaml";
  if (has(name, "Llama-3.1-70B")) return "models/llama3-70b.yaml";
  if (has(name, "Llama-3.1-405B")) return "models/llama3-405b.yaml";
  if (has(name, "Llama-2-70B")) return "models/llama2-70b.yaml";
  if (has(name, "Mixtral-8x7B")) return "models/mixtral-8x7b.yaml";
  if (has(name, "Mixtral-8x22B")) return "models/mixtral-8x22b.yaml";
  if (has(name, "DeepSeek-V3.2")) return "models/deepseek-v3.2.yaml";
  if (has(name, "DeepSeek-R1") || has(name, "DeepSeek-V3")) return "models/deepseek-v3.yaml";
  if (has(name, "Qwen3-235B-A22B")) return "models/qwen3-235b-a22b.yaml";
  if (has(name, "Qwen3-32B")) return "models/qwen3-32b.yaml";
  if (has(name, "MiniMax-M2.5")) return "models/minimax-m2.5.yaml";
  if (has(name, "gpt-oss-120b")) return "models/gpt-oss-120b.yaml";
  if (has(name, "GLM-5")) return "models/glm-5.yaml";
  return "";
}

std::string cluster_file(const std::string& gpu) {
  if (has(gpu, "H100")) return "topologies/dgx-h100-1n.yaml";
  if (has(gpu, "H200")) return "topologies/dgx-h200-64n.yaml";
  if (has(gpu, "A100")) return "topologies/selene-a100.yaml";
  return "";
}

Engine engine_of(const std::string& backend) {
  if (has(backend, "vllm")) return Engine::vllm;
  if (has(backend, "sglang")) return Engine::sglang;
  return Engine::trtllm;
}

std::string group_of(const YAML::Node& row) {
  const std::string src = text(row, "src") + text(row, "source");
  // scripts/aiconfigurator-rows.py's rows: one group per engine.
  if (src == "aiconfigurator-silicon")
    return std::string("aic ") + to_string(engine_of(text(row, "backend")));
  if (has(src, "trtllm-perf-overview")) return "trtllm-offline";
  if (has(src, "trtllm-online")) return "trtllm-online";
  if (has(src, "aiconfigurator")) return "aiconfigurator";
  if (has(src, "gpustack")) return "gpustack";
  return "mlperf";
}

ServingRun run_of(const YAML::Node& row, int ordinal) {
  ServingRun r;
  r.group = group_of(row);
  r.id = text(row, "id");
  if (r.id.empty()) r.id = fmt::format("aic-{:02}", ordinal);
  r.model_name = text(row, "model");
  r.model_file = model_file(r.model_name);
  r.cluster_file = cluster_file(text(row, "gpu"));
  const std::string weights = text(row, "weights"), kv = text(row, "kv");
  r.options.weights = weights.rfind("fp8", 0) == 0 ? WeightFormat::fp8 : WeightFormat::bf16;
  // AIConfigurator's CSV labels gpt-oss-120b's H100/H200 rows nvfp4 (precision fp4), which a
  // Hopper cannot run (no FP4 tensor cores); its own reading of that checkpoint
  // (sdk/models/helpers.py at 095f58a: quant_algo mxfp4 → GEMMs bfloat16, MoE w4a16_mxfp4, the KV
  // cache left BF16) is how they ran: the checkpoint's MXFP4 experts (replay_run refuses the
  // format for a model without MXFP4 experts).
  if (weights.rfind("nvfp4", 0) == 0 || weights.rfind("mxfp4", 0) == 0)
    r.options.weights = WeightFormat::mxfp4;
  r.options.kv = kv.rfind("fp8", 0) == 0 ? KvFormat::fp8 : KvFormat::bf16;
  r.options.engine = engine_of(text(row, "backend"));
  r.layout.tp = static_cast<int64_t>(number(row, "tp"));
  r.layout.pp = std::max<int64_t>(1, static_cast<int64_t>(number(row, "pp")));
  r.layout.ep = std::max<int64_t>(1, static_cast<int64_t>(number(row, "ep")));
  r.gpus = static_cast<int64_t>(number(row, "gpus"));
  r.workload.isl = static_cast<int64_t>(number(row, "isl"));
  r.workload.osl = static_cast<int64_t>(number(row, "osl"));
  // An open loop's rate: the online table's request_rate_qps, MLPerf's target_qps (LoadGen's
  // Server scenario, Poisson arrivals at the target rate).
  if (const double rate = number(row, "request_rate_qps") + number(row, "target_qps"); rate > 0) {
    r.workload.load = LoadKind::request_rate;
    r.workload.request_rate_per_s = rate;
  } else if (number(row, "concurrency") > 0) {
    r.workload.load = LoadKind::concurrency;
    r.workload.concurrency = number(row, "concurrency");
  }
  // A row that states how many requests its run made (`samples`: MLPerf's sample count, the
  // successful requests of GPUStack's `vllm bench serve` runs) replays that many.
  if (const double samples = number(row, "samples"); samples > 0)
    r.workload.requests = static_cast<int64_t>(samples);
  if (r.group == "trtllm-online") r.workload.requests = kOnlineTableRequests;
  if (r.group == "aiconfigurator" || r.group.rfind("aic ", 0) == 0) {
    r.options.max_step_tokens = aiconfigurator_step_tokens(r.options.engine, r.workload);
    if (r.workload.load == LoadKind::concurrency) {
      r.workload.requests = std::min<int64_t>(
          kMaxRequests, kAiconfiguratorRounds * requests_in_flight(r.workload, 1));
      r.workload.first_wave_measured = true;
    }
    r.layout.max_batch = aiconfigurator_max_batch(r.options.engine, r.workload);
    // The KV cache (never stated in the CSV) as AIConfigurator's generator launched it: its sdk
    // prices FP8 and FP8-block GEMMs with an FP8 cache on FP8-capable GPUs (sdk/task.py
    // _get_quant_mode at b642c1e, 2025-10-29: kvcache_quant_mode "fp8" on sm >= 89; at 095f58a
    // sdk/models/helpers.py: an fp8, fp8_block or nvfp4 checkpoint's cache is FP8) and passes
    // that mode to the engine (backends/trtllm.py _apply_kv_cache_mode at b642c1e; at 095f58a
    // module_bridge.py, rendered by backend_config_mapping.yaml as TensorRT-LLM's
    // kv_cache_config.dtype, vLLM's --kv-cache-dtype fp8 and SGLang's fp8_e4m3). Every GPU of
    // the rows meshplan replays is a Hopper.
    if (r.options.weights == WeightFormat::fp8) r.options.kv = KvFormat::fp8;
    aiconfigurator_sglang_launch(text(row, "measured_on"), r.workload, r.options);
  }
  if (r.group == "mlperf") {
    // NVIDIA's MLPerf harness (the data file's section): its engine's batch cap and token budget
    // (its sample count read above; Offline issues every one at once).
    r.layout.max_batch = static_cast<int64_t>(number(row, "gpu_batch_size"));
    r.options.max_step_tokens = static_cast<int64_t>(number(row, "max_num_tokens"));
    // harness_llm's capacity scheduler: --trtllm_batch_sched_policy defaults to max_util
    // (closed/NVIDIA/code/harness/harness_llm/main_llm.cc), which no config changes.
    r.options.max_utilization = true;
  }
  if (r.group == "trtllm-offline") {
    r.workload.requests = perf_overview_requests(r.workload.isl, r.workload.osl);
    r.options.memory_fraction = kPerfOverviewKvFraction;
  }
  r.measured[0] = number(row, "output_tok_s");
  r.measured[1] = (number(row, "ttft_mean_ms") + number(row, "ttft_ms")) * kMs;
  r.measured[2] =
      (number(row, "itl_mean_ms") + number(row, "tpot_ms") + number(row, "tpot_mean_ms")) * kMs;
  if (text(row, "mode") == "disaggregated")
    r.skip_reason = "disaggregated: the source leaves the prefill and decode worker counts blank";
  else if (r.model_file.empty())
    r.skip_reason = "no shipped model file for " + r.model_name;
  else if (r.cluster_file.empty())
    r.skip_reason = "no shipped cluster for this GPU";
  else if (r.layout.tp < 1 || r.gpus < 1)
    r.skip_reason = "tp or GPU count not stated";
  else if (r.workload.isl < 1 || r.workload.osl < 1)
    r.skip_reason = "isl/osl not stated (dataset lengths)";
  // AIConfigurator writes attention-DP as tp 1 × attention_dp N (TensorRT-LLM: tp_size N with
  // enable_attention_dp).
  if (number(row, "attention_dp") > 1) {
    r.layout.tp *= static_cast<int64_t>(number(row, "attention_dp"));
    r.layout.attention_dp = true;
  }
  if (r.skip_reason.empty())
    r.layout.replicas = std::max<int64_t>(1, r.gpus / (r.layout.tp * r.layout.pp));
  return r;
}

// The middle value (the mean of the two middle ones for an even count). REQUIRES: non-empty.
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void summarize(ServingValidation& v) {
  std::map<std::string, std::vector<double>> errors;
  std::vector<std::string> order;
  auto add = [&](const std::string& name, double e) {
    if (!errors.count(name)) order.push_back(name);
    errors[name].push_back(e);
  };
  for (int m = 0; m < 3; ++m)
    for (const ServingRunResult& r : v.results) {
      if (!r.error.empty() || r.run->measured[m] <= 0) continue;
      const double e = r.predicted[m] / r.run->measured[m] - 1;
      const std::string metric = to_string(static_cast<ServingMetric>(m));
      add(metric, e);
      add(r.run->group + " " + metric, e);
      errors[(r.moe ? "moe " : "dense ") + metric].push_back(e);
    }
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    return a.find(' ') == std::string::npos && b.find(' ') != std::string::npos;
  });
  // Then dense and MoE models' rows apart, metric by metric.
  for (int m = 0; m < 3; ++m)
    for (const std::string kind : {"dense ", "moe "})
      if (const std::string name = kind + to_string(static_cast<ServingMetric>(m));
          errors.count(name))
        order.push_back(name);
  for (const std::string& name : order) {
    ServingErrorSummary s{name, static_cast<int>(errors[name].size()), 0, 0, 0};
    for (double e : errors[name]) {
      s.mean_abs += std::fabs(e) / s.count;
      s.max_abs = std::max(s.max_abs, std::fabs(e));
    }
    s.median = median_of(errors[name]);
    v.summaries.push_back(s);
  }
}

int64_t round_up(double v, double step) { return static_cast<int64_t>(step * std::ceil(v / step)); }

}  // namespace

BenchLimits trtllm_bench_limits(double kv_requests, int64_t isl, int64_t osl, int64_t pp) {
  const double bs = std::min(kv_requests, 4096.0) / static_cast<double>(pp);
  const double tokens =
      std::min(bs * (1 + static_cast<double>(isl) / static_cast<double>(osl)), 32768.0);
  BenchLimits out;
  out.max_batch = bs < 256    ? std::max<int64_t>(64, round_up(bs, 32))
                  : bs < 1024 ? round_up(bs, 128)
                              : round_up(bs, 256);
  out.max_num_tokens = tokens < 4096   ? std::max<int64_t>(2048, round_up(tokens, 256))
                       : tokens < 8192 ? round_up(tokens, 512)
                                       : round_up(tokens, 1024);
  return out;
}

const char* to_string(ServingMetric m) {
  switch (m) {
    case ServingMetric::throughput:
      return "throughput";
    case ServingMetric::ttft:
      return "ttft";
    case ServingMetric::tpot:
      return "tpot";
  }
  return "?";
}

Result<std::vector<ServingRun>> load_serving_runs(const std::string& path) {
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return Diagnostic{{path, e.mark.line + 1, e.mark.column + 1, ""}, "", "", e.msg};
  }
  if (!doc["rows"] || !doc["rows"].IsSequence())
    return Diagnostic{{path, 0, 0, ""}, "rows", "", "must be a list of serving runs"};
  std::vector<ServingRun> runs;
  int ordinal = 0;
  for (const YAML::Node& row : doc["rows"]) {
    if (!row.IsMap())
      return Diagnostic{{path, row.Mark().line + 1, row.Mark().column + 1, ""},
                        "rows",
                        "",
                        "each row must be a map"};
    if (!row["id"]) ++ordinal;
    runs.push_back(run_of(row, ordinal));
  }
  return runs;
}

namespace {

// A run's model, cluster (its profile swapped where asked) and profile, loaded once for all the
// runs naming the same files.
struct RunSpecs {
  ModelSpec model;
  ClusterSpec cluster;
  CalibrationProfile profile;
};

using SpecsKey = std::pair<std::string, std::string>;  // model file, cluster file

Result<RunSpecs> load_run_specs(const ServingRun& run, const std::string& root,
                                ProfileSwaps& profile_swaps, const ProfileSearchPath& search) {
  Result<ModelSpec> model = load_model(root + "/" + run.model_file);
  if (!model) return model.errors();
  Result<ClusterSpec> cluster = load_cluster(root + "/" + run.cluster_file);
  if (!cluster) return cluster.errors();
  profile_swaps.apply(cluster.value());
  Result<CalibrationProfile> profile = resolve_profile(cluster.value(), "", search);
  if (!profile) return profile.errors();
  return RunSpecs{model.value(), cluster.value(), profile.value()};
}

// Replays one run on its specs: the predicted throughput, TTFT and TPOT, or why not.
ServingRunResult replay_run(const ServingRun& run, const RunSpecs& specs) {
  ServingProblem p{specs.model, specs.cluster, specs.profile, run.gpus, run.workload, run.options};
  ServingRunResult r;
  r.run = &run;
  r.moe = specs.model.moe.has_value();
  if (run.options.weights == WeightFormat::mxfp4 && !specs.model.mxfp4_experts) {
    r.error = "weights: MXFP4 replays only a model whose checkpoint holds its experts so";
    return r;
  }
  ServingLayout layout = run.layout;
  if (run.group == "trtllm-offline") {
    // trtllm-bench's build limits (serving_validation.h): its KV estimate per GPU, (HBM −
    // weights) × fraction. Read at NVIDIA/TensorRT-LLM 04cba882 (finetune_setting is the same
    // in the older copies of tuning.py we found; the v0.17 tag itself was not read).
    layout.max_batch = engine_preset(p.options.engine).max_batch;
    const ServingMemory m = serving_memory(p.model, p.cluster.gpu, layout, p.options,
                                           run.workload.isl, run.workload.osl);
    const double kv_requests =
        (m.capacity_bytes - m.weight_bytes) * kPerfOverviewKvFraction /
        (m.kv_bytes_per_token * static_cast<double>(run.workload.isl + run.workload.osl));
    const BenchLimits b =
        trtllm_bench_limits(kv_requests, run.workload.isl, run.workload.osl, layout.pp);
    layout.max_batch = b.max_batch;
    p.options.max_step_tokens = b.max_num_tokens;
    // Chunked context: the page runs its GH200 rows of the same table with gptManagerBenchmark
    // --enable_chunked_context --scheduler_policy guaranteed_no_evict, to compare with
    // trtllm-bench's, whose executor settings default to chunking (ExecutorSettingsConfig
    // chunking = True, tensorrt_llm/bench/dataclasses/configuration.py, read at 000a01de; the
    // --enable_chunked_context flag that later turned it off by default is not in the
    // workflow the page gives). Without it a 2,048-token prompt never fits beside a decode
    // in a 2,048-token step budget, and the 2048/2048 rows would stall.
    p.options.chunked_context = true;
  }
  const std::vector<Diagnostic> bad = check_serving_layout(p, layout);
  if (!bad.empty()) {
    r.error = bad.front().field + ": " + bad.front().rule;
    return r;
  }
  const std::optional<ServingEstimate> e = evaluate_serving(p, layout);
  if (!e) {
    r.error = "predicted not to fit";
    return r;
  }
  r.predicted[0] = e->output_tokens_per_s;
  r.predicted[1] = e->replay.ttft_s.mean;
  r.predicted[2] = e->replay.tpot_s.mean;
  return r;
}

}  // namespace

Result<ServingValidation> validate_serving(std::vector<ServingRun> runs, const std::string& root,
                                           ProfileSwaps profile_swaps, int threads,
                                           const ProfileSearchPath& search) {
  ServingValidation v;
  v.runs = std::move(runs);
  // The files first, in the runs' order (their errors too), each once; then the replays.
  std::map<SpecsKey, RunSpecs> specs;
  std::vector<const ServingRun*> replayed;
  for (const ServingRun& run : v.runs) {
    if (!run.skip_reason.empty()) continue;
    const SpecsKey key{run.model_file, run.cluster_file};
    if (specs.find(key) == specs.end()) {
      Result<RunSpecs> loaded = load_run_specs(run, root, profile_swaps, search);
      if (!loaded) return loaded.errors();
      specs.emplace(key, std::move(loaded.value()));
    }
    replayed.push_back(&run);
  }
  if (auto unused = profile_swaps.unused()) return *unused;
  v.results.resize(replayed.size());
  parallel_for(replayed.size(), threads, [&](size_t i) {
    const ServingRun& run = *replayed[i];
    v.results[i] = replay_run(run, specs.at(SpecsKey{run.model_file, run.cluster_file}));
  });
  summarize(v);
  return v;
}

std::string serving_validation_table(const ServingValidation& v) {
  std::string out =
      fmt::format("{:<10} {:<15} {:<18} {:<26} {:>22} {:>22} {:>22}\n", "run", "group", "model",
                  "layout / load", "output tok/s (err)", "TTFT ms (err)", "TPOT ms (err)");
  for (const ServingRunResult& r : v.results) {
    const ServingRun& run = *r.run;
    std::string cells[3];
    for (int m = 0; m < 3; ++m) {
      const double scale = m == 0 ? 1 : 1e3;
      if (run.measured[m] <= 0 || !r.error.empty()) {
        cells[m] = "-";
        continue;
      }
      cells[m] = fmt::format("{:.4g}/{:.4g} ({:+.0f}%)", r.predicted[m] * scale,
                             run.measured[m] * scale, 100 * (r.predicted[m] / run.measured[m] - 1));
    }
    const std::string load = run.workload.load == LoadKind::offline ? "offline"
                             : run.workload.load == LoadKind::concurrency
                                 ? fmt::format("c{:g}", run.workload.concurrency)
                                 : fmt::format("{:g}/s", run.workload.request_rate_per_s);
    out += fmt::format(
        "{:<10} {:<15} {:<18} {:<26} {:>22} {:>22} {:>22}{}\n", run.id, run.group,
        std::filesystem::path(run.model_file).stem().string(),
        fmt::format("tp{} pp{} x{}{} {} {}", run.layout.tp, run.layout.pp, run.layout.replicas,
                    run.layout.attention_dp ? " adp" : "", to_string(run.options.engine), load),
        cells[0], cells[1], cells[2], r.error.empty() ? "" : "  " + r.error);
  }
  // The rows it could not replay, with the reason; no heading when it replayed every row.
  std::string skipped;
  for (const ServingRun& run : v.runs)
    if (!run.skip_reason.empty()) skipped += fmt::format("  {}: {}\n", run.id, run.skip_reason);
  if (!skipped.empty()) out += "\nskipped:\n" + skipped;
  out += "\nsummary (predicted / measured − 1):\n";
  for (const ServingErrorSummary& s : v.summaries)
    out += fmt::format("  {:<28} n={:<3} mean |error| {:5.1f}%  median {:+6.1f}%  max {:5.1f}%\n",
                       s.name, s.count, 100 * s.mean_abs, 100 * s.median, 100 * s.max_abs);
  return out;
}

std::string serving_validation_json(const ServingValidation& v) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ServingRunResult& r : v.results) {
    nlohmann::ordered_json row;
    row["id"] = r.run->id;
    row["group"] = r.run->group;
    row["model"] = r.run->model_file;
    row["layout"] = layout_text(r.run->layout);
    row["engine"] = to_string(r.run->options.engine);
    if (!r.error.empty()) row["error"] = r.error;
    for (int m = 0; m < 3; ++m) {
      if (r.run->measured[m] <= 0 || !r.error.empty()) continue;
      row[to_string(static_cast<ServingMetric>(m))] = {
          {"predicted", r.predicted[m]},
          {"measured", r.run->measured[m]},
          {"relative_error", r.predicted[m] / r.run->measured[m] - 1}};
    }
    rows.push_back(row);
  }
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  for (const ServingRun& run : v.runs)
    if (!run.skip_reason.empty()) skipped.push_back({{"id", run.id}, {"reason", run.skip_reason}});
  nlohmann::ordered_json summaries = nlohmann::ordered_json::array();
  for (const ServingErrorSummary& s : v.summaries)
    summaries.push_back({{"name", s.name},
                         {"count", s.count},
                         {"mean_abs", s.mean_abs},
                         {"median", s.median},
                         {"max_abs", s.max_abs}});
  nlohmann::ordered_json j;
  j["rows"] = rows;
  j["skipped"] = skipped;
  j["summaries"] = summaries;
  return j.dump(2) + "\n";
}

}  // namespace meshplan::serving
