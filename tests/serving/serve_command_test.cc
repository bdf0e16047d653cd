// `meshplan serve` end to end: JSON fields, determinism, and bad input (exit 2, one message).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "tests/cli/run_meshplan.h"

using meshplan::testing::repo_path;
using meshplan::testing::run_meshplan;

namespace {

const std::string kBase = "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                          repo_path("topologies/dgx-h100-1n.yaml") +
                          " --gpus 1 --isl 512 --osl 128 --requests 200";

// The JSON of tp=1 at concurrency 8, as is (first) and with `flags` added (second).
std::pair<nlohmann::json, nlohmann::json> plain_and(const std::string& flags) {
  const std::string layout = kBase + " --layout tp=1 --concurrency 8 --format json";
  const auto plain = run_meshplan(layout);
  const auto flagged = run_meshplan(layout + " " + flags);
  REQUIRE(plain.rc == 0);
  REQUIRE(flagged.rc == 0);
  return {nlohmann::json::parse(plain.out), nlohmann::json::parse(flagged.out)};
}

}  // namespace

TEST_CASE("serve: a fixed layout's JSON carries layout, throughput, latencies and memory") {
  const auto r = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& b = j["best"];
  CHECK(b["layout"]["tp"] == 1);
  CHECK(b["output_tokens_per_s"].get<double>() > 0);
  for (const char* k : {"mean", "p50", "p90", "p99"}) {
    CHECK(b["ttft_s"][k].get<double>() > 0);
    CHECK(b["tpot_s"][k].get<double>() > 0);
    CHECK(b["ttft_queue_s"][k].get<double>() >= 0);
    CHECK(b["ttft_queue_s"][k].get<double>() <= b["ttft_s"][k].get<double>());
  }
  CHECK(b["max_concurrency"].get<int64_t>() > 8);
  CHECK(b["kv_cache_tokens"].get<int64_t>() % 16 == 0);  // vLLM blocks of 16
  CHECK(b["memory"]["kv_bytes_per_token"] == 131072);    // 2·8·128·32·2
  CHECK(b["step_time"]["decode"]["total_s"].get<double>() > 0);
}

TEST_CASE("serve --ops lists the best layout's decode step op by op, summing to the step") {
  const auto [plain, ops] = plain_and("--ops");
  CHECK(!plain["best"]["step_time"].contains("decode_ops"));
  const nlohmann::json& d = ops["best"]["step_time"]["decode_ops"];
  CHECK(d["total_s"] == ops["best"]["step_time"]["decode"]["total_s"]);
  CHECK(d["dense"][0]["name"] == "qkv");
  CHECK(d["moe"].empty());
  double sum = d["attention_layer_s"].get<double>() * 32;
  for (const auto& op : d["dense"]) sum += op["seconds"].get<double>() * 32;
  for (const char* part : {"head", "host"})
    for (const auto& op : d[part]) sum += op["seconds"].get<double>();
  CHECK(sum == doctest::Approx(d["total_s"].get<double>()).epsilon(1e-12));
  const auto text = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --ops");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("the best layout's decode step (the line above) op by op:\n") !=
        std::string::npos);
  const auto md = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --ops --format md");
  REQUIRE(md.rc == 0);
  CHECK(md.out.find("\nThe best layout's decode step op by op:\n\n```\n  op by op: ") !=
        std::string::npos);
  // The report files carry no op table: --ops with --out is refused, not ignored.
  const auto out = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --ops --out ops-report");
  CHECK(out.rc == 2);
  CHECK(out.out.empty());
  CHECK(out.err ==
        "--ops: error: field 'ops': prints the decode step op by op beside the table, JSON or "
        "Markdown on standard output; --out writes report files instead: drop one\n");
}

TEST_CASE("serve: one-token answers have no TPOT: '-' in the table, null in JSON") {
  const std::string one =
      "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
      repo_path("topologies/dgx-h100-1n.yaml") +
      " --gpus 1 --isl 512 --osl 1 --requests 50 --layout tp=1 --request-rate 2";
  const auto json = run_meshplan(one + " --format json");
  REQUIRE(json.rc == 0);
  const nlohmann::json b = nlohmann::json::parse(json.out)["best"];
  CHECK(b["tpot_s"].is_null());
  CHECK(b["tokens_per_s_per_user"].is_null());
  CHECK(b["ttft_s"]["mean"].get<double>() > 0);
  const auto table = run_meshplan(one);
  REQUIRE(table.rc == 0);
  // The row: … tok/s/user "-", TTFT mean/p99, TPOT "-".
  CHECK(table.out.find("         -      ") != std::string::npos);
  CHECK(table.out.find("0.00/0.00") == std::string::npos);
  // A TPOT objective over one-token answers bounds nothing: refused.
  const auto slo = run_meshplan(one + " --slo-tpot 0.05");
  CHECK(slo.rc == 2);
  CHECK(slo.err.find("--slo-tpot") != std::string::npos);
  CHECK(slo.err.find("every answer is one token") != std::string::npos);
}

TEST_CASE("serve: a disaggregated layout's JSON names both pools, the KV transfer and flags") {
  const std::string base = "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                           repo_path("topologies/dgx-h100-1n.yaml") +
                           " --gpus 4 --isl 512 --osl 128 --requests 200 --concurrency 8";
  const auto r =
      run_meshplan(base + " --layout tp=2,prefill_tp=1,prefill_replicas=2 --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json b = nlohmann::json::parse(r.out)["best"];
  CHECK(b["gpus"] == 4);
  CHECK(b["disaggregated"]["prefill_tp"] == 1);
  CHECK(b["disaggregated"]["prefill_replicas"] == 2);
  CHECK(b["disaggregated"]["kv_transfer_s"].get<double>() > 0);
  for (const char* pool : {"prefill_pool_busy", "decode_pool_busy"}) {
    CHECK(b["disaggregated"][pool].get<double>() > 0);
    CHECK(b["disaggregated"][pool].get<double>() <= 1);
  }
  CHECK(b["disaggregated"]["prefill_memory"]["weight_bytes"].get<double>() >
        b["memory"]["weight_bytes"].get<double>());  // one GPU holds what two share
  CHECK(b["prefill_engine_flags"]["vllm"].get<std::string>().find("--tensor-parallel-size 1") !=
        std::string::npos);
  // The search adds splits only when asked; a trace of a disaggregated best layout is refused.
  const auto t = run_meshplan(base + " --layout tp=2,prefill_tp=1,prefill_replicas=2 --trace " +
                              "/tmp/meshplan-disagg-trace.json");
  CHECK(t.rc == 2);
  CHECK(t.err.find("traces cover one aggregated replica's steps only") != std::string::npos);
}

TEST_CASE("serve: --load-curve under a request rate replays rates up to the saturation") {
  const auto r = run_meshplan(kBase + " --layout tp=1 --request-rate 2 --load-curve --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json curve = nlohmann::json::parse(r.out)["load_curve"];
  REQUIRE(curve.size() == 7);  // the asked rate, five shares of the saturation, offline
  for (size_t i = 0; i + 1 < curve.size(); ++i) {
    CHECK(curve[i]["concurrency"] == 0);
    CHECK(curve[i]["request_rate_per_s"].get<double>() > 0);
  }
  CHECK(curve.back()["request_rate_per_s"] == 0);
  const auto t = run_meshplan(kBase + " --layout tp=1 --request-rate 2 --load-curve");
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("best layout against load (Poisson arrivals up to the saturation rate; last row "
                   "offline = saturation):") != std::string::npos);
}

TEST_CASE("serve: --load-curve replays the layout at doubling concurrency, then offline") {
  const auto r = run_meshplan(kBase + " --layout tp=1,max_batch=8 --load-curve --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json curve = nlohmann::json::parse(r.out)["load_curve"];
  REQUIRE(curve.size() == 5);  // 1, 2, 4, the cap 8, offline
  CHECK(curve[0]["concurrency"] == 1);
  CHECK(curve[3]["concurrency"] == 8);
  CHECK(curve[4]["concurrency"] == 0);
  // More load, more throughput and longer time per token, up to the cap.
  for (int i = 1; i < 4; ++i) {
    CHECK(curve[i]["output_tokens_per_s"].get<double>() >
          curve[i - 1]["output_tokens_per_s"].get<double>());
    CHECK(curve[i]["tpot_s"]["mean"].get<double>() >= curve[i - 1]["tpot_s"]["mean"].get<double>());
  }
}

TEST_CASE("serve: --weights auto evaluates BF16 and FP8 and labels each row") {
  const auto r =
      run_meshplan(kBase + " --layout tp=1 --concurrency 8 --weights auto --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["weights"] == "auto");
  // FP8 halves the weight reads of a small decode batch: it ranks first.
  CHECK(j["best"]["weights"] == "fp8");
  CHECK(j["best"]["engine_flags"]["vllm"].get<std::string>().find("--quantization fp8") !=
        std::string::npos);
  const auto table = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --weights auto");
  auto row = [&](const std::string& rank) {
    const size_t at = table.out.find("\n" + rank + "  tp1");
    return at == std::string::npos ? "" : table.out.substr(at, table.out.find('\n', at + 1) - at);
  };
  CHECK(row("1").find(" fp8 ") != std::string::npos);
  CHECK(row("2").find(" bf16 ") != std::string::npos);
}

TEST_CASE("serve: --search-mixed-chunk evaluates SGLang both ways and flags the mixed rows") {
  // Closed loop of 32 on one H100: SGLang's default prefill-first steps hold back a wave's
  // decodes behind its prompts; with --enable-mixed-chunk they ride along.
  const std::string base = kBase + " --layout tp=1 --concurrency 32 --engine sglang";
  const auto plain = run_meshplan(base + " --format json");
  const auto mixed = run_meshplan(base + " --enable-mixed-chunk --format json");
  const auto both = run_meshplan(base + " --search-mixed-chunk --format json");
  REQUIRE(plain.rc == 0);
  REQUIRE(mixed.rc == 0);
  REQUIRE(both.rc == 0);
  const nlohmann::json p = nlohmann::json::parse(plain.out)["best"];
  const nlohmann::json m = nlohmann::json::parse(mixed.out)["best"];
  const nlohmann::json b = nlohmann::json::parse(both.out);
  CHECK(p["mixed_chunk"] == false);
  CHECK(m["mixed_chunk"] == true);
  CHECK(m["ttft_s"]["mean"].get<double>() < p["ttft_s"]["mean"].get<double>());
  REQUIRE(b["ranked"].size() == 2);
  // Each searched row is the fixed run of its setting, and the flags follow the row.
  for (const nlohmann::json& row : b["ranked"]) {
    const nlohmann::json& same = row["mixed_chunk"] == true ? m : p;
    CHECK(row["output_tokens_per_s"] == same["output_tokens_per_s"]);
    CHECK(row["ttft_s"]["mean"] == same["ttft_s"]["mean"]);
  }
  const bool best_mixed = b["best"]["mixed_chunk"].get<bool>();
  CHECK((b["best"]["engine_flags"]["sglang"].get<std::string>().find("--enable-mixed-chunk") !=
         std::string::npos) == best_mixed);
}

TEST_CASE("serve: --load-curve replays the best row's own weight format") {
  const auto r = run_meshplan(kBase +
                              " --layout tp=1 --concurrency 8 --weights auto --load-curve "
                              "--format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["best"]["weights"] == "fp8");
  // The curve's point at the plan's own concurrency is the plan itself.
  bool found = false;
  for (const nlohmann::json& point : j["load_curve"])
    if (point["concurrency"] == 8) {
      found = true;
      CHECK(point["output_tokens_per_s"] == j["best"]["output_tokens_per_s"]);
    }
  CHECK(found);
}

TEST_CASE("serve: --max-step-tokens caps vLLM's batch, sizes the workspace and reaches the flags") {
  const auto [plain, capped] = plain_and("--max-step-tokens 512");
  const nlohmann::json& p = plain["best"];
  const nlohmann::json& c = capped["best"];
  CHECK(plain["max_step_tokens"] == 8192);  // vLLM's default
  CHECK(capped["max_step_tokens"] == 512);
  CHECK(c["layout"]["max_batch"] == 512);
  // A step of 512 tokens needs less activation workspace than one of 8,192: more cache.
  CHECK(c["kv_cache_tokens"].get<int64_t>() > p["kv_cache_tokens"].get<int64_t>());
  CHECK(c["engine_flags"]["vllm"].get<std::string>().find(
            "--max-num-seqs 512 --max-num-batched-tokens 512 ") != std::string::npos);
  const auto r = run_meshplan(kBase + " --layout tp=1,max_batch=1000 --max-step-tokens 512");
  CHECK(r.rc == 2);
  CHECK(r.err ==
        "--layout: error: field 'max_batch' = '1000': must be at most the step's tokens (512): "
        "vllm refuses a --max-num-seqs above --max-num-batched-tokens\n");
}

TEST_CASE("serve: the same inputs print the same bytes") {
  const std::string args = kBase + " --request-rate 4 --seed 3";
  CHECK(run_meshplan(args).out == run_meshplan(args).out);
}

TEST_CASE("serve: bad flag values exit 2 naming the flag and the rule") {
  auto r = run_meshplan(kBase + " --weights fp4");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--weights") != std::string::npos);
  r = run_meshplan(kBase + " --layout tp=3,pp=0");
  CHECK(r.rc == 2);
  CHECK(r.err ==
        "--layout:1:9: error: field 'pp' = '0': must be an integer between 1 and 10000000\n"
        "  tp=3,pp=0\n"
        "          ^\n");
  r = run_meshplan(kBase + " --layout tp=2");
  CHECK(r.rc == 2);
  CHECK(r.err ==
        "--layout: error: field 'replicas' = '1': tp × pp × replicas = 2 exceeds the 1 GPUs "
        "available\n");
  r = run_meshplan(kBase + " --concurrency 4 --request-rate 2");
  CHECK(r.rc == 2);
}

TEST_CASE("serve: a replay beyond 10^8 tokens is refused before it starts") {
  const auto r = run_meshplan("serve --model " + repo_path("models/llama3-8b.yaml") +
                              " --cluster " + repo_path("topologies/dgx-h100-1n.yaml") +
                              " --isl 100000 --osl 1000 --requests 2000");
  CHECK(r.rc == 2);
  CHECK(r.err ==
        "--requests: error: field 'requests' = '2000': requests × (isl + osl) = 202000000 tokens "
        "exceeds the 100000000 one replay handles; ask for fewer requests (a closed loop "
        "replays 10 × the concurrency)\n");
}

TEST_CASE("serve: a search beyond 10^10 replayed tokens is refused before it starts") {
  const auto r = run_meshplan("serve --model " + repo_path("models/llama3-8b.yaml") +
                              " --cluster " + repo_path("topologies/dgx-h100-1n.yaml") +
                              " --isl 10 --osl 10000 --requests 9000 --disaggregated");
  CHECK(r.rc == 2);
  CHECK(r.err.find("--requests: error: field 'requests' = '9000': the search would replay") == 0);
}

TEST_CASE("serve: a model whose weights leave no KV room on the layout is an input error") {
  const auto r = run_meshplan("serve --model " + repo_path("models/llama3-405b.yaml") +
                              " --cluster " + repo_path("topologies/dgx-h100-1n.yaml") +
                              " --isl 128 --osl 128 --layout tp=1,replicas=1");
  CHECK(r.rc == 2);
  // 256 tokens × 126 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 0.12 GiB; 810 GB of
  // weights on one GPU.
  CHECK(r.err.find("--layout: error: field 'layout' = 'tp=1,replicas=1': leaves no KV-cache room "
                   "for one request (256 tokens) at bf16 weights: per GPU of 79.6 GiB: weights "
                   "755.96 + activations ") == 0);
  CHECK(r.err.find("where one request takes 0.12 GiB: ") != std::string::npos);
}

TEST_CASE("serve: a search where nothing fits names the nearest layout and what would fit") {
  const std::string search = "serve --model " + repo_path("models/llama3-405b.yaml") +
                             " --cluster " + repo_path("topologies/dgx-h100-1n.yaml") +
                             " --isl 2000 --osl 500 --offline --requests 100";
  const auto r = run_meshplan(search);
  CHECK(r.rc == 0);
  CHECK(r.out.find("no layout fits: none leaves KV-cache room for one request (2512 tokens)\n"
                   "nearest: tp8 pp1 ep1 on 8 GPUs, bf16 weights; per GPU of 79.6 GiB: weights "
                   "94.50 + ") != std::string::npos);
  CHECK(
      r.out.find("what would make a layout fit (one replica of the fewest GPUs each):\n"
                 "  --weights int4: tp4 pp1 ep1 on 4 GPUs, int4 weights, bf16 KV cache, up to ") !=
      std::string::npos);
  CHECK(r.out.find("\n  --weights fp8: tp8 pp1 ep1 on 8 GPUs, fp8 weights, ") != std::string::npos);
  const auto json = run_meshplan(search + " --format json");
  REQUIRE(json.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["best"].is_null());
  CHECK(j["no_fit"]["nearest"]["gpus"] == 8);
  CHECK(j["no_fit"]["nearest"]["request_kv_bytes"].get<double>() == 2512.0 * 64512);
  REQUIRE(j["no_fit"]["remedies"].size() == 2);
  CHECK(j["no_fit"]["remedies"][0]["flags"] == "--weights int4");
  CHECK(j["no_fit"]["remedies"][0]["gpus"] == 4);
  CHECK(j["no_fit"]["remedies"][1]["weights"] == "fp8");
}

TEST_CASE("serve: a shared prompt prefix is reported in JSON and raises throughput") {
  const auto [p, s] = plain_and("--prefix-tokens 400");
  CHECK(s["workload"]["prefix_tokens"] == 400);
  CHECK(s["best"]["prefix_reused_tokens"] == 400);  // 25 whole blocks of 16
  CHECK(s["best"]["prefix_shared_tokens"] == 400);
  CHECK(p["best"]["prefix_reused_tokens"] == 0);
  CHECK(s["best"]["ttft_s"]["mean"].get<double>() < p["best"]["ttft_s"]["mean"].get<double>());
  CHECK(s["best"]["output_tokens_per_s"].get<double>() >
        p["best"]["output_tokens_per_s"].get<double>());
}

TEST_CASE("serve: drawn lengths reach the JSON and the replay, the same seed the same bytes") {
  const std::string drawn = kBase + " --layout tp=1 --isl-stdev 128 --osl-stdev 32 --format json";
  const auto a = run_meshplan(drawn), again = run_meshplan(drawn);
  const auto fixed = run_meshplan(kBase + " --layout tp=1 --format json");
  const auto other_seed = run_meshplan(drawn + " --seed 7");
  REQUIRE(a.rc == 0);
  REQUIRE(fixed.rc == 0);
  CHECK(a.out == again.out);
  const nlohmann::json j = nlohmann::json::parse(a.out), f = nlohmann::json::parse(fixed.out);
  CHECK(j["workload"]["isl_stdev"] == 128.0);
  CHECK(j["workload"]["osl_stdev"] == 32.0);
  CHECK(f["workload"]["isl_stdev"] == 0.0);
  CHECK(j["best"]["ttft_s"]["p99"] != f["best"]["ttft_s"]["p99"]);
  CHECK(nlohmann::json::parse(other_seed.out)["best"]["ttft_s"] != j["best"]["ttft_s"]);
  // Disaggregated pools take drawn lengths too.
  const auto d = run_meshplan("serve --model " + repo_path("models/llama3-8b.yaml") +
                              " --cluster " + repo_path("topologies/dgx-h100-1n.yaml") +
                              " --gpus 4 --isl 512 --osl 128 --isl-stdev 100 --requests 100 " +
                              "--layout tp=2,prefill_tp=1,prefill_replicas=2 --format json");
  CHECK(d.rc == 0);
}

TEST_CASE(
    "serve: under an open loop TensorRT-LLM's front end adds 8 ms to every TTFT statistic and "
    "nothing else, vLLM's is not priced, and --front-end-latency sets it") {
  // Open loop: the engine sees the same arrivals either way (a closed loop's successors come the
  // front end's time later: request_replay_test).
  const std::string trt = kBase + " --layout tp=1 --request-rate 4 --engine trtllm --format json";
  const auto preset = run_meshplan(trt), none = run_meshplan(trt + " --front-end-latency 0"),
             vllm = run_meshplan(kBase + " --layout tp=1 --request-rate 4 --format json"),
             vllm_set = run_meshplan(kBase +
                                     " --layout tp=1 --request-rate 4 --format json "
                                     "--front-end-latency 0.05");
  REQUIRE(preset.rc == 0);
  REQUIRE(none.rc == 0);
  REQUIRE(vllm.rc == 0);
  REQUIRE(vllm_set.rc == 0);
  const nlohmann::json p = nlohmann::json::parse(preset.out)["best"],
                       n = nlohmann::json::parse(none.out)["best"],
                       v = nlohmann::json::parse(vllm.out)["best"],
                       s = nlohmann::json::parse(vllm_set.out)["best"];
  CHECK(p["ttft_front_end_s"] == 0.008);
  CHECK(n["ttft_front_end_s"] == 0.0);
  CHECK(v["ttft_front_end_s"] == 0.0);
  CHECK(s["ttft_front_end_s"] == 0.05);
  for (const char* k : {"mean", "p50", "p90", "p99"}) {
    CHECK(p["ttft_s"][k].get<double>() ==
          doctest::Approx(n["ttft_s"][k].get<double>() + 0.008).epsilon(1e-12));
    CHECK(s["ttft_s"][k].get<double>() ==
          doctest::Approx(v["ttft_s"][k].get<double>() + 0.05).epsilon(1e-12));
    CHECK(p["ttft_queue_s"][k] == n["ttft_queue_s"][k]);
    CHECK(p["tpot_s"][k] == n["tpot_s"][k]);
  }
  CHECK(p["output_tokens_per_s"] == n["output_tokens_per_s"]);
}

TEST_CASE("serve: offline with a TTFT objective says why no layout meets it and names the loads") {
  // 200 requests at once on one GPU: the last waits for most of the others, far past 0.5 s.
  const auto offline = run_meshplan(kBase + " --layout tp=1 --slo-ttft 0.5");
  REQUIRE(offline.rc == 0);
  CHECK(offline.out.find("offline, every request arrives at once: its TTFT is mostly its wait in "
                         "the queue (mean ") != std::string::npos);
  CHECK(offline.out.find("so no layout meets TTFT ≤ 0.5 s; give the load to plan for: "
                         "--concurrency (requests in flight) or --request-rate") !=
        std::string::npos);
  const auto closed = run_meshplan(kBase + " --layout tp=1 --slo-ttft 0.5 --concurrency 4");
  REQUIRE(closed.rc == 0);
  CHECK(closed.out.find("offline, every request") == std::string::npos);
}

namespace {

// "tp2 pp1 ep1 x1 b1024": the table's short form of a JSON layout.
std::string short_name(const nlohmann::json& l) {
  return fmt::format("tp{} pp{} ep{} x{} b{}", l["tp"].get<int>(), l["pp"].get<int>(),
                     l["ep"].get<int>(), l["replicas"].get<int>(), l["max_batch"].get<int>());
}

}  // namespace

TEST_CASE("serve: a search where no layout meets the SLO names the nearest and the GPUs it needs") {
  // llama3-8b decodes a token in some 6-9 ms at concurrency 8 on one or two GPUs (never 5 ms),
  // in under 5 ms at tp 4.
  const std::string search = "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                             repo_path("topologies/dgx-h100-1n.yaml") +
                             " --gpus 2 --isl 512 --osl 128 --requests 200 --concurrency 8";
  const auto r = run_meshplan(search + " --slo-tpot 0.005 --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& best = j["best"];
  CHECK_FALSE(best["meets_slo"].get<bool>());
  const double p99_ms = 1e3 * best["tpot_s"]["p99"].get<double>();
  REQUIRE(p99_ms > 5);
  // The search again on 4 GPUs: a layout there meets it.
  const nlohmann::json& more = j["more_gpus"];
  CHECK(more["stop"] == "met");
  CHECK(more["gpus"] == 4);
  const nlohmann::json& found = more["best"];
  CHECK(found["meets_slo"].get<bool>());
  CHECK(1e3 * found["tpot_s"]["p99"].get<double>() <= 5);
  const auto t = run_meshplan(search + " --slo-tpot 0.005");
  REQUIRE(t.rc == 0);
  const int64_t gpus = best["gpus"].get<int64_t>();
  const double looser_percent = 100 * (best["slo_scale"].get<double>() - 1);
  CHECK(looser_percent > 0);
  const int64_t found_gpus = found["gpus"].get<int64_t>();
  CHECK(t.out.find(fmt::format(
            "no layout on up to 2 GPUs meets the SLO; the rows are ranked by how near they "
            "come: the nearest, {} on {} GPU{}, serves 0% of requests within it (it meets "
            "objectives {:.1f}% looser: TPOT p99 {:.2f} ms > 5 ms); on up to 4 GPUs {} meets it "
            "on {} ({:.1f} tok/s/GPU): --gpus {}, or a looser objective\n",
            short_name(best["layout"]), gpus, gpus == 1 ? "" : "s", looser_percent, p99_ms,
            short_name(found["layout"]), found_gpus,
            found["output_tokens_per_s_per_gpu"].get<double>(), found_gpus)) != std::string::npos);
  // 1 ms a token: not on any of the cluster's 8 GPUs, each doubling nearer.
  const auto never = run_meshplan(search + " --slo-tpot 0.001 --format json");
  REQUIRE(never.rc == 0);
  const nlohmann::json none = nlohmann::json::parse(never.out)["more_gpus"];
  CHECK(none["stop"] == "cluster");
  CHECK(none["gpus"] == 8);
  CHECK_FALSE(none["best"]["meets_slo"].get<bool>());
  // Where a layout meets it, or for a fixed layout, no such line and no search on more GPUs.
  const auto met = run_meshplan(search + " --slo-tpot 0.05 --format json");
  REQUIRE(met.rc == 0);
  CHECK_FALSE(nlohmann::json::parse(met.out).contains("more_gpus"));
  const auto fixed = run_meshplan(search + " --layout tp=1 --slo-tpot 0.005");
  REQUIRE(fixed.rc == 0);
  CHECK(fixed.out.find("no layout on up to") == std::string::npos);
}

TEST_CASE("serve: replicas beyond a total concurrency stay idle and add no throughput") {
  // Two requests in flight: two tp1 replicas serve one each; four serve the same two, the other
  // two idle (each replica's replay keeps a request in flight: they were counted four).
  const std::string base =
      "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
      repo_path("topologies/dgx-h100-1n.yaml") +
      " --isl 512 --osl 128 --concurrency 2 --format json --layout tp=1,replicas=";
  const auto two = run_meshplan(base + "2");
  const auto four = run_meshplan(base + "4");
  REQUIRE(two.rc == 0);
  REQUIRE(four.rc == 0);
  const nlohmann::json a = nlohmann::json::parse(two.out)["best"];
  const nlohmann::json b = nlohmann::json::parse(four.out)["best"];
  CHECK(b["output_tokens_per_s"] == a["output_tokens_per_s"]);
  CHECK(b["output_tokens_per_s_per_gpu"].get<double>() ==
        doctest::Approx(a["output_tokens_per_s_per_gpu"].get<double>() / 2));
  CHECK(b["tpot_s"]["mean"] == a["tpot_s"]["mean"]);
}

TEST_CASE(
    "serve: --load-curve under an SLO marks each load's share within it and the highest met") {
  const auto r = run_meshplan(kBase +
                              " --layout tp=1,replicas=1 --concurrency 8 --load-curve --slo-tpot "
                              "0.012 --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json curve = nlohmann::json::parse(r.out)["load_curve"];
  REQUIRE(curve.size() >= 3);
  bool met = false, missed = false;
  for (const nlohmann::json& point : curve) {
    const double share = point["slo_attainment"].get<double>();
    CHECK(point["meets_slo"].get<bool>() == (share >= 0.99));
    met = met || point["meets_slo"].get<bool>();
    missed = missed || !point["meets_slo"].get<bool>();
  }
  CHECK(met);  // one sequence decodes well within 12 ms a token; the full batch does not
  CHECK(missed);
  const auto t = run_meshplan(kBase +
                              " --layout tp=1,replicas=1 --concurrency 8 --load-curve "
                              "--slo-tpot 0.012");
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("TPOT p50/p99 ms  in SLO\n") != std::string::npos);
  CHECK(t.out.find("highest load on the curve within the SLO: concurrency ") != std::string::npos);
  CHECK(t.out.find(" per replica), ") != std::string::npos);
}

TEST_CASE("serve: under a request rate the best layout is also replayed with 10% longer steps") {
  const auto r = run_meshplan(kBase + " --layout tp=1 --request-rate 2 --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& s = j["slower_steps"];
  CHECK(s["fraction"] == 0.1);
  CHECK(s["ttft_s"]["p99"].get<double>() > j["best"]["ttft_s"]["p99"].get<double>());
  CHECK(s["meets_slo"] == true);
  // How near the layout runs to what it sustains: the offered rate over the saturation rate.
  const nlohmann::json& b = j["best"];
  CHECK(b["utilization"].get<double>() ==
        doctest::Approx(2 / b["saturation_requests_per_s"].get<double>()));
  CHECK(b["utilization"].get<double>() < 1);
  const auto t = run_meshplan(kBase + " --layout tp=1 --request-rate 2 --slowdown 0.2");
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("load: 2.00 requests/s, ") != std::string::npos);
  // The table's load column: the same share, rounded.
  CHECK(t.out.find("meets  load") != std::string::npos);
  CHECK(t.out.find("20% slower steps (every step and KV transfer 1.2× the predicted") !=
        std::string::npos);
  // Offline without an SLO every time is simply longer: nothing replayed; --slowdown 0: none.
  for (const char* flags : {" --layout tp=1 --offline --format json",
                            " --layout tp=1 --request-rate 2 --slowdown 0 --format json"}) {
    const auto o = run_meshplan(kBase + flags);
    REQUIRE(o.rc == 0);
    CHECK(!nlohmann::json::parse(o.out).contains("slower_steps"));
  }
}

TEST_CASE("serve: --slo-margin names the margin in the SLO and the rows it fails") {
  const auto r =
      run_meshplan(kBase + " --layout tp=1 --request-rate 30 --slo-tpot 0.02 --slo-margin 0.1");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("TPOT ≤ 20 ms for 99% of requests, also with every step 10% longer") !=
        std::string::npos);
  // TPOT p99 18.94 ms as predicted, 22.45 ms with 10% longer steps.
  CHECK(r.out.find("100%  no: margin") != std::string::npos);
  // The replay shown is at the margin unless --slowdown says otherwise.
  CHECK(r.out.find("10% slower steps") != std::string::npos);
  const auto wider =
      run_meshplan(kBase + " --layout tp=1 --request-rate 30 --slo-tpot 0.02 --slo-margin 0.2");
  REQUIRE(wider.rc == 0);
  CHECK(wider.out.find("20% slower steps") != std::string::npos);
  const auto j = run_meshplan(kBase +
                              " --layout tp=1 --request-rate 30 --slo-tpot 0.02 --slo-margin 0.1 "
                              "--format json");
  REQUIRE(j.rc == 0);
  const nlohmann::json best = nlohmann::json::parse(j.out)["best"];
  CHECK(best["misses_slo_margin"] == true);
  CHECK(best["meets_slo"] == false);
}

TEST_CASE("serve: --gpu-hour-cost prices each layout per million output tokens") {
  const auto r =
      run_meshplan(kBase + " --layout tp=1 --concurrency 8 --gpu-hour-cost 2.5 " + "--format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json b = nlohmann::json::parse(r.out)["best"];
  // One GPU at 2.50 USD an hour over its output tokens/s.
  CHECK(b["usd_per_million_output_tokens"].get<double>() ==
        doctest::Approx(2.5 / 3600 / b["output_tokens_per_s"].get<double>() * 1e6));
  const auto t = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --gpu-hour-cost 2.5");
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("meets  $/Mtok") != std::string::npos);
  // Without a price no cost is printed.
  const auto plain = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --format json");
  REQUIRE(plain.rc == 0);
  CHECK(!nlohmann::json::parse(plain.out)["best"].contains("usd_per_million_output_tokens"));
}

TEST_CASE("serve: MXFP4 weights of a model without routed experts are refused, not served BF16") {
  const auto r = run_meshplan(kBase + " --layout tp=1 --concurrency 8 --weights mxfp4");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--weights: error: field 'weights' = 'mxfp4': holds a MoE model's routed experts in MXFP4 "
        "and every other weight in BF16 (the gpt-oss checkpoints' format); llama3-8b has no "
        "routed experts: use int4 or fp8\n");
}

TEST_CASE("serve: gpt-oss-120b in MXFP4 fits one H100 beside its KV cache") {
  const auto r =
      run_meshplan("serve --model " + repo_path("tests/data/hf/gpt-oss-120b.json") + " --cluster " +
                   repo_path("topologies/dgx-h100-1n.yaml") +
                   " --gpus 1 --isl 2000 --osl 500 --concurrency 16 --weights mxfp4 --format json");
  REQUIRE(r.rc == 0);
  const nlohmann::json best = nlohmann::json::parse(r.out)["best"];
  CHECK(best["memory"]["weight_bytes"].get<double>() == 65'248'811'136.0);
  CHECK(best["weights"] == "mxfp4");
  CHECK(best["max_concurrency"].get<int64_t>() >= 16);
}

TEST_CASE("serve: requests past the model's context window are refused, the longest is passed on") {
  const std::string llama2 = "serve --model " + repo_path("models/llama2-70b.yaml") +
                             " --cluster " + repo_path("topologies/dgx-h100-1n.yaml");
  // Llama 2's 4,096 positions: 4,000 + 97 is one too many, 4,000 + 96 fits.
  auto r = run_meshplan(llama2 + " --isl 4000 --osl 97 --requests 10");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--isl: error: field 'isl' = '4000': with --osl 97 a request holds 4097 tokens; "
        "llama2-70b's context window is 4096 tokens (its context_tokens), and vLLM, SGLang and "
        "TensorRT-LLM refuse a longer request\n");
  r = run_meshplan(llama2 + " --isl 4000 --osl 96 --requests 10 --layout tp=8");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find(" --block-size 16 --max-model-len 4096") != std::string::npos);
  CHECK(r.out.find(" --page-size 1 --context-length 4096") != std::string::npos);
  CHECK(r.out.find(" --max_num_tokens 8192 --max_seq_len 4096 ") != std::string::npos);
  // A spread: its longest request decides, and the count of those over is given.
  r = run_meshplan(llama2 + " --isl 3000 --osl 500 --isl-stdev 400 --requests 100");
  CHECK(r.rc == 2);
  CHECK(r.err.rfind("--isl-stdev: error: field 'isl-stdev' = '400': ", 0) == 0);
  CHECK(r.err.find("refuse a longer request: ") != std::string::npos);
  CHECK(r.err.find(" of the 100 requests replayed are longer (the longest holds ") !=
        std::string::npos);
  CHECK(r.err.ends_with("; narrow the spread or shorten --isl/--osl\n"));
}
