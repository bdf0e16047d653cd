#include "serving/serving_render.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "core/units.h"
#include "serving/engine_flags.h"
#include "serving/engine_preset.h"
#include "serving/fp8_block_split.h"
#include "serving/kv_cache.h"
#include "serving/request_replay.h"
#include "serving/serving_plan.h"
#include "serving/token_cost.h"

namespace meshplan::serving {
namespace {

using units::kGiB;
using units::kMillisecondsPerSecond;

std::string load_text(const Workload& w) {
  switch (w.load) {
    case LoadKind::offline:
      return "offline (all requests at once)";
    case LoadKind::concurrency:
      return fmt::format("concurrency {:g}", w.concurrency);
    case LoadKind::request_rate:
      return fmt::format("Poisson {:g} requests/s (seed {})", w.request_rate_per_s, w.seed);
    case LoadKind::trace:
      return w.trace_speedup == 1
                 ? "arrivals as traced"
                 : fmt::format("arrivals as traced, {:g}× faster", w.trace_speedup);
  }
  return "";
}

// "with every step 10% longer": the SLO margin's steps (Slo::margin).
std::string longer_steps_text(const Slo& s) {
  return fmt::format("with every step {:g}% longer", 100 * s.margin);
}

std::string slo_text(const Slo& s) {
  if (!s.any())
    return s.margin > 0 ? "none (keeping up with the load " + longer_steps_text(s) + ")" : "none";
  std::string out;
  if (s.ttft_s > 0) out += fmt::format("TTFT ≤ {:g} s", s.ttft_s);
  if (s.tpot_s > 0) out += fmt::format("{}TPOT ≤ {:g} ms", out.empty() ? "" : ", ", s.tpot_s * 1e3);
  return out + " for 99% of requests" + (s.margin > 0 ? ", also " + longer_steps_text(s) : "");
}

// null where nothing was sampled (TPOT of one-token answers: no token after the first).
nlohmann::ordered_json stats_json(const LatencyStats& s) {
  if (s.count == 0) return nullptr;
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}};
}

// "mean/p99" in milliseconds, or "-" where nothing was sampled.
std::string ms_pair(const LatencyStats& s, double a, double b) {
  if (s.count == 0) return "-";
  return fmt::format("{:.2f}/{:.2f}", a * kMillisecondsPerSecond, b * kMillisecondsPerSecond);
}

// Tokens per second per user (1 / mean TPOT), or "-" with no TPOT to invert.
std::string per_user_text(const ServingEstimate& e) {
  return e.replay.tpot_s.count == 0 ? "-" : fmt::format("{:.1f}", e.tokens_per_s_per_user);
}

nlohmann::ordered_json per_user_json(const ServingEstimate& e) {
  if (e.replay.tpot_s.count == 0) return nullptr;
  return e.tokens_per_s_per_user;
}

nlohmann::ordered_json step_json(const StepBreakdown& b) {
  return {{"gemm_s", b.gemm_s},
          {"attention_s", b.attention_s},
          {"communication_s", b.communication_s},
          {"other_s", b.other_s},
          {"overhead_s", b.overhead_s},
          {"total_s", b.total_s()}};
}

std::string step_line(const StepBreakdown& b) {
  const double ms = kMillisecondsPerSecond;
  return fmt::format(
      "{:.3f} ms (GEMMs {:.3f}, attention {:.3f}, TP/EP/PP comms {:.3f}, small kernels {:.3f}, "
      "host {:.3f})",
      b.total_s() * ms, b.gemm_s * ms, b.attention_s * ms, b.communication_s * ms, b.other_s * ms,
      b.overhead_s * ms);
}

// " (normal, sd 100)" after a length drawn per request (request_lengths.h); "" when fixed.
std::string spread_text(double stdev) {
  return stdev > 0 ? fmt::format(" (normal, sd {:g})", stdev) : "";
}

std::string header(const ServeReport& r) {
  const ServingProblem& p = *r.problem;
  std::string out =
      fmt::format("{} on {} × {} — engine {}, weights {}, KV cache {}\n", p.model.name, p.gpus,
                  p.cluster.gpu.name, to_string(p.options.engine),
                  p.options.weights_auto ? "bf16 or fp8 (searched)" : to_string(p.options.weights),
                  to_string(p.options.kv));
  const std::string shared =
      p.workload.prefix_tokens > 0
          ? fmt::format(" (the first {} shared by every request)", p.workload.prefix_tokens)
          : "";
  if (p.workload.trace)
    out += fmt::format(
        "workload: {} requests of the trace {} (mean {} prompt + {} answer tokens), {}; SLO: {}\n",
        replay_request_count(p.workload), p.workload.trace_file, p.workload.isl, p.workload.osl,
        load_text(p.workload), slo_text(p.options.slo));
  else
    out += fmt::format("workload: {}{} prompt{} + {}{} answer tokens, {}; SLO: {}\n",
                       p.workload.isl, spread_text(p.workload.isl_stdev), shared, p.workload.osl,
                       spread_text(p.workload.osl_stdev), load_text(p.workload),
                       slo_text(p.options.slo));
  if (r.searched)
    out += fmt::format("searched {} serving layout{} ({} more do not fit)\n", r.result.evaluated,
                       r.result.evaluated == 1 ? "" : "s", r.result.skipped);
  return out;
}

struct Row {
  std::vector<std::string> cells;
};

std::string label(const ServingProblem& p, const ServingEstimate& e) {
  return short_text(e.layout) +
         (p.options.weights_auto ? std::string(" ") + to_string(e.weights) : std::string()) +
         (p.options.mixed_chunk_searched && e.mixed_chunk ? " mixed" : "");
}

// The offered rate's share of what the layout sustains, "-" where that was not replayed.
std::string load_share_text(const ServingEstimate& e) {
  const double share = e.utilization();
  return share > 0 ? fmt::format("{:.0f}%", 100 * share) : "-";
}

// USD per million output tokens at the report's GPU-hour price, "-" where nothing is served.
std::string cost_text(const ServeReport& r, const ServingEstimate& e) {
  if (e.output_tokens_per_s <= 0) return "-";
  return fmt::format("{:.3f}", usd_per_million_output_tokens(e.layout.gpus(), e.output_tokens_per_s,
                                                             r.gpu_hour_cost_usd));
}

// A table row, with the optional columns `columns` adds.
Row row_of(const ServeReport& r, size_t rank, const ServingEstimate& e) {
  const ServingProblem& p = *r.problem;
  Row row{{std::to_string(rank), label(p, e), std::to_string(e.layout.gpus()),
           fmt::format("{:.0f}", e.output_tokens_per_s),
           fmt::format("{:.1f}", e.output_tokens_per_s_per_gpu), per_user_text(e),
           fmt::format("{:.3f}/{:.3f}", e.replay.ttft_s.mean, e.replay.ttft_s.p99),
           ms_pair(e.replay.tpot_s, e.replay.tpot_s.mean, e.replay.tpot_s.p99),
           fmt::format("{:.0f}%", 100 * e.slo_attainment),
           e.overloaded ? "overloaded"
                        : (e.meets_slo ? "yes" : (e.misses_margin ? "no: margin" : "no"))}};
  if (p.workload.open_loop()) row.cells.push_back(load_share_text(e));
  if (r.gpu_hour_cost_usd > 0) row.cells.push_back(cost_text(r, e));
  return row;
}

// Under the table, where a row shown is overloaded: what the word means.
std::string overload_note(const ServeReport& r, size_t shown) {
  for (size_t i = 0; i < shown; ++i)
    if (r.result.ranked[i].overloaded)
      return "overloaded: sustains fewer requests/s than offered (the same requests replayed "
             "offline), so its queue grows without bound and its latencies with --requests\n";
  return "";
}

// Offline (every request at once, the default load) a request's TTFT is mostly its wait for its
// turn, growing with --requests: no layout meets a TTFT objective that way, and the search asked
// for one meant a load.
std::string offline_slo_note(const ServeReport& r) {
  const ServingProblem& p = *r.problem;
  if (p.workload.load != LoadKind::offline || p.options.slo.ttft_s <= 0 ||
      any_meets_slo(r.result.ranked))
    return "";
  return fmt::format(
      "offline, every request arrives at once: its TTFT is mostly its wait in the queue (mean "
      "{:.3f} s on the first row), so no layout meets TTFT ≤ {:g} s; give the load to plan for: "
      "--concurrency (requests in flight) or --request-rate, and --load-curve for the best "
      "layout against load\n",
      r.result.ranked.front().replay.ttft_s.mean, p.options.slo.ttft_s);
}

// What keeps `e` from the SLO: falling behind the load, or how much looser the objectives
// would have to be, with those its p99 exceeds.
std::string slo_misses(const Slo& slo, const ServingEstimate& e) {
  if (e.overloaded) return "it falls behind the load";
  if (e.misses_margin)
    return "it meets it as predicted, not " + longer_steps_text(slo) + " (--slo-margin)";
  std::string over;
  if (slo.ttft_s > 0 && e.replay.ttft_s.p99 > slo.ttft_s)
    over = fmt::format("TTFT p99 {:.3f} s > {:g} s", e.replay.ttft_s.p99, slo.ttft_s);
  if (slo.tpot_s > 0 && e.replay.tpot_s.p99 > slo.tpot_s)
    over += fmt::format("{}TPOT p99 {:.2f} ms > {:g} ms", over.empty() ? "" : ", ",
                        e.replay.tpot_s.p99 * kMillisecondsPerSecond,
                        slo.tpot_s * kMillisecondsPerSecond);
  return fmt::format("it meets objectives {:.1f}% looser{}", 100 * (e.slo_scale - 1),
                     over.empty() ? "" : ": " + over);
}

// "1 GPU", "8 GPUs".
std::string gpus_text(int64_t n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

// What the searches on more GPUs found (more_gpus.h), or where the user may look.
std::string more_gpus_text(const ServingProblem& p, const std::optional<MoreGpus>& more) {
  if (!more) return "give a looser objective";
  const std::optional<ServingEstimate>& b = more->best;
  switch (more->stop) {
    case MoreGpus::Stop::met:
      return fmt::format(
          "on up to {} {} meets it on {} ({:.1f} tok/s/GPU): --gpus {}, or a looser objective",
          gpus_text(more->gpus), label(p, *b), b->layout.gpus(), b->output_tokens_per_s_per_gpu,
          b->layout.gpus());
    case MoreGpus::Stop::no_nearer:
      return fmt::format(
          "on up to {} the nearest comes no nearer ({}, {:.1f}% looser): more GPUs will not "
          "meet it; give a looser objective",
          gpus_text(more->gpus), label(p, *b), 100 * (b->slo_scale - 1));
    case MoreGpus::Stop::cluster:
      if (!b) return "nor on the cluster's GPUs; give a looser objective";
      return fmt::format(
          "nor on all {} GPUs of the cluster (the nearest {}, {:.1f}% looser); give a looser "
          "objective",
          more->gpus, label(p, *b), 100 * (b->slo_scale - 1));
    case MoreGpus::Stop::size_limit:
      return fmt::format(
          "a search on {} would pass the search-size limit (fewer --requests lift it); give "
          "more --gpus with fewer --requests, or a looser objective",
          gpus_text(more->gpus));
  }
  return "";
}

// Under a load, where a search finds no layout that meets the SLO: that it did not, the nearest
// (the ranking puts it first: rank_estimates) with what it misses, and what more GPUs do.
std::string unmet_slo_note(const ServeReport& r) {
  const ServingProblem& p = *r.problem;
  if (!r.searched || !misses_slo_under_load(p, r.result)) return "";
  const ServingEstimate& e = r.result.ranked.front();
  return fmt::format(
      "no layout on up to {} meets the SLO; the rows are ranked by how near they come: the "
      "nearest, {} on {}, serves {:.0f}% of requests within it ({}); {}\n",
      gpus_text(p.gpus), label(p, e), gpus_text(e.layout.gpus()), 100 * e.slo_attainment,
      slo_misses(p.options.slo, e), more_gpus_text(p, r.more_gpus));
}

// The table's columns: under an open loop also the load's share of what each layout sustains,
// and with a GPU-hour price the cost per million output tokens last.
std::vector<std::string> columns(const ServeReport& r) {
  std::vector<std::string> out = {"#",
                                  "layout",
                                  "GPUs",
                                  "tok/s",
                                  "tok/s/GPU",
                                  "tok/s/user",
                                  "TTFT mean/p99 s",
                                  "TPOT mean/p99 ms",
                                  "in SLO",
                                  "meets"};
  if (r.problem->workload.open_loop()) out.push_back("load");
  if (r.gpu_hour_cost_usd > 0) out.push_back("$/Mtok");
  return out;
}

// The prefill pool as the engines' commands see it: prefill_replicas workers of prefill_tp GPUs.
ServingLayout prefill_pool(const ServingLayout& l) {
  ServingLayout pool = l.prefill_worker();
  pool.replicas = l.prefill_replicas;
  pool.max_batch = l.max_batch;
  return pool;
}

nlohmann::ordered_json engine_flags_json(const ServingProblem& p, const ServingLayout& l,
                                         const ServingOptions& o, PoolRole role = PoolRole::whole) {
  const ModelSpec& model = p.model;
  const int64_t longest = longest_replayed_sequence(p.workload);
  // An engine that would refuse the FP8 checkpoint so split gets the reason instead.
  auto line = [&](Engine e, const std::string& command) {
    const std::string why = fp8_block_refusal(model, o.weights, e, l);
    return why.empty() ? command : fmt::format("{}: no command: it {}", to_string(e), why);
  };
  return {{"vllm", line(Engine::vllm,
                        vllm_command(model.name, model.moe.has_value(), l, o, longest, role))},
          {"sglang", line(Engine::sglang, sglang_command(model.name, l, o, longest, role))},
          {"trtllm", line(Engine::trtllm, trtllm_command(model.name, l, o, longest, role))}};
}

std::string engine_lines(const ServingProblem& p, const ServingLayout& l, const ServingOptions& o,
                         PoolRole role = PoolRole::whole) {
  const nlohmann::ordered_json lines = engine_flags_json(p, l, o, role);
  std::string out;
  for (const nlohmann::ordered_json& line : lines) out += "  " + line.get<std::string>() + "\n";
  return out;
}

// Where a GPU's memory goes; what the engine's rule leaves outside every budget closes the sum.
std::string memory_line(const std::string& what, const ServingProblem& p, const ServingMemory& m) {
  const double left =
      m.capacity_bytes - m.weight_bytes - m.activation_bytes - m.reserved_bytes - m.kv_budget_bytes;
  return fmt::format(
      "{}: {:.1f} GiB = weights {:.2f} + activations {:.2f} + reserved {:.2f} + KV budget {:.2f} "
      "+ left free {:.2f} GiB ({} rule {:.2f})\n",
      what, m.capacity_bytes / kGiB, m.weight_bytes / kGiB, m.activation_bytes / kGiB,
      m.reserved_bytes / kGiB, m.kv_budget_bytes / kGiB, left / kGiB, to_string(p.options.engine),
      memory_fraction(p.options));
}

// Where a request's TTFT goes: the serving front end (where priced), queued (for admission, for
// the step under way, for the prompts ahead) or in the steps from the first computing its prompt
// to its first token.
std::string ttft_line(const ReplayResult& r) {
  const std::string front_end =
      r.front_end_s > 0 ? fmt::format("{:.3f} s front end + ", r.front_end_s) : "";
  return fmt::format(
      "TTFT: mean {:.3f} s = {}{:.3f} s queued (p50 {:.3f}, p99 {:.3f}) + {:.3f} s from the first "
      "step computing the prompt to the first token\n",
      r.ttft_s.mean, front_end, r.queue_s.mean, r.queue_s.p50, r.queue_s.p99,
      r.ttft_s.mean - r.front_end_s - r.queue_s.mean);
}

// Under an open loop, the offered rate against what the layout sustains (not when overloaded:
// that has its own line).
std::string utilization_line(const ServingEstimate& e) {
  if (e.utilization() <= 0 || e.overloaded) return "";
  return fmt::format(
      "load: {:.2f} requests/s, {:.0f}% of the {:.2f} this layout sustains (its requests replayed "
      "at once); latencies grow steeply as that share nears 100%\n",
      e.offered_requests_per_s, 100 * e.utilization(), e.saturation_requests_per_s);
}

// `slower`: the line of the best layout with slower steps (slower_text), after its latencies.
std::string details(const ServingProblem& p, const ServingEstimate& e, const std::string& slower) {
  const ServingMemory& m = e.memory;
  std::string out;
  out += fmt::format("best: --layout {}\n", layout_text(e.layout));
  if (e.overloaded)
    out += fmt::format(
        "overloaded: it sustains {:.2f} requests/s (the requests replayed offline) of the {:.2f} "
        "offered; give more --gpus or a lower load\n",
        e.saturation_requests_per_s, e.offered_requests_per_s);
  const bool disagg = e.layout.disaggregated();
  out += memory_line(disagg ? "memory per decode GPU" : "memory per GPU", p, m);
  if (disagg) out += memory_line("memory per prefill GPU", p, *e.prefill_memory);
  const int64_t whole = block_rounded_tokens(
      p.workload.isl + p.workload.osl - m.prefix.shared_tokens, m.block_tokens);
  out += fmt::format(
      "KV cache: {:.1f} KiB per token per GPU, {} tokens per replica in blocks of {} → {} "
      "requests of {} tokens at once (max batch {}{})\n",
      m.kv_bytes_per_token / units::kKiB, m.kv_tokens, m.block_tokens, m.max_concurrency,
      m.tokens_per_request, e.layout.max_batch,
      m.tokens_per_request < whole
          ? fmt::format("; {} on the full-attention layers, the engine freeing what the "
                        "sliding-window layers no longer read",
                        whole)
          : "");
  if (p.workload.prefix_tokens > 0)
    out += fmt::format(
        "prefix cache: the {}-token shared prefix held once ({} tokens per replica); each request "
        "reads {} of its prompt tokens from it and computes {}\n",
        p.workload.prefix_tokens, m.prefix_resident_tokens, m.prefix.reused_tokens,
        p.workload.isl - m.prefix.reused_tokens);
  out += fmt::format("decode step at batch {}: {}\n", e.decode_batch.decodes,
                     step_line(e.decode_step));
  out += fmt::format("prefill of one {}-token prompt{}{}: {}\n", p.workload.isl,
                     m.prefix.reused_tokens > 0
                         ? fmt::format(" past its {} cached tokens", m.prefix.reused_tokens)
                         : "",
                     disagg ? " on a prefill worker" : "", step_line(e.prefill_step));
  if (disagg)
    out += fmt::format(
        "KV transfer to the decode pool: {:.3f} ms per request; pools busy: prefill {:.0f}%, "
        "decode {:.0f}% of their worker time\n",
        e.kv_transfer_s * kMillisecondsPerSecond, 100 * e.replay.prefill_pool_busy,
        100 * e.replay.decode_pool_busy);
  out += fmt::format(
      "replay: {} requests {}, {} {}steps, mean batch {:.1f}{}, goodput {:.0f} tok/s\n",
      e.replay.requests_replayed, disagg ? "through both pools" : "per replica", e.replay.steps,
      disagg ? "decode " : "", e.replay.mean_batch,
      e.replay.preemptions > 0
          ? fmt::format(", {} preemptions (cache full; prompt and answer so far recomputed)",
                        e.replay.preemptions)
          : std::string(),
      e.goodput_tokens_per_s);
  out += ttft_line(e.replay) + utilization_line(e) + slower;
  const ServingOptions o = evaluated_options(p.options, e);
  if (!disagg) return out + "engine flags:\n" + engine_lines(p, e.layout, o);
  out +=
      "engine flags, decode pool (SGLang's servers carry their pool's --disaggregation-mode, "
      "vLLM's the NIXL KV connector, TensorRT-LLM's a KV cache transceiver; each engine's router "
      "or proxy in front of the two pools):\n" +
      engine_lines(p, e.layout, o, PoolRole::decode);
  out += "engine flags, prefill pool:\n" +
         engine_lines(p, prefill_pool(e.layout), o, PoolRole::prefill);
  return out + "TensorRT-LLM's disaggregated server:\n  " +
         trtllm_disaggregated_router(e.layout.prefill_replicas, e.layout.replicas) + "\n";
}

// The highest load on the curve (ascending, the offline point last) whose replay meets the SLO.
const LoadPoint* highest_within_slo(const std::vector<LoadPoint>& load) {
  const LoadPoint* reach = nullptr;
  for (const LoadPoint& l : load)
    if (!l.offline() && l.meets_slo) reach = &l;
  return reach;
}

// The curve's conclusion under an SLO: the most load it meets, per replica and per GPU.
std::string slo_reach_text(const ServingEstimate& best, const std::vector<LoadPoint>& load) {
  const LoadPoint* reach = highest_within_slo(load);
  if (!reach) return "no load on the curve meets the SLO\n";
  const auto replicas = static_cast<double>(best.layout.replicas);
  const auto gpus = static_cast<double>(best.layout.gpus());
  const std::string at =
      reach->concurrency > 0
          ? fmt::format("concurrency {:g} ({:g} per replica)", reach->concurrency,
                        reach->concurrency / replicas)
          : fmt::format("{:.2f} requests/s ({:.2f} per replica)", reach->request_rate_per_s,
                        reach->request_rate_per_s / replicas);
  return fmt::format(
      "highest load on the curve within the SLO: {}, {:.0f} tok/s, {:.1f} tok/s/GPU\n", at,
      reach->output_tokens_per_s, reach->output_tokens_per_s / gpus);
}

std::string load_text(const ServeReport& r) {
  const std::vector<LoadPoint>& load = r.load;
  if (load.empty()) return "";
  const bool with_slo = r.problem->options.slo.any();
  const bool rates = is_rate_curve(load);
  std::string out = rates ? "best layout against load (Poisson arrivals up to the saturation "
                            "rate; last row offline = saturation):\n"
                          : "best layout against load (closed loop; last row offline = "
                            "saturation):\n";
  out += fmt::format("  {:>11}  {:>8}  {:>16}  {:>16}{}\n", rates ? "requests/s" : "concurrency",
                     "tok/s", "TTFT p50/p99 s", "TPOT p50/p99 ms",
                     with_slo ? fmt::format("  {:>6}", "in SLO") : "");
  for (const LoadPoint& l : load) {
    const std::string ttft = fmt::format("{:.3f}/{:.3f}", l.ttft_s.p50, l.ttft_s.p99);
    const std::string tpot = ms_pair(l.tpot_s, l.tpot_s.p50, l.tpot_s.p99);
    const std::string at = l.offline()         ? "offline"
                           : l.concurrency > 0 ? fmt::format("{:g}", l.concurrency)
                                               : fmt::format("{:.2f}", l.request_rate_per_s);
    const std::string in_slo =
        with_slo ? fmt::format("  {:>6}", fmt::format("{:.0f}%", 100 * l.slo_attainment)) : "";
    out += fmt::format("  {:>11}  {:>8.0f}  {:>16}  {:>16}{}\n", at, l.output_tokens_per_s, ttft,
                       tpot, in_slo);
  }
  if (with_slo) out += slo_reach_text(r.result.ranked.front(), load);
  return out;
}

// The best layout with every step and KV transfer a fraction longer (slower_steps.h): its
// throughput, latencies and SLO verdict.
std::string slower_text(const ServeReport& r) {
  if (!r.slower) return "";
  const SlowerSteps& s = *r.slower;
  const Slo& slo = r.problem->options.slo;
  std::string verdict;
  if (s.overloaded)
    verdict =
        fmt::format(", overloaded: it sustains {:.2f} requests/s", s.saturation_requests_per_s);
  else if (slo.any())
    verdict = fmt::format(", {:.0f}% in SLO: {}", 100 * s.slo_attainment,
                          s.meets_slo ? "meets it" : "misses it");
  return fmt::format(
      "{:.0f}% slower steps (every step and KV transfer {:g}× the predicted; predicted "
      "throughput misses measured runs by about 10% on average): {:.0f} tok/s, TTFT mean/p99 "
      "{:.3f}/{:.3f} s, TPOT mean/p99 {} ms{}\n",
      100 * s.fraction, 1 + s.fraction, s.output_tokens_per_s, s.ttft_s.mean, s.ttft_s.p99,
      ms_pair(s.tpot_s, s.tpot_s.mean, s.tpot_s.p99), verdict);
}

std::string pareto_text(const ServingProblem& p, const ServingSearchResult& r) {
  std::string out = "Pareto front (tokens/s per user → tokens/s per GPU):\n";
  for (size_t i : r.pareto) {
    const ServingEstimate& e = r.ranked[i];
    out += fmt::format("  {:>8} tok/s/user  {:>9.1f} tok/s/GPU  {}\n", per_user_text(e),
                       e.output_tokens_per_s_per_gpu, label(p, e));
  }
  return out;
}

// "tp8 pp2 ep8 adp": one replica's split, without its count and batch.
std::string split_text(const ServingLayout& l) {
  return fmt::format("tp{} pp{} ep{}{}", l.tp, l.pp, l.ep, l.attention_dp ? " adp" : "");
}

}  // namespace

std::string memory_short_text(const ServingProblem& p, const NoFit& f) {
  const ServingMemory& m = f.memory;
  return fmt::format(
      "per GPU of {:.1f} GiB: weights {:.2f} + activations {:.2f} + reserved {:.2f} GiB; {}'s "
      "rule ({:.2f}) leaves the KV cache {:.2f} GiB where one request takes {:.2f} GiB: {:.2f} "
      "GiB short",
      m.capacity_bytes / kGiB, m.weight_bytes / kGiB, m.activation_bytes / kGiB,
      m.reserved_bytes / kGiB, to_string(p.options.engine), memory_fraction(p.options),
      f.signed_budget_bytes / kGiB, f.request_kv_bytes / kGiB, f.short_bytes() / kGiB);
}

namespace {

// Where nothing fits (no_fit.h): the verdict, the nearest layout's memory, and what would make a
// layout fit, one line each (`remedies_intro` and the remedies, or why there is none); each
// remedy as its flags and what they give, which the text and Markdown join their own way.
struct NoFitLines {
  std::string verdict, nearest, remedies_intro;
  std::vector<std::pair<std::string, std::string>> remedies;  // flags, what they give
};

// "1 GPU", "8 GPUs".
std::string count_text(int64_t n, const char* noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

NoFitLines no_fit_lines(const ServingProblem& p, const NoFit& f) {
  const ServingMemory& m = f.memory;
  NoFitLines out;
  out.verdict = fmt::format("no layout fits: none leaves KV-cache room for one request ({} tokens)",
                            m.tokens_per_request + m.prefix.shared_tokens);
  out.nearest = fmt::format("nearest: {} on {}, {} weights; {}", split_text(f.nearest),
                            count_text(f.nearest.replica_gpus(), "GPU"), to_string(f.weights),
                            memory_short_text(p, f));
  if (f.remedies.empty()) {
    out.remedies_intro = fmt::format(
        "nothing would within the cluster's {}: no replica of up to {} (tp within a node, pp "
        "up to 8) fits at any weight format meshplan serves or with an FP8 KV cache",
        count_text(p.cluster.gpus(), "GPU"),
        count_text(std::min(p.cluster.gpus(), p.cluster.gpus_per_node * 8), "GPU"));
    return out;
  }
  out.remedies_intro = "what would make a layout fit (one replica of the fewest GPUs each):";
  for (const NoFitRemedy& r : f.remedies)
    out.remedies.emplace_back(
        r.flags, fmt::format("{} on {}, {} weights, {} KV cache, up to {} at once (--layout {})",
                             split_text(r.layout), count_text(r.layout.replica_gpus(), "GPU"),
                             to_string(r.weights), to_string(r.kv),
                             count_text(r.max_concurrency, "request"), layout_text(r.layout)));
  return out;
}

std::string no_fit_text(const ServeReport& r) {
  if (!r.no_fit) return "no layout fits\n";
  const NoFitLines l = no_fit_lines(*r.problem, *r.no_fit);
  std::string out = l.verdict + "\n" + l.nearest + "\n" + l.remedies_intro + "\n";
  for (const auto& [flags, gives] : l.remedies) out += "  " + flags + ": " + gives + "\n";
  return out;
}

std::string no_fit_markdown(const ServeReport& r) {
  if (!r.no_fit) return "No layout fits.\n";
  const NoFitLines l = no_fit_lines(*r.problem, *r.no_fit);
  std::string out = "**" + l.verdict + ".**\n\n" + l.nearest + ".\n\n" + l.remedies_intro + "\n";
  if (!l.remedies.empty()) out += "\n";
  for (const auto& [flags, gives] : l.remedies) out += "- `" + flags + "`: " + gives + "\n";
  return out;
}

}  // namespace

std::string serve_table(const ServeReport& r) {
  std::string out = header(r);
  if (r.result.ranked.empty()) return out + no_fit_text(r);
  std::vector<Row> rows;
  const size_t shown = std::min(r.result.ranked.size(), static_cast<size_t>(r.top));
  for (size_t i = 0; i < shown; ++i) rows.push_back(row_of(r, i + 1, r.result.ranked[i]));
  const std::vector<std::string> head = columns(r);
  const size_t n = head.size();
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; ++c) {
    width[c] = head[c].size();
    for (const Row& row : rows) width[c] = std::max(width[c], row.cells[c].size());
  }
  // "≤" and "→" are not in the columns: byte width equals display width here.
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < n; ++c)
      s += (c == 1 ? fmt::format("{:<{}}", cells[c], width[c])
                   : fmt::format("{:>{}}", cells[c], width[c])) +
           (c + 1 < n ? "  " : "");
    return s + "\n";
  };
  out += '\n';
  out += line(head);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total - 2, '-') + "\n";
  for (const Row& row : rows) out += line(row.cells);
  out += overload_note(r, shown) + offline_slo_note(r) + unmet_slo_note(r);
  out += '\n';
  out += details(*r.problem, r.result.ranked.front(), slower_text(r));
  if (r.searched) out += pareto_text(*r.problem, r.result);
  return out + load_text(r);
}

std::string serve_markdown(const ServeReport& r) {
  std::string out = "## Serving plan\n\n";
  out += header(r) + "\n";
  if (r.result.ranked.empty()) return out + no_fit_markdown(r);
  const std::vector<std::string> head = columns(r);
  out += "|";
  for (const std::string& c : head) out += " " + c + " |";
  out += "\n|";
  for (size_t c = 0; c < head.size(); ++c) out += "---|";
  out += "\n";
  const size_t shown = std::min(r.result.ranked.size(), static_cast<size_t>(r.top));
  for (size_t i = 0; i < shown; ++i) {
    const Row row = row_of(r, i + 1, r.result.ranked[i]);
    out += "|";
    for (const std::string& c : row.cells) out += " " + c + " |";
    out += "\n";
  }
  const std::string note = overload_note(r, shown) + offline_slo_note(r) + unmet_slo_note(r);
  if (!note.empty()) out += "\n" + note;
  out += "\n```\n" + details(*r.problem, r.result.ranked.front(), slower_text(r));
  if (r.searched) out += pareto_text(*r.problem, r.result);
  return out + load_text(r) + "```\n";
}

nlohmann::ordered_json memory_json(const ServingMemory& m) {
  return {{"capacity_bytes", m.capacity_bytes},     {"weight_bytes", m.weight_bytes},
          {"activation_bytes", m.activation_bytes}, {"reserved_bytes", m.reserved_bytes},
          {"kv_budget_bytes", m.kv_budget_bytes},   {"kv_bytes_per_token", m.kv_bytes_per_token},
          {"block_tokens", m.block_tokens}};
}

nlohmann::ordered_json estimate_json(const ServingProblem& p, const ServingEstimate& e,
                                     double gpu_hour_cost_usd) {
  const ServingMemory& m = e.memory;
  nlohmann::ordered_json j;
  j["weights"] = to_string(e.weights);
  if (p.options.engine == Engine::sglang) j["mixed_chunk"] = e.mixed_chunk;
  j["layout"] = {{"tp", e.layout.tp},
                 {"pp", e.layout.pp},
                 {"ep", e.layout.ep},
                 {"replicas", e.layout.replicas},
                 {"max_batch", e.layout.max_batch}};
  j["gpus"] = e.layout.gpus();
  j["output_tokens_per_s"] = e.output_tokens_per_s;
  j["output_tokens_per_s_per_gpu"] = e.output_tokens_per_s_per_gpu;
  j["tokens_per_s_per_user"] = per_user_json(e);
  j["ttft_s"] = stats_json(e.replay.ttft_s);
  j["ttft_queue_s"] = stats_json(e.replay.queue_s);
  j["ttft_front_end_s"] = e.replay.front_end_s;
  j["tpot_s"] = stats_json(e.replay.tpot_s);
  if (gpu_hour_cost_usd > 0)
    j["usd_per_million_output_tokens"] =
        e.output_tokens_per_s > 0 ? nlohmann::ordered_json(usd_per_million_output_tokens(
                                        e.layout.gpus(), e.output_tokens_per_s, gpu_hour_cost_usd))
                                  : nlohmann::ordered_json();
  j["goodput_tokens_per_s"] = e.goodput_tokens_per_s;
  j["slo_attainment"] = e.slo_attainment;
  j["slo_scale"] = e.slo_scale;
  j["meets_slo"] = e.meets_slo;
  j["misses_slo_margin"] = e.misses_margin;
  j["offered_requests_per_s"] = e.offered_requests_per_s;
  j["served_requests_per_s"] = e.served_requests_per_s;
  j["saturation_requests_per_s"] = e.saturation_requests_per_s;
  // The offered rate's share of it, where both are known (null otherwise).
  j["utilization"] =
      e.utilization() > 0 ? nlohmann::ordered_json(e.utilization()) : nlohmann::ordered_json();
  j["overloaded"] = e.overloaded;
  j["max_concurrency"] = m.max_concurrency;
  j["kv_cache_tokens"] = m.kv_tokens;
  j["prefix_reused_tokens"] = m.prefix.reused_tokens;
  j["prefix_shared_tokens"] = m.prefix_resident_tokens;
  j["memory"] = memory_json(m);
  if (e.layout.disaggregated())
    j["disaggregated"] = {{"prefill_tp", e.layout.prefill_tp},
                          {"prefill_replicas", e.layout.prefill_replicas},
                          {"kv_transfer_s", e.kv_transfer_s},
                          {"prefill_pool_busy", e.replay.prefill_pool_busy},
                          {"decode_pool_busy", e.replay.decode_pool_busy},
                          {"prefill_memory", memory_json(*e.prefill_memory)}};
  j["step_time"] = {{"decode", step_json(e.decode_step)},
                    {"decode_batch", e.decode_batch.decodes},
                    {"prefill", step_json(e.prefill_step)}};
  j["replay"] = {{"requests", e.replay.requests_replayed},
                 {"steps", e.replay.steps},
                 {"mean_batch", e.replay.mean_batch},
                 {"preemptions", e.replay.preemptions}};
  const ServingOptions o = evaluated_options(p.options, e);
  const bool disagg = e.layout.disaggregated();
  j["engine_flags"] =
      engine_flags_json(p, e.layout, o, disagg ? PoolRole::decode : PoolRole::whole);
  if (disagg) {
    j["prefill_engine_flags"] = engine_flags_json(p, prefill_pool(e.layout), o, PoolRole::prefill);
    j["trtllm_disaggregated_server"] =
        trtllm_disaggregated_router(e.layout.prefill_replicas, e.layout.replicas);
  }
  return j;
}

namespace {

nlohmann::ordered_json no_fit_json(const NoFit& f) {
  const auto split = [](const ServingLayout& l) {
    return nlohmann::ordered_json{{"tp", l.tp},
                                  {"pp", l.pp},
                                  {"ep", l.ep},
                                  {"attention_dp", l.attention_dp},
                                  {"max_batch", l.max_batch}};
  };
  nlohmann::ordered_json remedies = nlohmann::ordered_json::array();
  for (const NoFitRemedy& r : f.remedies)
    remedies.push_back({{"flags", r.flags},
                        {"weights", to_string(r.weights)},
                        {"kv", to_string(r.kv)},
                        {"gpus", r.layout.replica_gpus()},
                        {"layout", split(r.layout)},
                        {"max_concurrency", r.max_concurrency}});
  return {{"nearest",
           {{"layout", split(f.nearest)},
            {"gpus", f.nearest.replica_gpus()},
            {"weights", to_string(f.weights)},
            {"memory", memory_json(f.memory)},
            {"signed_kv_budget_bytes", f.signed_budget_bytes},
            {"request_kv_bytes", f.request_kv_bytes},
            {"short_bytes", f.short_bytes()}}},
          {"remedies", remedies}};
}

}  // namespace

nlohmann::ordered_json serve_json(const ServeReport& r) {
  const ServingProblem& p = *r.problem;
  nlohmann::ordered_json j;
  j["model"] = p.model.name;
  j["gpu"] = p.cluster.gpu.name;
  j["gpus"] = p.gpus;
  j["engine"] = to_string(p.options.engine);
  j["weights"] = p.options.weights_auto ? "auto" : to_string(p.options.weights);
  j["kv"] = to_string(p.options.kv);
  // The tokens one engine step carries (--max-step-tokens, else the engine's default).
  j["max_step_tokens"] = step_tokens(p.options);
  j["workload"] = {{"isl", p.workload.isl},
                   {"isl_stdev", p.workload.isl_stdev},
                   {"prefix_tokens", p.workload.prefix_tokens},
                   {"osl", p.workload.osl},
                   {"osl_stdev", p.workload.osl_stdev},
                   {"requests_file", p.workload.trace_file},
                   {"trace_speedup", p.workload.trace_speedup},
                   {"load", load_text(p.workload)},
                   {"concurrency", p.workload.concurrency},
                   {"request_rate_per_s", p.workload.request_rate_per_s}};
  j["slo"] = {{"ttft_s", p.options.slo.ttft_s},
              {"tpot_s", p.options.slo.tpot_s},
              {"margin", p.options.slo.margin}};
  if (r.result.ranked.empty()) {
    j["best"] = nullptr;
    if (r.no_fit) j["no_fit"] = no_fit_json(*r.no_fit);
    return j;
  }
  j["best"] = estimate_json(p, r.result.ranked.front(), r.gpu_hour_cost_usd);
  if (r.slower) {
    const SlowerSteps& s = *r.slower;
    j["slower_steps"] = {{"fraction", s.fraction},
                         {"output_tokens_per_s", s.output_tokens_per_s},
                         {"ttft_s", stats_json(s.ttft_s)},
                         {"tpot_s", stats_json(s.tpot_s)},
                         {"slo_attainment", s.slo_attainment},
                         {"meets_slo", s.meets_slo},
                         {"overloaded", s.overloaded},
                         {"saturation_requests_per_s", s.saturation_requests_per_s}};
  }
  if (!r.load.empty()) {
    nlohmann::ordered_json load = nlohmann::ordered_json::array();
    for (const LoadPoint& l : r.load)
      load.push_back({{"concurrency", l.concurrency},
                      {"request_rate_per_s", l.request_rate_per_s},
                      {"output_tokens_per_s", l.output_tokens_per_s},
                      {"ttft_s", stats_json(l.ttft_s)},
                      {"tpot_s", stats_json(l.tpot_s)},
                      {"slo_attainment", l.slo_attainment},
                      {"meets_slo", l.meets_slo}});
    j["load_curve"] = load;
  }
  // A fixed layout has one row per variant (weight format, SGLang's mixed chunk) evaluated.
  if (!r.searched && r.result.ranked.size() < 2) return j;
  if (r.searched) {
    j["evaluated"] = r.result.evaluated;
    j["skipped"] = r.result.skipped;
  }
  nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
  const size_t shown = std::min(r.result.ranked.size(), static_cast<size_t>(r.top));
  for (size_t i = 0; i < shown; ++i)
    ranked.push_back(estimate_json(p, r.result.ranked[i], r.gpu_hour_cost_usd));
  j["ranked"] = ranked;
  nlohmann::ordered_json pareto = nlohmann::ordered_json::array();
  for (size_t i : r.result.pareto) {
    const ServingEstimate& e = r.result.ranked[i];
    pareto.push_back({{"layout", layout_text(e.layout)},
                      {"weights", to_string(e.weights)},
                      {"tokens_per_s_per_user", per_user_json(e)},
                      {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu}});
  }
  j["pareto"] = pareto;
  if (r.more_gpus) {
    const MoreGpus& m = *r.more_gpus;
    j["more_gpus"] = {{"stop", to_string(m.stop)},
                      {"gpus", m.gpus},
                      {"best", m.best ? estimate_json(p, *m.best, r.gpu_hour_cost_usd)
                                      : nlohmann::ordered_json()}};
  }
  return j;
}

}  // namespace meshplan::serving
