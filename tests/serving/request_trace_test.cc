// Request traces (--requests-file): the CSV forms, Azure timestamps, errors, and their replay.
#include "serving/request_trace.h"

#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/diagnostic.h"
#include "serving/request_replay.h"
#include "serving/serving_plan.h"
#include "tests/cli/run_meshplan.h"

using namespace meshplan;
using namespace meshplan::serving;

namespace {

RequestTrace parsed(const std::string& text) {
  Result<RequestTrace> r = parse_request_trace(text, "t.csv");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

std::string error(const std::string& text) {
  Result<RequestTrace> r = parse_request_trace(text, "t.csv");
  REQUIRE(!r.ok());
  REQUIRE(r.errors().size() == 1);
  return format_diagnostic(r.errors().front());
}

Workload traced(const std::vector<TracedRequest>& requests, LoadKind load) {
  Workload w;
  w.trace = std::make_shared<const std::vector<TracedRequest>>(requests);
  w.isl = w.osl = 1;
  w.load = load;
  return w;
}

}  // namespace

TEST_CASE("trace: the Azure columns, arrivals counted from the first request in nanoseconds") {
  const RequestTrace t = parsed(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:50.9951690,396,109\r\n"
      "\r\n"
      "2023-11-16 18:16:00.0000001,879,55\r\n");
  REQUIRE(t.requests.size() == 3);
  CHECK(t.timed);
  CHECK(t.requests[0].arrival_s == 0.0);
  CHECK(t.requests[1].arrival_s == doctest::Approx(4.314579).epsilon(1e-12));
  CHECK(t.requests[2].arrival_s == doctest::Approx(13.3194101).epsilon(1e-12));
  CHECK(t.requests[1].isl == 396);
  CHECK(t.requests[1].osl == 109);
}

TEST_CASE("trace: plain columns in any order, with or without arrival times") {
  const RequestTrace timed = parsed("osl, arrival_s ,isl\n10,0.5,100\n20,2.25,200\n");
  REQUIRE(timed.requests.size() == 2);
  CHECK(timed.requests[0].isl == 100);
  CHECK(timed.requests[0].osl == 10);
  CHECK(timed.requests[0].arrival_s == 0.0);
  CHECK(timed.requests[1].arrival_s == doctest::Approx(1.75));
  const RequestTrace untimed = parsed("isl,osl\n100,10\n");
  CHECK(!untimed.timed);
  CHECK(untimed.requests[0].arrival_s == 0.0);
}

TEST_CASE("trace: Azure timestamps against the calendar (leap days, fractions, ranges)") {
  int64_t ns = 0;
  REQUIRE(parse_trace_timestamp("2023-11-16 18:15:46.6805900", ns));
  CHECK(ns == 1'700'158'546'680'590'000);  // Python: datetime(2023,11,16,18,15,46,680590)
  REQUIRE(parse_trace_timestamp("1970-01-01 00:00:00", ns));
  CHECK(ns == 0);
  REQUIRE(parse_trace_timestamp("2024-02-29 00:00:00.5", ns));
  CHECK(ns == 1'709'164'800'500'000'000);
  CHECK(!parse_trace_timestamp("2023-02-29 00:00:00", ns));
  CHECK(!parse_trace_timestamp("2023-11-16 24:00:00", ns));
  CHECK(!parse_trace_timestamp("2023-11-16T18:15:46", ns));
  CHECK(!parse_trace_timestamp("2023-11-16 18:15:46.", ns));
  CHECK(!parse_trace_timestamp("2023-11-16 18:15:46.1234567890", ns));
  CHECK(!parse_trace_timestamp("1969-12-31 23:59:59", ns));
}

TEST_CASE("trace: a bad file gets one diagnostic naming line, column, field, value and rule") {
  CHECK(error("isl,osl,user\n1,2,3\n") ==
        "t.csv:1:9: error: field 'column' = 'user': is not a trace column; the columns are isl "
        "or ContextTokens, osl or GeneratedTokens, and optionally arrival_s or TIMESTAMP\n"
        "  isl,osl,user\n"
        "          ^");
  CHECK(error("isl,ContextTokens,osl\n").find("'ContextTokens': repeats a column already named") !=
        std::string::npos);
  CHECK(error("isl,arrival_s\n1,0\n").find("must name the prompt and answer columns") !=
        std::string::npos);
  CHECK(error("isl,osl\n1,2,3\n")
            .find("t.csv:2:1: error: has 3 fields; "
                  "the column line (1) names 2") == 0);
  CHECK(error("isl,osl\n1,0\n")
            .find("t.csv:2:3: error: field 'osl' = '0': must be an integer from 1 to 100000000 "
                  "tokens") == 0);
  CHECK(error("isl,osl\n1.5,2\n").find("field 'isl' = '1.5'") != std::string::npos);
  CHECK(error("isl,osl,arrival_s\n1,2,5\n1,2,4.5\n")
            .find("t.csv:3:5: error: field 'arrival' = '4.5': must not be before the arrival on "
                  "the line above") == 0);
  CHECK(error("isl,osl,arrival_s\n1,2,nan\n").find("field 'arrival_s' = 'nan'") !=
        std::string::npos);
  CHECK(error("TIMESTAMP,isl,osl\n2023-13-01 00:00:00,1,2\n")
            .find("field 'TIMESTAMP' = '2023-13-01 00:00:00': must be a time") !=
        std::string::npos);
  CHECK(error("") == "t.csv: error: is empty: the first line must name the columns");
  CHECK(error("isl,osl\n\n").find("t.csv:1:1: error: has no requests") == 0);
}

TEST_CASE("trace: Mooncake JSON Lines, timestamps in milliseconds and hash_ids read") {
  const RequestTrace t = parsed(
      "{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, "
      "\"hash_ids\": [46, 47]}\n"
      "\n"
      "{\"timestamp\": 30535, \"input_length\": 672, \"output_length\": 26, \"hash_ids\": []}\n");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.timed);
  CHECK(t.requests[0].arrival_s == 0.0);
  CHECK(t.requests[1].arrival_s == doctest::Approx(3.053));
  CHECK(t.requests[0].isl == 6955);
  CHECK(t.requests[1].osl == 26);
  const RequestTrace untimed = parsed("{\"input_length\": 5, \"output_length\": 7}\n");
  CHECK(!untimed.timed);
}

TEST_CASE("trace: a bad JSON Lines trace gets one diagnostic on its own line") {
  CHECK(error("{\"input_length\": 5, \"output_length\": 7}\n{\"input_length\": 5, "
              "\"output_length\": 7, \"prompt\": \"hi\"}\n")
            .find("t.csv:2:41: error: field 'prompt' = '\"hi\"': is not a trace field") == 0);
  CHECK(error("{\"input_length\": 5}\n")
            .find("t.csv:1:1: error: field 'output_length': is required but missing") == 0);
  CHECK(error("{\"input_length\": 5, \"output_length\": 0}\n")
            .find("field 'output_length' = '0': must be an integer from 1") != std::string::npos);
  CHECK(error("{\"timestamp\": 5, \"input_length\": 5, \"output_length\": 1}\n"
              "{\"input_length\": 5, \"output_length\": 1}\n")
            .find("t.csv:2:1: error: field 'timestamp': is missing where the lines above give "
                  "one") == 0);
  CHECK(error("{\"timestamp\": 5, \"input_length\": 5, \"output_length\": 1}\n"
              "{\"timestamp\": 4, \"input_length\": 5, \"output_length\": 1}\n")
            .find("field 'timestamp' = '4': must not be before") != std::string::npos);
  CHECK(error("{\"input_length\": 5, \"output_length\": 1, \"hash_ids\": 3}\n")
            .find("field 'hash_ids' = '3': must be a list of block hashes") != std::string::npos);
  CHECK(error("{\"input_length\": 5, \"output_length\": 1}\n"
              "{\"input_length\": 5, \"input_length\": 6, \"output_length\": 1}\n")
            .find("t.csv:2:21: error: field 'input_length': is given twice; the first is at "
                  "t.csv:2:2") == 0);
  CHECK(error("{\"input_length\": 5,\n").find("t.csv:1:") == 0);
  CHECK(error("{\"input_length\": 5, \"output_length\": 1}\n[1]\n")
            .find("t.csv:2:1: error: must be one JSON object per line") == 0);
}

TEST_CASE("trace: a replay takes the trace's arrivals and lengths") {
  // One-second steps, one at a time: request 0 (arrives 0) prompt step [0, 1], one more token
  // at 2; request 1 arrives at 5 (the replica idles from 2), prompt [5, 6], done at 6 (osl 1).
  ReplayLimits limits;
  limits.max_batch = 1;
  limits.kv_tokens = 1000;
  limits.tokens_per_request = 100;
  const Workload w = traced({{0, 30, 2}, {5, 40, 1}}, LoadKind::trace);
  CHECK(replay_request_count(w) == 2);
  const ReplayResult r = replay_requests(w, limits, [](const StepBatch&) { return 1.0; });
  REQUIRE(r.requests.size() == 2);
  CHECK(r.requests[0].finish_s == 2.0);
  CHECK(r.requests[1].arrival_s == 5.0);
  CHECK(r.requests[1].first_token_s == 6.0);
  CHECK(r.requests[1].finish_s == 6.0);
  CHECK(r.output_tokens_per_s == doctest::Approx(3.0 / 6));
  // --requests takes the first ones; offline, every traced request arrives at 0.
  Workload first = traced({{0, 30, 2}, {5, 40, 1}, {9, 50, 3}}, LoadKind::offline);
  first.requests = 2;
  CHECK(replay_request_count(first) == 2);
  CHECK(initial_arrivals(first, 2) == std::vector<double>{0, 0});
}

TEST_CASE("trace: replicas take the traced requests round robin") {
  const Workload w =
      traced({{0, 10, 1}, {1, 20, 1}, {2, 30, 1}, {3, 40, 1}, {4, 50, 1}}, LoadKind::trace);
  const Workload share = replica_workload(w, 2);
  REQUIRE(share.trace);
  REQUIRE(share.trace->size() == 3);
  CHECK((*share.trace)[1].isl == 30);
  CHECK((*share.trace)[2].arrival_s == 4.0);
  CHECK(replica_workload(w, 1).trace->size() == 5);
}

TEST_CASE("trace: serve replays the shipped Azure sample and reports its means") {
  using meshplan::testing::repo_path;
  const auto r = meshplan::testing::run_meshplan(
      "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
      repo_path("topologies/dgx-h100-1n.yaml") + " --gpus 1 --layout tp=1 --requests-file " +
      repo_path("tests/data/traces/azure_conv_2023_head100.csv") + " --format json");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("\"isl\": 802") != std::string::npos);  // 80,197 prompt tokens / 100
  CHECK(r.out.find("\"osl\": 171") != std::string::npos);  // 17,052 answer tokens / 100
  CHECK(r.out.find("\"load\": \"arrivals as traced\"") != std::string::npos);
}

TEST_CASE("trace: --trace-speedup divides the arrival times") {
  using meshplan::testing::repo_path;
  // Two requests 4 s apart, one at a time on an idle replica: 2× faster they arrive 2 s apart.
  const std::string file = "/tmp/meshplan-trace-speedup.csv";
  {
    std::ofstream out(file);
    out << "isl,osl,arrival_s\n100,2,10\n100,2,14\n";
  }
  const std::string base = "serve --model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                           repo_path("topologies/dgx-h100-1n.yaml") +
                           " --gpus 1 --layout tp=1 --format json --requests-file " + file;
  const auto as_traced = meshplan::testing::run_meshplan(base);
  const auto faster = meshplan::testing::run_meshplan(base + " --trace-speedup 2");
  REQUIRE(as_traced.rc == 0);
  REQUIRE(faster.rc == 0);
  const nlohmann::json a = nlohmann::json::parse(as_traced.out),
                       f = nlohmann::json::parse(faster.out);
  CHECK(f["workload"]["load"] == "arrivals as traced, 2× faster");
  CHECK(f["workload"]["trace_speedup"] == 2.0);
  // Throughput counts 4 answer tokens over first arrival to last finish: 4 s + the second
  // request's service as traced, 2 s + the same service 2× faster (the engine is unchanged).
  const double service_s = 4.0 / a["best"]["output_tokens_per_s"].get<double>() - 4.0;  // as traced
  CHECK(4.0 / f["best"]["output_tokens_per_s"].get<double>() == doctest::Approx(2.0 + service_s));
}
