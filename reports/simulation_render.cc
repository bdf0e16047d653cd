#include "reports/simulation_render.h"

#include <fmt/format.h>

#include "reports/text_format.h"
#include "simulator/text_gantt.h"

namespace meshplan {
namespace {

// Seconds of the critical path by operation kind, in OpKind order.
std::vector<std::pair<std::string, double>> critical_seconds_by_kind(
    const sim::PipelineSimulation& s) {
  std::vector<double> seconds(static_cast<size_t>(sim::OpKind::other) + 1, 0.0);
  for (sim::OpId id : s.result.critical_path) {
    const sim::Operation& op = s.pipeline.graph.op(id);
    seconds[static_cast<size_t>(op.tags.kind)] += op.duration_s;
  }
  std::vector<std::pair<std::string, double>> out;
  for (size_t k = 0; k < seconds.size(); ++k)
    if (seconds[k] > 0) out.emplace_back(sim::to_string(static_cast<sim::OpKind>(k)), seconds[k]);
  return out;
}

// The micro-batches in flight that the memory model assumed for `stage` (0 past its stages).
double memory_model_in_flight(const Estimate& a, int stage) {
  return stage < static_cast<int>(a.memory.stages.size())
             ? a.memory.stages[static_cast<size_t>(stage)].in_flight_micro_batches
             : 0;
}

}  // namespace

nlohmann::ordered_json simulation_json(const Estimate& a, const sim::PipelineSimulation& s) {
  const sim::SimulationResult& r = s.result;
  nlohmann::ordered_json j;
  j["layout"] = to_string(a.layout);
  j["analytic"] = {{"step_time_s", a.step_time_s}, {"bubble_fraction", a.bubble_fraction}};
  j["simulated"] = {{"step_time_s", r.step_s},
                    {"bubble_fraction", r.bubble_fraction},
                    {"ops", r.ops},
                    {"events", r.events},
                    {"critical_path_ops", r.critical_path.size()}};
  nlohmann::ordered_json by_kind = nlohmann::ordered_json::object();
  for (const auto& [kind, sec] : critical_seconds_by_kind(s)) by_kind[kind] = sec;
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (sim::OpId id : r.critical_path) names.push_back(sim::display_name(s.pipeline.graph.op(id)));
  j["simulated"]["critical_path"] = {{"seconds_by_kind", by_kind}, {"operations", names}};
  j["simulated"]["stages"] = nlohmann::ordered_json::array();
  for (const sim::StageSummary& st : r.stages) {
    const double model_in_flight = memory_model_in_flight(a, st.stage);
    j["simulated"]["stages"].push_back({{"stage", st.stage},
                                        {"compute_s", st.compute_s},
                                        {"recompute_s", st.recompute_s},
                                        {"exposed_comm_s", st.exposed_comm_s},
                                        {"idle_s", st.idle_s},
                                        {"bubble_fraction", st.bubble_fraction},
                                        {"peak_micro_batches", st.peak_micro_batches},
                                        {"peak_chunk_micro_batches", st.peak_chunk_micro_batches},
                                        {"memory_model_in_flight", model_in_flight}});
  }
  return j;
}

std::string simulation_table(const Estimate& a, const sim::PipelineSimulation& s, int width) {
  const sim::SimulationResult& r = s.result;
  std::string out = fmt::format(
      "layout   {}\nanalytic step {} (bubble {:.1f}%)   simulated step {} (bubble {:.1f}%)   "
      "difference {:+.2f}%\nsimulated {} operations, {} events; critical path {} operations:",
      short_label(a.layout), seconds(a.step_time_s), 100 * a.bubble_fraction, seconds(r.step_s),
      100 * r.bubble_fraction, 100 * (r.step_s - a.step_time_s) / a.step_time_s, r.ops, r.events,
      r.critical_path.size());
  for (const auto& [kind, sec] : critical_seconds_by_kind(s))
    out += fmt::format(" {} {}", kind, seconds(sec));
  out += "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const sim::StageSummary& st : r.stages) {
    const double model_in_flight = memory_model_in_flight(a, st.stage);
    rows.push_back({std::to_string(st.stage), seconds(st.compute_s), seconds(st.recompute_s),
                    seconds(st.exposed_comm_s), seconds(st.idle_s),
                    fmt::format("{:.1f}%", 100 * st.bubble_fraction),
                    fmt::format("{:.2f}", st.peak_micro_batches),
                    fmt::format("{:.2f}", model_in_flight)});
  }
  out += text_table({"stage", "compute", "of which recompute", "exposed comm", "idle", "bubble",
                     "peak in flight", "memory model"},
                    rows);
  out += '\n';
  out += sim::text_gantt(s.pipeline.graph, s.timeline, static_cast<int>(r.stages.size()), width);
  return out;
}

}  // namespace meshplan
