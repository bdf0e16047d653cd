// Chrome Trace Event JSON of simulated pipelines.
#include "simulator/trace_json.h"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "simulator/pipeline_simulation.h"

namespace meshplan::sim {
namespace {

PipelineSimulation simulated(Schedule s, int vpp) {
  PipelineProblem p;
  p.pp = 4;
  p.vpp = vpp;
  p.micro_batches = 8;
  p.schedule = s;
  p.p2p_s = 0.1e-3;
  p.optimizer_s = 1e-3;
  for (int c = 0; c < 4 * vpp; ++c)
    p.chunks.push_back(ChunkCosts{1.1e-3 * (1 + c % 3), 1.3e-3, 0.7e-3, 0.2e-3, 0.9e-3, 0.3e-3});
  Result<PipelineSimulation> r = simulate_pipeline(p);
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE(
    "the trace is valid JSON whose X events have non-negative durations and never overlap "
    "on one stream") {
  for (auto [schedule, vpp] : {std::pair{Schedule::one_f_one_b, 1},
                               {Schedule::zb_h1, 1},
                               {Schedule::interleaved, 2},
                               {Schedule::gpipe, 1}}) {
    const PipelineSimulation sim = simulated(schedule, vpp);
    const nlohmann::json trace =
        nlohmann::json::parse(chrome_trace_json(sim.pipeline.graph, sim.timeline));
    REQUIRE(trace.contains("traceEvents"));
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_thread;
    int x_events = 0;
    for (const nlohmann::json& e : trace["traceEvents"]) {
      if (e["ph"] != "X") continue;
      ++x_events;
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e["name"].is_string());
      const double ts = e["ts"].get<double>();
      by_thread[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
          {ts, ts + e["dur"].get<double>()});
    }
    CHECK(x_events == sim.pipeline.graph.op_count());
    for (auto& [thread, spans] : by_thread) {
      std::sort(spans.begin(), spans.end());
      for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second - 1e-9);
    }
  }
}

TEST_CASE("every event has a category: compute or comm with its kind, __metadata for names") {
  const PipelineSimulation sim = simulated(Schedule::one_f_one_b, 1);
  const nlohmann::json trace =
      nlohmann::json::parse(chrome_trace_json(sim.pipeline.graph, sim.timeline));
  std::map<std::string, int> by_category;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    REQUIRE(e.contains("cat"));
    ++by_category[e["cat"].get<std::string>()];
    if (e["ph"] == "M") CHECK(e["cat"] == "__metadata");
  }
  // 4 stages x 8 micro-batches of forwards and of backwards; p2p sends between stages.
  CHECK(by_category["compute,forward"] == 32);
  CHECK(by_category["compute,backward"] == 32);
  CHECK(by_category["comm,p2p"] > 0);
  CHECK(by_category["compute,optimizer"] == 4);
}

TEST_CASE("the trace names every stage and every used stream") {
  const PipelineSimulation sim = simulated(Schedule::one_f_one_b, 1);
  const nlohmann::json trace =
      nlohmann::json::parse(chrome_trace_json(sim.pipeline.graph, sim.timeline));
  int processes = 0, threads = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") ++processes;
    if (e["name"] == "thread_name") ++threads;
  }
  CHECK(processes == 4);
  // compute, send-forward, send-backward, dp and zero3 on every stage, except the last stage's
  // send-forward and the first stage's send-backward, which carry nothing.
  CHECK(threads == 4 * 5 - 2);
  CHECK(
      trace["traceEvents"][0] ==
      nlohmann::json::parse(
          R"({"name":"process_name","cat":"__metadata","ph":"M","pid":0,"tid":0,"args":{"name":"stage 0"}})"));
}

TEST_CASE("the trace of one operation is pinned byte for byte") {
  OperationGraph g;
  const StreamId s = g.add_stream("compute", 2);
  g.add_op(s, 1.5e-3, OpTags{OpKind::forward, 2, 6, 3});
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  CHECK(chrome_trace_json(g, *t) ==
        R"({"traceEvents":[)"
        R"({"name":"process_name","cat":"__metadata","ph":"M","pid":2,"tid":0,)"
        R"("args":{"name":"stage 2"}},)"
        R"({"name":"thread_name","cat":"__metadata","ph":"M","pid":2,"tid":0,)"
        R"("args":{"name":"compute"}},)"
        R"({"name":"F3.c6","cat":"compute,forward","ph":"X","ts":0.0,"dur":1500.0,"pid":2,"tid":0,)"
        R"("args":{"kind":"forward","op":0,"chunk":6,"micro_batch":3}}]})");
}

TEST_CASE(
    "times are written in whole nanoseconds as microseconds, trailing zeros dropped, and each "
    "event ends where the next on its stream begins") {
  OperationGraph g;
  const StreamId s = g.add_stream("compute", 0);
  g.add_op(s, 1.2345678e-3, OpTags{OpKind::forward, 0, 0, 0});  // 1,234,567.8 ns
  g.add_op(s, 0.12e-6, OpTags{OpKind::forward, 0, 0, 1});       // 120 ns
  g.add_op(s, 0.005e-6, OpTags{OpKind::forward, 0, 0, 2});      // 5 ns
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  const std::string trace = chrome_trace_json(g, *t);
  CHECK(trace.find(R"("ts":0.0,"dur":1234.568,)") != std::string::npos);
  CHECK(trace.find(R"("ts":1234.568,"dur":0.12,)") != std::string::npos);
  CHECK(trace.find(R"("ts":1234.688,"dur":0.005,)") != std::string::npos);
  CHECK(nlohmann::ordered_json::parse(trace).dump() == trace);
}

TEST_CASE(
    "the streamed trace is nlohmann::json's own compact dump of the document, byte for byte") {
  for (auto [schedule, vpp] : {std::pair{Schedule::interleaved, 2}, {Schedule::zb_h1, 1}}) {
    const PipelineSimulation sim = simulated(schedule, vpp);
    std::ostringstream streamed;
    write_chrome_trace(streamed, sim.pipeline.graph, sim.timeline);
    CHECK(nlohmann::ordered_json::parse(streamed.str()).dump() == streamed.str());
    CHECK(streamed.str() == chrome_trace_json(sim.pipeline.graph, sim.timeline));
  }
}

TEST_CASE(
    "names that need escapes, and a trace of many blocks with a name longer than a block, are "
    "nlohmann::json's own dump byte for byte") {
  OperationGraph g;
  const StreamId s = g.add_stream("tab\there \"quoted\" back\\slash", 1);
  g.add_op(s, 1e-3, OpTags{OpKind::forward, 1, 0, 0}, "quote \" backslash \\ newline \n bell \a");
  g.add_op(s, 2e-3, OpTags{OpKind::backward, 1, 0, 0}, std::string(100'000, 'x'));
  for (int i = 0; i < 3000; ++i) g.add_op(s, 1e-6 * i, OpTags{OpKind::forward, 1, i % 7, i});
  Result<Timeline> t = simulate(g);
  REQUIRE(t.ok());
  std::ostringstream streamed;
  write_chrome_trace(streamed, g, *t);
  const std::string trace = streamed.str();
  CHECK(trace.size() > 3 * 64 * 1024);
  CHECK(nlohmann::ordered_json::parse(trace).dump() == trace);
  CHECK(trace == chrome_trace_json(g, *t));
  CHECK(trace.find(R"("name":"quote \" backslash \\ newline \n bell \u0007")") !=
        std::string::npos);
  CHECK(trace.find(R"("name":"tab\there \"quoted\" back\\slash")") != std::string::npos);
  CHECK(trace.find(R"("name":"F2999.c3","cat":"compute,forward")") != std::string::npos);
}

TEST_CASE("the trace is deterministic") {
  const PipelineSimulation a = simulated(Schedule::interleaved, 2);
  const PipelineSimulation b = simulated(Schedule::interleaved, 2);
  CHECK(chrome_trace_json(a.pipeline.graph, a.timeline) ==
        chrome_trace_json(b.pipeline.graph, b.timeline));
}

}  // namespace
}  // namespace meshplan::sim
