#include "serving/serving_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/layout_rules.h"
#include "serving/disaggregated_replay.h"
#include "serving/engine_preset.h"
#include "serving/fp8_block_split.h"
#include "serving/kv_cache.h"
#include "serving/request_lengths.h"
#include "serving/slower_steps.h"

namespace meshplan::serving {
namespace {

constexpr double kSloQuantile = 0.99;  // "meets the SLO": 99% of requests within it

Diagnostic layout_error(const std::string& field, int64_t value, const std::string& rule) {
  return Diagnostic{{"--layout", 0, 0, ""}, field, std::to_string(value), rule};
}

bool request_meets(const RequestTimes& r, const Slo& slo) {
  if (slo.ttft_s > 0 && r.first_token_s - r.arrival_s > slo.ttft_s) return false;
  if (slo.tpot_s > 0 && r.output_tokens > 1 && r.tpot_s() > slo.tpot_s) return false;
  return true;
}

// How far `r` is from `slo`: the larger of its TTFT and TPOT over their objectives (those set),
// so that it meets every objective scaled by k exactly where k is at least this (0 without one).
double slo_ratio(const RequestTimes& r, const Slo& slo) {
  double ratio = 0;
  if (slo.ttft_s > 0) ratio = std::max(ratio, (r.first_token_s - r.arrival_s) / slo.ttft_s);
  if (slo.tpot_s > 0 && r.output_tokens > 1) ratio = std::max(ratio, r.tpot_s() / slo.tpot_s);
  return ratio;
}

// The least factor by which every objective of `slo` would have to be scaled for `requests`
// to meet it as meets_slo counts (a share of at least kSloQuantile): the ratio (slo_ratio) of
// the m-th closest request, m the fewest of n that make that share. REQUIRES: not empty.
double slo_scale(std::vector<double> ratios) {
  const auto n = static_cast<double>(ratios.size());
  size_t m = std::max<size_t>(1, static_cast<size_t>(std::floor(kSloQuantile * n)));
  while (static_cast<double>(m) / n < kSloQuantile) ++m;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(m - 1),
                   ratios.end());
  return ratios[m - 1];
}

// The cache the longest request of `w`'s replay takes (whole, or on demand at its last token).
int64_t longest_request_cache(const Workload& w, const ReplayLimits& limits) {
  const int64_t longest = longest_replayed_sequence(w);
  return limits.admission_tokens(longest, longest);
}

}  // namespace

KvTransferCost kv_transfer_cost(const ServingProblem& p, const ServingLayout& layout,
                                const ServingMemory& decode_memory) {
  const std::vector<NetworkLevel>& levels = p.cluster.network;
  if (levels.empty()) return {};
  // Within one node the KV moves over NVLink; otherwise over the outermost fabric.
  const NetworkLevel& link =
      layout.gpus() <= p.cluster.gpus_per_node ? levels.front() : levels.back();
  return {link.latency_s,
          decode_memory.kv_bytes_per_token / link.effective_bandwidth_bytes_per_s()};
}

double kv_transfer_s(const ServingProblem& p, const ServingLayout& layout,
                     const ServingMemory& decode_memory) {
  const KvTransferCost c = kv_transfer_cost(p, layout, decode_memory);
  return c.latency_s + c.s_per_token * static_cast<double>(p.workload.isl);
}

std::string split_refusal(const ServingProblem& p, const ServingLayout& worker) {
  const ModelSpec& m = p.model;
  Layout dense;  // the attention and dense layers' split, as training's rules take it
  dense.tp = worker.dense_tp();
  if (!tp_splits_heads(dense, m))
    return fmt::format(
        "must divide the attention heads ({}): tensor parallelism gives every GPU whole heads",
        m.heads);
  if (!tp_splits_kv_heads(dense, m))
    return fmt::format(
        "must divide the KV heads ({}) or be a multiple of them (each KV head then "
        "on tp / kv_heads GPUs)",
        m.kv_heads);
  if (!tp_splits_ffn(dense, m)) return fmt::format("must divide the FFN width ({})", m.ffn_hidden);
  if (m.moe && m.moe->expert_ffn_hidden % (worker.tp / worker.ep) != 0)
    return fmt::format("tp / ep ({}) must divide each expert's FFN width ({})",
                       worker.tp / worker.ep, m.moe->expert_ffn_hidden);
  const std::string why = fp8_block_refusal(m, p.options.weights, p.options.engine, worker);
  return why.empty() ? "" : fmt::format("{} {}", to_string(p.options.engine), why);
}

std::vector<Diagnostic> check_serving_layout(const ServingProblem& p, const ServingLayout& l) {
  std::vector<Diagnostic> out;
  const struct {
    const char* name;
    int64_t value;
  } sizes[] = {{"tp", l.tp}, {"pp", l.pp}, {"ep", l.ep}, {"replicas", l.replicas}};
  for (const auto& s : sizes)
    if (s.value < 1) out.push_back(layout_error(s.name, s.value, "must be a positive integer"));
  if (!out.empty()) return out;
  if (l.tp > p.cluster.gpus_per_node)
    out.push_back(layout_error("tp", l.tp,
                               "must be at most the GPUs of one node (" +
                                   std::to_string(p.cluster.gpus_per_node) +
                                   "): tensor parallelism all-reduces every layer"));
  if (l.pp > p.model.layers)
    out.push_back(layout_error(
        "pp", l.pp, "must be at most the model's layers (" + std::to_string(p.model.layers) + ")"));
  if (l.ep > 1 && !p.model.moe)
    out.push_back(layout_error("ep", l.ep, "must be 1: the model has no experts"));
  else if (l.ep > 1 && (l.tp % l.ep != 0 || p.model.moe->experts % l.ep != 0))
    out.push_back(layout_error("ep", l.ep,
                               "must divide tp (" + std::to_string(l.tp) +
                                   ") and the expert count (" +
                                   std::to_string(p.model.moe->experts) + ")"));
  else if (!engine_splits_experts(p.options.engine, l.tp, l.ep))
    out.push_back(layout_error(
        "ep", l.ep,
        fmt::format("must be 1 or tp ({}) under {}: its --enable-expert-parallel spreads the "
                    "experts over every GPU of the engine",
                    l.tp, to_string(p.options.engine))));
  else if (const std::string why = split_refusal(p, l); !why.empty())
    out.push_back(layout_error("tp", l.tp, why));
  if (l.max_batch < 0)
    out.push_back(layout_error("max_batch", l.max_batch, "must be 0 (engine default) or more"));
  else if (batch_within_step_tokens(p.options.engine) && l.max_batch > step_tokens(p.options))
    out.push_back(layout_error(
        "max_batch", l.max_batch,
        fmt::format("must be at most the step's tokens ({}): {} refuses a --max-num-seqs above "
                    "--max-num-batched-tokens",
                    step_tokens(p.options), to_string(p.options.engine))));
  if (l.disaggregated()) {
    const ServingLayout w = l.prefill_worker();
    if (w.tp < 1 || w.tp > p.cluster.gpus_per_node)
      out.push_back(layout_error("prefill_tp", l.prefill_tp,
                                 "must be between 1 and the GPUs of one node (" +
                                     std::to_string(p.cluster.gpus_per_node) + ")"));
    else if (w.ep > 1 && (w.tp % w.ep != 0 || p.model.moe->experts % w.ep != 0))
      out.push_back(
          layout_error("prefill_tp", l.prefill_tp,
                       "must be a multiple of min(ep, prefill_tp) = " + std::to_string(w.ep) +
                           ", which splits a prefill worker's experts"));
    else if (!engine_splits_experts(p.options.engine, w.tp, w.ep))
      out.push_back(layout_error(
          "prefill_tp", l.prefill_tp,
          fmt::format("must be at most ep ({}) under {}: its expert parallelism spreads the "
                      "experts over every GPU of a prefill worker",
                      l.ep, to_string(p.options.engine))));
    else if (const std::string why = split_refusal(p, w); !why.empty())
      out.push_back(layout_error("prefill_tp", l.prefill_tp, why));
  }
  // In doubles: three fields of up to 10^7 each overflow int64 (ServingLayout::gpus()).
  const double gpus =
      static_cast<double>(l.tp) * static_cast<double>(l.pp) * static_cast<double>(l.replicas) +
      static_cast<double>(l.prefill_tp) * static_cast<double>(l.prefill_replicas);
  if (gpus > static_cast<double>(p.gpus))
    out.push_back(layout_error(
        "replicas", l.replicas,
        fmt::format("{}{:.0f} exceeds the {} GPUs available",
                    l.disaggregated() ? "tp × pp × replicas + prefill_tp × prefill_replicas = "
                                      : "tp × pp × replicas = ",
                    gpus, p.gpus)));
  return out;
}

std::vector<Diagnostic> check_workload(const Workload& w) {
  double tokens = 0;
  for (const RequestLength& r : request_lengths(w, replay_request_count(w)))
    tokens += static_cast<double>(r.isl) + static_cast<double>(r.osl);
  if (tokens <= kMaxReplayTokens) return {};
  return {flag_error("--requests", std::to_string(replay_request_count(w)),
                     "requests × (isl + osl) = " + std::to_string(static_cast<int64_t>(tokens)) +
                         " tokens exceeds the 100000000 one replay handles; ask for fewer "
                         "requests (a closed loop replays 10 × the concurrency)")};
}

std::vector<Diagnostic> check_context(const ServingProblem& p) {
  const int64_t window = p.model.context_tokens;
  if (window == 0) return {};
  const Workload& w = p.workload;
  const std::vector<RequestLength> lengths = request_lengths(w, replay_request_count(w));
  const int64_t longest = longest_sequence(lengths);
  if (longest <= window) return {};
  const std::string refused = fmt::format(
      "{}'s context window is {} tokens (its context_tokens), and vLLM, SGLang and TensorRT-LLM "
      "refuse a longer request",
      p.model.name, window);
  if (!w.lengths_vary())
    return {flag_error(
        "--isl", std::to_string(w.isl),
        fmt::format("with --osl {} a request holds {} tokens; {}", w.osl, longest, refused))};
  const auto over = std::count_if(lengths.begin(), lengths.end(),
                                  [&](const RequestLength& r) { return r.sequence() > window; });
  const std::string count =
      fmt::format("{}: {} of the {} requests replayed are longer (the longest holds {} tokens)",
                  refused, over, lengths.size(), longest);
  if (w.trace) return {flag_error("--requests-file", w.trace_file, count)};
  return {flag_error(w.isl_stdev > 0 ? "--isl-stdev" : "--osl-stdev",
                     fmt::format("{:g}", w.isl_stdev > 0 ? w.isl_stdev : w.osl_stdev),
                     count + "; narrow the spread or shorten --isl/--osl")};
}

std::vector<Diagnostic> check_slo(const ServingProblem& p) {
  if (p.options.slo.tpot_s <= 0) return {};
  for (const RequestLength& r : request_lengths(p.workload, replay_request_count(p.workload)))
    if (r.osl > 1) return {};
  return {flag_error("--slo-tpot", fmt::format("{:g}", p.options.slo.tpot_s),
                     "every answer is one token (osl 1): no time per output token to bound")};
}

std::vector<Diagnostic> check_weights(const ServingProblem& p) {
  if (p.options.weights_auto || p.options.weights != WeightFormat::mxfp4 || p.model.moe) return {};
  return {flag_error("--weights", "mxfp4",
                     "holds a MoE model's routed experts in MXFP4 and every other weight in BF16 "
                     "(the gpt-oss checkpoints' format); " +
                         p.model.name + " has no routed experts: use int4 or fp8")};
}

std::vector<Diagnostic> check_engine_options(const ServingOptions& o) {
  std::vector<Diagnostic> out;
  // An option of `owner` asked of another engine.
  auto refuse = [&](Engine owner, const char* what, const std::string& flag,
                    const std::string& value) {
    out.push_back(flag_error("--" + flag, value,
                             std::string("an ") + what + "; --engine is " + to_string(o.engine) +
                                 " (use --engine " + to_string(owner) + ")"));
  };
  if (o.engine != Engine::sglang) {
    const char* what = "SGLang server argument";
    if (o.mixed_chunk) refuse(Engine::sglang, what, "enable-mixed-chunk", "true");
    if (o.mixed_chunk_searched) refuse(Engine::sglang, what, "search-mixed-chunk", "true");
    if (o.max_prefill_tokens > 0)
      refuse(Engine::sglang, what, "max-prefill-tokens", std::to_string(o.max_prefill_tokens));
  }
  if (o.engine != Engine::trtllm && o.chunked_context)
    refuse(Engine::trtllm, "option of TensorRT-LLM's (the others chunk prompts by default)",
           "enable-chunked-context", "true");
  if (o.engine != Engine::trtllm && o.max_utilization)
    refuse(Engine::trtllm,
           "option of TensorRT-LLM's (vLLM and SGLang allocate as sequences grow by default)",
           "capacity-scheduler-policy", "MAX_UTILIZATION");
  return out;
}

// TensorRT-LLM's LLM API refuses such a request: "The sum of prompt length (…), query length (…)
// should not exceed max_num_tokens (…)" (tensorrt_llm/llmapi/llm.py _check_arguments, PyTorch
// backend with enable_chunked_prefill off).
std::vector<Diagnostic> check_step_tokens(const ServingProblem& p) {
  const ServingOptions& o = p.options;
  if (o.engine != Engine::trtllm || o.chunked_context) return {};
  const int64_t longest = longest_replayed_prompt(p.workload);
  const int64_t budget = step_tokens(o);
  if (longest <= budget) return {};
  const std::string rule = fmt::format(
      "a prompt of {} tokens exceeds the {} tokens of a step: TensorRT-LLM refuses a prompt "
      "longer than max_num_tokens unless chunked prefill is on; give --enable-chunked-context or "
      "--max-step-tokens {} or more",
      longest, budget, longest);
  if (o.max_step_tokens > 0)
    return {flag_error("--max-step-tokens", std::to_string(o.max_step_tokens), rule)};
  if (p.workload.trace) return {flag_error("--requests-file", p.workload.trace_file, rule)};
  return {flag_error("--isl", std::to_string(p.workload.isl), rule)};
}

std::vector<Diagnostic> check_prefix(const ServingProblem& p, const ServingLayout* layout) {
  const int64_t prefix = p.workload.prefix_tokens;
  if (prefix == 0) return {};
  auto refuse = [&](const std::string& rule) {
    return std::vector<Diagnostic>{flag_error("--prefix-tokens", std::to_string(prefix), rule)};
  };
  if (p.workload.isl_stdev > 0 || p.workload.trace)
    return refuse(
        "is modelled with fixed prompt lengths only; drop --isl-stdev or --requests-file, or "
        "--prefix-tokens");
  if (prefix >= p.workload.isl)
    return refuse("must be less than --isl (" + std::to_string(p.workload.isl) +
                  "): every request computes at least one prompt token of its own");
  if (p.options.search_disaggregated || (layout && layout->disaggregated()))
    return refuse(
        "a shared prefix is modelled on aggregated replicas only; drop --disaggregated (or the "
        "layout's prefill pool) or --prefix-tokens");
  const EnginePreset& engine = engine_preset(p.options.engine);
  if (engine.drops_sliding_window_kv && p.model.window &&
      p.model.window->kind == WindowKind::sliding)
    return refuse(std::string("is not modelled on sliding-window layers, which ") + engine.name +
                  "'s hybrid cache frees behind the window; use --engine sglang or trtllm, or "
                  "drop --prefix-tokens");
  return {};
}

std::vector<WeightFormat> weight_formats(const ServingProblem& p) {
  if (!p.options.weights_auto) return {p.options.weights};
  std::vector<WeightFormat> out{WeightFormat::bf16};
  if (p.cluster.gpu.peak_fp8_flops_per_s > 0) out.push_back(WeightFormat::fp8);
  if (p.model.mxfp4_experts) out.push_back(WeightFormat::mxfp4);
  return out;
}

ServingProblem with_weights(const ServingProblem& p, WeightFormat w) {
  ServingProblem q = p;
  q.options.weights = w;
  return q;
}

std::vector<ServingProblem> problem_variants(const ServingProblem& p) {
  std::vector<ServingProblem> out;
  for (WeightFormat w : weight_formats(p)) {
    out.push_back(with_weights(p, w));
    if (!p.options.mixed_chunk_searched || p.options.engine != Engine::sglang) continue;
    out.back().options.mixed_chunk = false;
    out.push_back(out.back());
    out.back().options.mixed_chunk = true;
  }
  return out;
}

ServingOptions evaluated_options(const ServingOptions& o, const ServingEstimate& e) {
  ServingOptions out = o;
  out.weights = e.weights;
  out.mixed_chunk = e.mixed_chunk;
  return out;
}

ServingProblem as_evaluated(const ServingProblem& p, const ServingEstimate& e) {
  ServingProblem q = p;
  q.options = evaluated_options(p.options, e);
  return q;
}

Workload replica_workload(const Workload& w, int64_t replicas) {
  Workload r = w;
  if (w.trace && replicas > 1) {
    // Round robin: replica 0 serves requests 0, replicas, 2 × replicas, … of those replayed.
    auto share = std::make_shared<std::vector<TracedRequest>>();
    const int64_t count = replay_request_count(w);
    for (int64_t i = 0; i < count; i += replicas)
      share->push_back((*w.trace)[static_cast<size_t>(i)]);
    r.trace = std::move(share);
    r.requests = 0;
  }
  const double n = static_cast<double>(replicas);
  r.concurrency = w.concurrency / n;
  r.request_rate_per_s = w.request_rate_per_s / n;
  if (w.requests > 0 && !w.trace) r.requests = std::max<int64_t>(1, w.requests / replicas);
  return r;
}

ServingMemory resolved_memory(const ServingProblem& p, ServingLayout& layout) {
  const bool explicit_batch = layout.max_batch > 0;
  const int64_t asked = explicit_batch ? layout.max_batch : default_max_batch(p.options);
  layout.max_batch = asked;
  ServingMemory m = serving_memory(p.model, p.cluster.gpu, layout, p.options, p.workload.isl,
                                   p.workload.osl, p.workload.prefix_tokens);
  // The default batch is what the cache holds whole (a --max-num-seqs that never preempts); an
  // engine that allocates as sequences grow runs a batch asked for as asked, preempting.
  if (!explicit_batch || reserves_whole_request(p.options))
    layout.max_batch = std::max<int64_t>(1, std::min(asked, m.max_concurrency));
  return m;
}

namespace {

// Copies of `layout`'s replay that serve the load: an aggregated replay is one replica's share,
// a disaggregated one covers every pool.
double replay_copies(const ServingLayout& layout) {
  return layout.disaggregated() ? 1.0 : static_cast<double>(layout.replicas);
}

// The copies whose output the layout's throughput counts: replay_copies, but under a total
// concurrency below the replica count only the replicas it keeps busy (each replica's replay
// keeps at least one request in flight: four replicas at a total concurrency of 2 serve two
// requests at a time, not four).
double busy_copies(const Workload& w, const ServingLayout& layout) {
  const double copies = replay_copies(layout);
  if (w.load != LoadKind::concurrency || layout.disaggregated()) return copies;
  return std::min(copies, std::max(1.0, std::floor(w.concurrency)));
}

// Requests per second over `replay`'s arrivals (first to last), times `copies` (the replicas
// that replay the same share).
double arrival_rate(const ReplayResult& replay, double copies) {
  const int64_t n = replay.requests_replayed;
  if (n < 2) return 0;
  const double span = replay.arrival_span_s;
  return span > 0 ? copies * static_cast<double>(n - 1) / span : 0;
}

// `replay`'s requests per second (first arrival to last finish), times `copies`.
double served_rate(const OfflineReplay& replay, double copies) {
  return replay.duration_s > 0 ? copies * static_cast<double>(replay.requests) / replay.duration_s
                               : 0;
}

double served_rate(const ReplayResult& replay, double copies) {
  return served_rate(OfflineReplay{replay.requests_replayed, replay.duration_s}, copies);
}

// Under an open loop, whether `e`'s layout keeps up with the offered load: where the replay
// served less than kOverloadCheckShare of the offered rate (any shortfall), the same requests
// replayed offline give the layout's saturation rate, and an offered rate above it is an
// overload.
void check_overload(const ServingProblem& p, ServingEstimate& e) {
  if (!p.workload.open_loop()) return;
  const double copies = replay_copies(e.layout);
  // The rate asked, or a trace's over its arrivals.
  e.offered_requests_per_s = p.workload.load == LoadKind::request_rate
                                 ? p.workload.request_rate_per_s
                                 : arrival_rate(e.replay, copies);
  e.served_requests_per_s = served_rate(e.replay, copies);
  if (e.served_requests_per_s >= kOverloadCheckShare * e.offered_requests_per_s) return;
  e.saturation_requests_per_s = saturation_requests_per_s(p, e.layout);
  e.overloaded =
      e.saturation_requests_per_s > 0 && e.offered_requests_per_s > e.saturation_requests_per_s;
}

}  // namespace

double saturation_requests_per_s(const ServingProblem& p, const ServingLayout& layout) {
  const double copies = replay_copies(layout);
  // One replica's replay is the same for every replica count where each replays the same
  // requests: not a disaggregated layout (one replay covers its pools) nor a trace's share.
  SaturationMemo* const memo =
      layout.disaggregated() || p.workload.trace ? nullptr : p.saturation_memo.get();
  const int64_t requests =
      memo ? replay_request_count(replica_workload(p.workload, layout.replicas)) : 0;
  if (memo)
    if (const std::optional<OfflineReplay> kept = memo->find(layout, requests))
      return served_rate(*kept, copies);
  ServingProblem offline = p;
  offline.workload.load = LoadKind::offline;
  offline.record_steps = false;
  const std::optional<ServingEstimate> saturated = evaluate_serving(offline, layout);
  if (!saturated) return 0;
  const OfflineReplay replay{saturated->replay.requests_replayed, saturated->replay.duration_s};
  if (memo) memo->keep(layout, requests, replay);
  return served_rate(replay, copies);
}

std::optional<ServingEstimate> evaluate_serving(const ServingProblem& p, ServingLayout layout) {
  ServingEstimate e;
  e.memory = resolved_memory(p, layout);
  if (!e.memory.fits()) return std::nullopt;
  e.layout = layout;
  e.weights = p.options.weights;
  e.mixed_chunk = p.options.mixed_chunk;
  const EnginePreset& engine = engine_preset(p.options.engine);
  const StepTimeModel steps(p.model, p.cluster, p.profile, layout, p.options, engine.host);
  ReplayLimits limits;
  limits.max_batch = layout.max_batch;
  limits.max_step_tokens = step_tokens(p.options);
  limits.kv_tokens = e.memory.kv_tokens - e.memory.prefix_resident_tokens;
  limits.tokens_per_request = e.memory.tokens_per_request;
  limits.record_steps = p.record_steps;
  limits.chunked_prefill = engine.chunked_prefill || p.options.chunked_context;
  limits.mixed_steps = engine.mixes_prefill_and_decode || p.options.mixed_chunk;
  limits.max_prefill_tokens = prefill_tokens(p.options);
  limits.reserves_answers = engine.reserves_answers;
  limits.window = p.model.attended_window();
  limits.prefix_reused_tokens = e.memory.prefix.reused_tokens;
  limits.prefix_shared_tokens = e.memory.prefix.shared_tokens;
  limits.front_end_s = front_end_s(p.options);
  const RequestCache cache =
      request_cache(p.model, e.memory.block_tokens, engine.drops_sliding_window_kv);
  if (!reserves_whole_request(p.options)) {
    limits.cache_tokens = [cache](int64_t tokens) { return cache.tokens(tokens); };
    limits.cache_block_tokens = cache.block_tokens;  // RequestCache::tokens rounds to its pages
  } else if (p.workload.lengths_vary())
    limits.reserve_tokens = [cache, shared = e.memory.prefix.shared_tokens](int64_t sequence) {
      return cache.tokens(sequence - shared);
    };
  const StepTimeFn decode_s = [&](const StepBatch& b) { return steps.time(b).total_s(); };
  const DecodePriceFn decode_price = [&](int64_t decodes, int64_t sampled) {
    return steps.decode_price(decodes, sampled);
  };
  std::optional<StepTimeModel> prefill_steps;
  // A disaggregated replay kept for other pool sizes (pool_replay_memo.h; set with `memo`),
  // and where.
  PoolReplayMemo* memo = nullptr;
  PoolReplayMemo::Shape shape;
  std::optional<PoolReplayMemo::Outcome> kept;
  if (layout.disaggregated()) {
    ServingLayout worker = layout.prefill_worker();
    e.prefill_memory = resolved_memory(p, worker);
    if (!e.prefill_memory->fits()) return std::nullopt;
    prefill_steps.emplace(p.model, p.cluster, p.profile, worker, p.options, engine.host);
    if (longest_request_cache(p.workload, limits) > limits.kv_tokens) return std::nullopt;
    e.kv_transfer_s = kv_transfer_s(p, layout, e.memory);
    const KvTransferCost transfer = kv_transfer_cost(p, layout, e.memory);
    DisaggregatedLimits d{layout.prefill_replicas, step_tokens(p.options), layout.replicas, limits,
                          transfer.latency_s,      transfer.s_per_token};
    memo = p.record_steps ? nullptr : p.pool_replay_memo.get();
    shape = {layout, p.workload.load, transfer.latency_s, transfer.s_per_token};
    kept = memo ? memo->find(shape) : std::nullopt;
    if (kept)
      e.replay = std::move(kept->replay);  // the front end added, the requests' times left out
    else
      e.replay = replay_disaggregated(
          p.workload, d, [&](const StepBatch& b) { return prefill_steps->time(b).total_s(); },
          decode_s, decode_price);
  } else {
    const Workload replica = replica_workload(p.workload, layout.replicas);
    if (longest_request_cache(replica, limits) > limits.kv_tokens) return std::nullopt;
    e.replay = replay_requests(replica, limits, decode_s, decode_price);
  }
  if (!kept) add_front_end(e.replay, limits.front_end_s);

  const int64_t mean_batch = std::max<int64_t>(1, std::llround(e.replay.mean_batch));
  for (int64_t i = 0; i < mean_batch; ++i)
    e.decode_batch.add_decode(p.model.attended_window(), p.workload.isl + p.workload.osl / 2);
  e.decode_batch.sampled = mean_batch;
  e.decode_step = steps.time(e.decode_batch);
  if (p.step_ops) e.decode_ops = steps.step_ops(e.decode_batch);
  StepBatch prefill;
  const int64_t reused = e.memory.prefix.reused_tokens;
  prefill.chunks.push_back({p.workload.isl - reused, reused});
  prefill.sampled = 1;
  e.prefill_step = prefill_steps ? prefill_steps->time(prefill) : steps.time(prefill);

  e.output_tokens_per_s = e.replay.output_tokens_per_s * busy_copies(p.workload, layout);
  e.output_tokens_per_s_per_gpu = e.output_tokens_per_s / static_cast<double>(layout.gpus());
  e.tokens_per_s_per_user = e.replay.tpot_s.mean > 0 ? 1 / e.replay.tpot_s.mean : 0;
  if (kept) {
    e.slo_attainment = kept->slo_attainment;
    e.slo_scale = kept->slo_scale;
  } else {
    int64_t good = 0;
    std::vector<double> ratios;
    const auto measured = e.replay.requests.begin() + e.replay.measured_from;
    for (auto r = measured; r != e.replay.requests.end(); ++r) {
      if (request_meets(*r, p.options.slo)) ++good;
      ratios.push_back(slo_ratio(*r, p.options.slo));
    }
    const double n = static_cast<double>(e.replay.requests.end() - measured);
    e.slo_attainment = static_cast<double>(good) / n;
    e.slo_scale = slo_scale(std::move(ratios));
    if (memo) {
      PoolReplayMemo::Outcome outcome{e.replay, e.slo_attainment, e.slo_scale};
      std::vector<RequestTimes>().swap(outcome.replay.requests);
      memo->keep(shape, std::move(outcome));
    }
  }
  e.goodput_tokens_per_s = e.output_tokens_per_s * e.slo_attainment;
  check_overload(p, e);
  e.meets_slo = e.slo_attainment >= kSloQuantile && !e.overloaded;
  if (e.meets_slo && p.options.slo.margin > 0 && slowdown_matters(p)) {
    const std::optional<SlowerSteps> slower = slower_steps(p, e, p.options.slo.margin);
    e.misses_margin = !slower || !slower->meets_slo;
    e.meets_slo = !e.misses_margin;
  }
  return e;
}

}  // namespace meshplan::serving
