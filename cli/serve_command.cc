// meshplan serve: a serving plan (layout, KV cache, TTFT/TPOT, goodput) for one layout, or the
// best layouts from a search when --layout is absent.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/thread_count.h"
#include "core/model_limits.h"
#include "reports/serving_report.h"
#include "reports/step_ops_render.h"
#include "serving/estimate_memo.h"
#include "serving/replay_trace.h"
#include "serving/request_replay.h"
#include "serving/request_trace.h"
#include "serving/serving_layout_parse.h"
#include "serving/serving_render.h"
#include "serving/serving_search.h"
#include "serving/slower_steps.h"

namespace meshplan::cli {
namespace {

using namespace meshplan::serving;

struct ServeOptions {
  InputOptions in;
  int64_t isl = 0, osl = 0, requests = 0, prefix_tokens = 0;
  double isl_stdev = 0, osl_stdev = 0;
  std::string requests_file;
  double trace_speedup = 1;
  bool chunked_context = false;
  std::string capacity_policy;  // TensorRT-LLM's capacity scheduler policy (empty: its default)
  bool offline = false;
  double concurrency = 0, request_rate = 0;
  uint64_t seed = 1;
  std::string weights = "bf16", kv = "bf16", engine = "vllm";
  double slo_ttft_s = 0, slo_tpot_s = 0, memory_fraction = 0;
  int top = 10;
  int threads = 0;  // 0: hardware concurrency
  bool load_curve = false, disaggregated = false, first_wave = false, mixed_chunk = false,
       mixed_chunk_searched = false, ops = false;
  int64_t max_prefill_tokens = 0, max_step_tokens = 0;
  std::optional<double> front_end_s;
  // --slowdown; unset: --slo-margin's where given, else serving::kDefaultSlowdown.
  std::optional<double> slowdown;
  double slo_margin = 0;     // --slo-margin
  double gpu_hour_cost = 0;  // --gpu-hour-cost
  std::string trace_path;
  std::string out_dir;  // --out: serve.md and its charts
};

template <typename E>
E choice(const std::string& text, std::initializer_list<std::pair<const char*, E>> table) {
  for (const auto& [name, value] : table)
    if (text == name) return value;
  return table.begin()->second;  // CLI11 checked membership
}

ServingOptions serving_options(const ServeOptions& o) {
  ServingOptions s;
  s.weights_auto = o.weights == "auto";
  s.weights = choice<WeightFormat>(o.weights, {{"bf16", WeightFormat::bf16},
                                               {"fp8", WeightFormat::fp8},
                                               {"int4", WeightFormat::int4},
                                               {"mxfp4", WeightFormat::mxfp4}});
  s.kv = choice<KvFormat>(o.kv, {{"bf16", KvFormat::bf16}, {"fp8", KvFormat::fp8}});
  s.engine = choice<Engine>(
      o.engine, {{"vllm", Engine::vllm}, {"sglang", Engine::sglang}, {"trtllm", Engine::trtllm}});
  s.slo = {o.slo_ttft_s, o.slo_tpot_s, o.slo_margin};
  s.memory_fraction = o.memory_fraction;
  s.search_disaggregated = o.disaggregated;
  s.mixed_chunk = o.mixed_chunk;
  s.mixed_chunk_searched = o.mixed_chunk_searched;
  s.max_prefill_tokens = o.max_prefill_tokens;
  s.max_step_tokens = o.max_step_tokens;
  s.chunked_context = o.chunked_context;
  s.max_utilization = o.capacity_policy == "MAX_UTILIZATION";
  s.front_end_s = o.front_end_s;
  return s;
}

// The trace's mean lengths (rounded, at least 1) stand for isl and osl where one number is
// needed (memory, tables); its arrivals are the load unless a load flag replaces them.
void use_trace(Workload& w, const RequestTrace& trace, const std::string& file, bool load_given,
               double speedup) {
  double isl = 0, osl = 0;
  for (const TracedRequest& r : trace.requests) {
    isl += static_cast<double>(r.isl);
    osl += static_cast<double>(r.osl);
  }
  const double n = static_cast<double>(trace.requests.size());
  w.isl = std::max<int64_t>(1, std::llround(isl / n));
  w.osl = std::max<int64_t>(1, std::llround(osl / n));
  auto requests = std::make_shared<std::vector<TracedRequest>>(trace.requests);
  for (TracedRequest& r : *requests) r.arrival_s /= speedup;
  w.trace = std::move(requests);
  w.trace_file = file;
  w.trace_speedup = speedup;
  if (trace.timed && !load_given) w.load = LoadKind::trace;
}

Workload workload(const ServeOptions& o) {
  Workload w;
  w.isl = o.isl;
  w.osl = o.osl;
  w.isl_stdev = o.isl_stdev;
  w.osl_stdev = o.osl_stdev;
  w.prefix_tokens = o.prefix_tokens;
  w.requests = o.requests;
  w.seed = o.seed;
  w.first_wave_measured = o.first_wave;
  if (o.concurrency > 0) {
    w.load = LoadKind::concurrency;
    w.concurrency = o.concurrency;
  } else if (o.request_rate > 0) {
    w.load = LoadKind::request_rate;
    w.request_rate_per_s = o.request_rate;
  }
  return w;
}

// Why a --layout evaluates to nothing: the cache holds no request (under a length spread, not
// the longest one the replay draws).
std::string no_room_rule(const ServingProblem& p, const ServingLayout& layout) {
  const Workload& w = p.workload;
  if (!w.lengths_vary()) {
    const NoFit f = layout_shortfall(p, layout);
    return fmt::format("leaves no KV-cache room for one request ({} tokens) at {} weights: {}",
                       f.memory.tokens_per_request + f.memory.prefix.shared_tokens,
                       to_string(f.weights), memory_short_text(p, f));
  }
  const int64_t longest = longest_replayed_sequence(w);
  return fmt::format(
      "leaves no KV-cache room for the longest request {} (isl + osl = {} tokens): the cache "
      "left beside the weights and workspace is smaller",
      w.trace ? "of the trace" : "the replay draws", longest);
}

// Replays the best layout again, recording its steps, and writes them as a Perfetto trace.
int write_trace(const ServingProblem& p, const ServingEstimate& best, const std::string& path) {
  if (best.layout.disaggregated())
    return print_errors({flag_error("--trace", path,
                                    "the best layout is disaggregated; traces cover one "
                                    "aggregated replica's steps only")});
  ServingProblem recorded = as_evaluated(p, best);
  recorded.record_steps = true;
  const std::optional<ServingEstimate> e = evaluate_serving(recorded, best.layout);
  Result<std::string> json = replay_trace_json(e->replay);
  if (!json) return print_errors(json.errors());
  std::ofstream out(path, std::ios::binary);
  out << json.value();
  if (!out)
    return print_errors({Diagnostic{{path, 0, 0, ""}, "", "", "cannot write the trace file"}});
  return 0;
}

int run_serve(const ServeOptions& o) {
  if (o.ops && !o.out_dir.empty())
    return print_errors({flag_error("--ops", "",
                                    "prints the decode step op by op beside the table, JSON or "
                                    "Markdown on standard output; --out writes report files "
                                    "instead: drop one")});
  if (!o.out_dir.empty() && o.in.format == "json")
    return print_errors({flag_error(
        "--out", o.out_dir, "writes serve.md and its SVG charts; use it with --format md")});
  std::optional<Inputs> in = load_inputs(o.in, /*with_layout=*/false);
  if (!in) return kExitBadInput;
  ServingProblem p{in->model, in->cluster, in->profile, in->gpus, workload(o), serving_options(o)};
  p.threads = thread_count(o.threads);
  p.step_ops = o.ops;
  if (!o.requests_file.empty()) {
    const Result<RequestTrace> trace = read_request_trace(o.requests_file);
    if (!trace) return print_errors(trace.errors());
    const bool load_given = o.offline || o.concurrency > 0 || o.request_rate > 0;
    if (o.trace_speedup != 1 && (load_given || !trace.value().timed))
      return print_errors({flag_error(
          "--trace-speedup", fmt::format("{:g}", o.trace_speedup),
          load_given ? "scales the trace's arrival times, which --offline, --concurrency or "
                       "--request-rate replaces; drop one"
                     : "scales the trace's arrival times, and " + o.requests_file +
                           " has none (no arrival_s or TIMESTAMP column)")});
    use_trace(p.workload, trace.value(), o.requests_file, load_given, o.trace_speedup);
  } else {
    for (const auto& [flag, value] : {std::pair{"--isl", o.isl}, std::pair{"--osl", o.osl}})
      if (value == 0)
        return print_errors({flag_error(flag, "",
                                        "is required for 'meshplan serve' unless "
                                        "--requests-file gives each request's lengths")});
  }
  if (std::vector<Diagnostic> errors = check_context(p); !errors.empty())
    return print_errors(errors);
  if (std::vector<Diagnostic> errors = check_workload(p.workload); !errors.empty())
    return print_errors(errors);
  if (std::vector<Diagnostic> errors = check_engine_options(p.options); !errors.empty())
    return print_errors(errors);
  if (std::vector<Diagnostic> errors = check_weights(p); !errors.empty())
    return print_errors(errors);
  if (std::vector<Diagnostic> errors = check_slo(p); !errors.empty()) return print_errors(errors);
  if (std::vector<Diagnostic> errors = check_step_tokens(p); !errors.empty())
    return print_errors(errors);
  ServeReport report{&p, {}, o.in.layout_text.empty(), o.top, {}, {}, {}, o.gpu_hour_cost, {}};
  if (report.searched) {
    if (std::vector<Diagnostic> errors = check_prefix(p, nullptr); !errors.empty())
      return print_errors(errors);
    if (std::vector<Diagnostic> errors = check_search_size(p); !errors.empty())
      return print_errors(errors);
    // Its layouts' evaluations kept for the larger searches "how many GPUs" may run (this
    // problem's alone: the memo knows nothing of the workload).
    ServingProblem searched = p;
    if (may_want_more_gpus(p)) searched.estimate_memo = std::make_shared<EstimateMemo>();
    report.result = search_serving(searched);
    if (wants_more_gpus(searched, report.result))
      report.more_gpus = search_more_gpus(searched, report.result);
    if (report.result.ranked.empty()) report.no_fit = explain_no_fit(p);
  } else {
    Result<ServingLayout> layout = parse_serving_layout(o.in.layout_text);
    if (!layout) return print_errors(layout.errors());
    std::vector<Diagnostic> errors = check_serving_layout(p, layout.value());
    if (errors.empty()) errors = check_prefix(p, &layout.value());
    if (!errors.empty()) return print_errors(errors);
    for (const ServingProblem& variant : problem_variants(p)) {
      std::optional<ServingEstimate> e = evaluate_serving(variant, layout.value());
      if (e) report.result.ranked.push_back(std::move(*e));
      ++report.result.evaluated;
    }
    if (report.result.ranked.empty())
      return print_errors(
          {flag_error("--layout", o.in.layout_text, no_room_rule(p, layout.value()))});
    rank_estimates(report.result);
  }
  if (!o.trace_path.empty() && !report.result.ranked.empty()) {
    if (int rc = write_trace(p, report.result.ranked.front(), o.trace_path); rc != 0) return rc;
  }
  // Under an open loop, how near each layout shown runs to what it sustains (its utilization):
  // its saturation rate, where its own overload check did not ask for it already.
  const size_t shown = std::min(report.result.ranked.size(), static_cast<size_t>(o.top));
  for (size_t i = 0; i < shown; ++i) {
    ServingEstimate& e = report.result.ranked[i];
    if (e.offered_requests_per_s > 0 && e.saturation_requests_per_s <= 0)
      e.saturation_requests_per_s = saturation_requests_per_s(as_evaluated(p, e), e.layout);
  }
  const double slowdown = o.slowdown.value_or(o.slo_margin > 0 ? o.slo_margin : kDefaultSlowdown);
  if (slowdown > 0 && slowdown_matters(p) && !report.result.ranked.empty())
    report.slower = slower_steps(p, report.result.ranked.front(), slowdown);
  // The report's load charts need the curve: --out replays it as --load-curve does.
  if ((o.load_curve || !o.out_dir.empty()) && !report.result.ranked.empty())
    report.load = load_curve(p, report.result.ranked.front());
  if (!o.out_dir.empty()) {
    const std::vector<ReportFile> files = render_serving_report(report);
    if (int rc = write_report_files(files, o.out_dir); rc != 0) return rc;
    for (const ReportFile& f : files)
      std::cout << (std::filesystem::path(o.out_dir) / f.name).string() << "\n";
    return 0;
  }
  // The best layout's decode step op by op, kept where --ops asked (ServingProblem::step_ops).
  const StepOps* ops = report.result.ranked.empty() || !report.result.ranked.front().decode_ops
                           ? nullptr
                           : &*report.result.ranked.front().decode_ops;
  if (o.in.format == "json") {
    nlohmann::ordered_json j = serve_json(report);
    if (ops) j["best"]["step_time"]["decode_ops"] = step_ops_json(*ops);
    std::cout << j.dump(2) << "\n";
  } else if (o.in.format == "md") {
    std::cout << serve_markdown(report);
    if (ops)
      std::cout << "\nThe best layout's decode step op by op:\n\n```\n"
                << step_ops_table(*ops) << "```\n";
  } else {
    std::cout << serve_table(report);
    if (ops)
      std::cout << "\nthe best layout's decode step (the line above) op by op:\n"
                << step_ops_table(*ops);
  }
  return 0;
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand(
      "serve", "serving plan: layout, KV cache, TTFT/TPOT and goodput (searches without --layout)");
  sub->add_option("--model", o->in.model_path, "model YAML (models/*.yaml) or config.json")
      ->required();
  sub->add_option("--cluster", o->in.cluster_path, "cluster YAML (topologies/*.yaml)")->required();
  sub->add_option("--gpus", o->in.gpus, "use this many of the cluster's GPUs (default: all)")
      ->check(integer_range(1, kMaxClusterGpus));
  sub->add_option("--profile", o->in.profile_path,
                  "calibration profile (default: the cluster's profile:)");
  add_profile_dir_option(sub, o->in);
  sub->add_option("--layout", o->in.layout_text,
                  "tp=…,pp=…,ep=…,replicas=…,max_batch=… (default: search)");
  CLI::Option* requests_file = sub->add_option(
      "--requests-file", o->requests_file,
      "a request trace, CSV: columns isl (or ContextTokens), osl (or GeneratedTokens) and "
      "optionally arrival_s (or an Azure TIMESTAMP); or JSON Lines in the Mooncake form "
      "(input_length, output_length, timestamp in ms); its arrivals are the load unless "
      "--offline, --concurrency or --request-rate is given");
  sub->add_option("--trace-speedup", o->trace_speedup,
                  "replay the trace's arrivals this many times faster (2: twice its request rate)")
      ->check(finite_number(1e-6, 1e6))
      ->needs(requests_file);
  sub->add_option("--isl", o->isl,
                  "input (prompt) tokens per request (required without --requests-file)")
      ->check(integer_range(1, kMaxSeqLen))
      ->excludes(requests_file);
  sub->add_option("--osl", o->osl,
                  "output (answer) tokens per request (required without --requests-file)")
      ->check(integer_range(1, kMaxSeqLen))
      ->excludes(requests_file);
  sub->add_option(
         "--isl-stdev", o->isl_stdev,
         "spread of the prompt lengths around --isl: each request's drawn as TensorRT-LLM's "
         "prepare_dataset.py token-norm-dist draws it, max(1, ceil(normal(isl, stdev))) "
         "(default 0: every prompt --isl tokens)")
      ->check(finite_number(0, static_cast<double>(kMaxSeqLen)))
      ->excludes(requests_file);
  sub->add_option("--osl-stdev", o->osl_stdev,
                  "spread of the answer lengths around --osl, drawn likewise (default 0)")
      ->check(finite_number(0, static_cast<double>(kMaxSeqLen)))
      ->excludes(requests_file);
  sub->add_option("--prefix-tokens", o->prefix_tokens,
                  "tokens every prompt begins with (a shared system prompt), below --isl: the "
                  "engine's prefix cache holds them once and each request computes the rest")
      ->check(integer_range(0, kMaxSeqLen));
  CLI::Option* offline =
      sub->add_flag("--offline", o->offline, "all requests at once (the default load)");
  CLI::Option* concurrency =
      sub->add_option("--concurrency", o->concurrency, "closed loop: requests in flight")
          ->check(finite_number(1, 1e7));
  CLI::Option* rate =
      sub->add_option("--request-rate", o->request_rate, "open loop: Poisson requests per second")
          ->check(finite_number(1e-6, 1e9));
  offline->excludes(concurrency)->excludes(rate);
  concurrency->excludes(rate);
  sub->add_option("--requests", o->requests,
                  "requests to replay (default: 1000, or 10 × concurrency)")
      ->check(integer_range(1, kMaxRequests));
  sub->add_flag("--measure-first-wave", o->first_wave,
                "closed loop: count the first wave (every request arriving at once on an idle "
                "engine) in TTFT/TPOT, as AIPerf measures after draining its warm-up")
      ->needs(concurrency);
  sub->add_option("--seed", o->seed,
                  "seed of the Poisson arrivals and of drawn lengths (--isl-stdev, --osl-stdev)");
  sub->add_option(
         "--weights", o->weights,
         "weight format (mxfp4: a MoE model's routed experts in MXFP4, the rest BF16, as "
         "gpt-oss ships; auto: search bf16, on GPUs with FP8 tensor cores fp8, and mxfp4 where "
         "the model's checkpoint holds its experts so)")
      ->check(CLI::IsMember({"bf16", "fp8", "int4", "mxfp4", "auto"}));
  sub->add_option("--kv", o->kv, "KV-cache format")->check(CLI::IsMember({"bf16", "fp8"}));
  sub->add_option("--engine", o->engine, "inference engine")
      ->check(CLI::IsMember({"vllm", "sglang", "trtllm"}));
  sub->add_option("--slo-ttft", o->slo_ttft_s, "time-to-first-token objective, seconds")
      ->check(finite_number(0, 1e6));
  sub->add_option("--slo-tpot", o->slo_tpot_s, "time-per-output-token objective, seconds")
      ->check(finite_number(0, 1e6));
  sub->add_option("--memory-fraction", o->memory_fraction,
                  "the engine's memory fraction (vLLM --gpu-memory-utilization, SGLang "
                  "--mem-fraction-static, TRT-LLM free_gpu_memory_fraction; default: the "
                  "engine's)")
      ->check(finite_number(0.01, 1));
  sub->add_option(
         "--max-step-tokens", o->max_step_tokens,
         "tokens one engine step may carry, decodes and prompt chunks (vLLM "
         "--max-num-batched-tokens, SGLang --chunked-prefill-size, TRT-LLM max_num_tokens; "
         "default: the engine's, 8192); it also sizes the activation workspace")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  sub->add_option("--front-end-latency", o->front_end_s,
                  "seconds of each request's TTFT spent in the serving front end, outside the "
                  "engine (tokenizer, routing, detokenizer, streaming; default: the engine's, "
                  "trtllm 0.008, vllm and sglang 0: not priced)")
      ->check(finite_number(0, 1000));
  sub->add_flag(
      "--enable-chunked-context", o->chunked_context,
      "TensorRT-LLM: split prompts across steps beside the decodes (enable_chunked_prefill; "
      "its default runs each prompt whole)");
  sub->add_option("--capacity-scheduler-policy", o->capacity_policy,
                  "TensorRT-LLM: MAX_UTILIZATION admits requests as the cache holds their tokens "
                  "and pauses the latest when it runs out; GUARANTEED_NO_EVICT (its default) "
                  "admits one only while its whole prompt and answer fit")
      ->check(CLI::IsMember({"GUARANTEED_NO_EVICT", "MAX_UTILIZATION"}));
  sub->add_flag("--enable-mixed-chunk", o->mixed_chunk,
                "SGLang: run the decodes inside prefill steps (its default runs a prefill batch "
                "alone, the decodes waiting)");
  sub->add_flag("--search-mixed-chunk", o->mixed_chunk_searched,
                "SGLang: evaluate each layout with and without --enable-mixed-chunk and rank both")
      ->excludes("--enable-mixed-chunk");
  sub->add_option("--max-prefill-tokens", o->max_prefill_tokens,
                  "SGLang: prompt tokens one prefill batch takes past its first prompt (default "
                  "16384)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  sub->add_flag("--disaggregated", o->disaggregated,
                "the search also splits the GPUs into a prefill pool and a decode pool (KV cache "
                "moved between them), every prefill worker count and TP with every decode layout");
  sub->add_flag("--ops", o->ops,
                "also price the best layout's decode step op by op: each GEMM, the HBM kernels, "
                "communication, attention, the LM head and the host's work (JSON: "
                "best.step_time.decode_ops)");
  sub->add_flag("--load-curve", o->load_curve,
                "also replay the best layout at concurrency 1, 2, 4, … up to what it admits (under "
                "--request-rate: at 12.5-90% of its saturation rate and the rate asked), and "
                "offline (its saturation throughput)");
  sub->add_option("--slo-margin", o->slo_margin,
                  "the SLO must also hold with every engine step and KV transfer this fraction "
                  "longer than predicted (0.1: about the mean |error| of predicted throughput over "
                  "the development set), so that the plan keeps it if the engine runs that much "
                  "slower (default 0: as predicted)")
      ->check(finite_number(0, 10));
  sub->add_option("--slowdown", o->slowdown,
                  "also replay the best layout with every engine step and KV transfer this "
                  "fraction longer than predicted, under a request rate, a trace's arrivals or an "
                  "SLO (default: --slo-margin's, else 0.1, about the mean |error| of predicted "
                  "throughput over the development set; 0: not replayed)")
      ->check(finite_number(0, 10));
  sub->add_option("--gpu-hour-cost", o->gpu_hour_cost,
                  "price of one GPU-hour in USD: each layout's cost per million output tokens "
                  "(its GPUs for the hours its output takes)")
      ->check(finite_number(1e-6, 1e6));
  sub->add_option("--trace", o->trace_path,
                  "write the best layout's replay (engine steps of replica 0, first 100,000) as "
                  "Chrome/Perfetto trace JSON");
  sub->add_option("--top", o->top, "layouts to show")->check(CLI::Range(1, 10000));
  add_threads_option(sub, o->threads,
                     "threads the search replays layouts on (default: all cores); output is the "
                     "same for any count");
  add_format_option(sub, o->in.format, {"table", "json", "md"});
  sub->add_option("--out", o->out_dir,
                  "write serve.md and its SVG charts (Pareto front; TTFT, TPOT "
                  "and throughput of the best layout against load) to this folder");
  sub->callback([o, &exit_code] { exit_code = run_serve(*o); });
  return sub;
}

}  // namespace meshplan::cli
