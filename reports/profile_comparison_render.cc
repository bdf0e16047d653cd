#include "reports/profile_comparison_render.h"

#include <fmt/format.h>

#include "reports/text_format.h"

namespace meshplan {

namespace {

nlohmann::ordered_json side_json(const std::string& name, const Provenance& p) {
  return {{"name", name}, {"how", p.how}, {"gpu", p.gpu}, {"date", p.date}};
}

nlohmann::ordered_json summary_json(const RatioSummary& s) {
  return {{"count", s.count},   {"geomean", s.geomean}, {"median", s.median},
          {"p10", s.p10},       {"p90", s.p90},         {"min", s.min},
          {"min_at", s.min_at}, {"max", s.max},         {"max_at", s.max_at}};
}

nlohmann::ordered_json scalar_json(const ScalarComparison& s) {
  return {{"name", s.name}, {"base", s.base}, {"other", s.other}, {"ratio", s.ratio()}};
}

std::string value(double v) { return v > 0 ? fmt::format("{:.4g}", v) : "-"; }
std::string ratio(double r) { return r > 0 ? fmt::format("{:.3f}", r) : "-"; }

std::string side_line(const std::string& role, const std::string& name, const Provenance& p) {
  return fmt::format("{}: {} ({}{}{})", role, name, p.how, p.gpu.empty() ? "" : ", " + p.gpu,
                     p.date.empty() ? "" : ", " + p.date);
}

std::vector<std::string> ratio_header(const std::string& first) {
  return {first, "base", "other", "common", "geomean", "median",
          "p10", "p90",  "min",   "at",     "max",     "at"};
}

std::vector<std::string> ratio_row(const std::string& what, int64_t base_count, int64_t other_count,
                                   const RatioSummary& s) {
  // With no ratio every summary figure is 0 and prints "-", the labels empty.
  return {what,
          std::to_string(base_count),
          std::to_string(other_count),
          std::to_string(s.count),
          ratio(s.geomean),
          ratio(s.median),
          ratio(s.p10),
          ratio(s.p90),
          ratio(s.min),
          s.min_at,
          ratio(s.max),
          s.max_at};
}

struct Tables {
  std::vector<std::vector<std::string>> scalars, samples;
};

Tables tables(const ProfileComparison& c) {
  Tables t;
  for (const ScalarComparison& s : c.scalars)
    t.scalars.push_back({s.name, value(s.base), value(s.other), ratio(s.ratio())});
  for (const GemmComparison& g : c.gemm) {
    t.scalars.push_back({"GEMM " + g.dtype + " " + g.max_efficiency.name,
                         value(g.max_efficiency.base), value(g.max_efficiency.other),
                         ratio(g.max_efficiency.ratio())});
    t.scalars.push_back({"GEMM " + g.dtype + " " + g.sustained_tflops.name,
                         value(g.sustained_tflops.base), value(g.sustained_tflops.other),
                         ratio(g.sustained_tflops.ratio())});
  }
  for (const GemmComparison& g : c.gemm) {
    t.samples.push_back(ratio_row("GEMM " + g.dtype + " (best algorithm)", g.base_samples,
                                  g.other_samples, g.throughput));
    t.samples.push_back(ratio_row("GEMM " + g.dtype + " (heuristic's choice)", g.base_samples,
                                  g.other_samples, g.heuristic));
  }
  for (const AttentionComparison& a : c.attention) {
    t.samples.push_back(ratio_row("attention " + a.kernel + " forward", a.base_samples,
                                  a.other_samples, a.forward));
    t.samples.push_back(ratio_row("attention " + a.kernel + " backward", a.base_samples,
                                  a.other_samples, a.backward));
  }
  for (const GemmModelComparison& g : c.gemm_model)
    t.samples.push_back(ratio_row("GEMM " + g.dtype + " priced on " + c.model_gpu + " (base/other)",
                                  g.speedup.count, g.speedup.count, g.speedup));
  t.samples.push_back(ratio_row("collective bus bandwidth", c.base_collectives, c.other_collectives,
                                c.collective_busbw));
  t.samples.push_back(ratio_row("collective latency (base/other)", c.base_collectives,
                                c.other_collectives, c.collective_latency));
  return t;
}

constexpr const char* kRatioNote =
    "ratios are other over base (above 1: other measured faster), at the samples both measured\n"
    "(GEMMs: same m x n x k; attention: same head dim, sequence length and mask; collectives: "
    "same collective, level and group size)";
constexpr const char* kModelNote =
    "priced on: the cost model's GEMM time from base over that from other (above 1: other prices "
    "them faster)\nat every shape either measured (samples, fallback curve, sustained cap and "
    "waves for that GPU)";

}  // namespace

nlohmann::ordered_json profile_comparison_json(const ProfileComparison& c) {
  nlohmann::ordered_json j;
  j["base"] = side_json(c.base_name, c.base_provenance);
  j["other"] = side_json(c.other_name, c.other_provenance);
  j["scalars"] = nlohmann::ordered_json::array();
  for (const ScalarComparison& s : c.scalars) j["scalars"].push_back(scalar_json(s));
  j["gemm"] = nlohmann::ordered_json::array();
  for (const GemmComparison& g : c.gemm)
    j["gemm"].push_back({{"dtype", g.dtype},
                         {"base_samples", g.base_samples},
                         {"other_samples", g.other_samples},
                         {"throughput", summary_json(g.throughput)},
                         {"heuristic", summary_json(g.heuristic)},
                         {"max_efficiency", scalar_json(g.max_efficiency)},
                         {"sustained_tflops", scalar_json(g.sustained_tflops)}});
  j["attention"] = nlohmann::ordered_json::array();
  for (const AttentionComparison& a : c.attention)
    j["attention"].push_back({{"kernel", a.kernel},
                              {"base_samples", a.base_samples},
                              {"other_samples", a.other_samples},
                              {"forward", summary_json(a.forward)},
                              {"backward", summary_json(a.backward)}});
  if (!c.model_gpu.empty()) {
    j["gemm_model"] = {{"gpu", c.model_gpu}, {"dtypes", nlohmann::ordered_json::array()}};
    for (const GemmModelComparison& g : c.gemm_model)
      j["gemm_model"]["dtypes"].push_back(
          {{"dtype", g.dtype}, {"speedup", summary_json(g.speedup)}});
  }
  j["collectives"] = {{"base_fits", c.base_collectives},
                      {"other_fits", c.other_collectives},
                      {"busbw", summary_json(c.collective_busbw)},
                      {"latency", summary_json(c.collective_latency)}};
  return j;
}

std::string profile_comparison_table(const ProfileComparison& c) {
  const Tables t = tables(c);
  std::string out = side_line("base", c.base_name, c.base_provenance) + "\n" +
                    side_line("other", c.other_name, c.other_provenance) + "\n\n";
  out += text_table({"value", "base", "other", "other/base"}, t.scalars);
  out += "\n";
  out += text_table(ratio_header("samples"), t.samples);
  out += std::string("\n") + kRatioNote + "\n";
  if (!c.model_gpu.empty()) out += std::string(kModelNote) + "\n";
  return out;
}

std::string profile_comparison_markdown(const ProfileComparison& c) {
  const Tables t = tables(c);
  std::string out = "# Calibration profiles compared\n\n- " +
                    side_line("base", c.base_name, c.base_provenance) + "\n- " +
                    side_line("other", c.other_name, c.other_provenance) + "\n\n";
  out += markdown_table({"value", "base", "other", "other/base"}, t.scalars);
  out += "\n";
  out += markdown_table(ratio_header("samples"), t.samples);
  out += std::string("\n") + kRatioNote + ".\n";
  if (!c.model_gpu.empty()) out += std::string("\n") + kModelNote + ".\n";
  return out;
}

}  // namespace meshplan
