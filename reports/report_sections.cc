#include "reports/report_sections.h"

#include <fmt/format.h>

#include "core/attention_span.h"
#include "core/units.h"
#include "planner/profile_lookup.h"
#include "reports/text_format.h"

namespace meshplan {
namespace {

using units::kGiB;

std::string pct(double f) { return fmt::format("{:.1f}%", 100 * f); }
std::string ms(double s) { return fmt::format("{:.1f}", s * 1e3); }

std::string model_table(const ReportData& d) {
  const ModelSpec& m = d.model;
  std::vector<std::vector<std::string>> rows = {
      {"parameters", fmt::format("{} ({})", with_commas(d.params_total),
                                 short_count(static_cast<double>(d.params_total)))},
      {"layers", std::to_string(m.layers)},
      {"hidden", std::to_string(m.hidden)},
      {"attention heads (KV heads)", fmt::format("{} ({})", m.heads, m.kv_heads)},
      {"head dim", std::to_string(m.head_dim)},
      {"FFN hidden", std::to_string(m.ffn_hidden)},
      {"vocabulary", std::to_string(m.vocab)},
      {"MLP, norm, attention",
       fmt::format("{}, {}, {}", to_string(m.mlp), to_string(m.norm), to_string(m.attention))}};
  if (m.window) {
    const bool chunked = m.window->kind == WindowKind::chunked;
    rows.push_back({"local attention", fmt::format("{} of {} tokens on {} of {} layers",
                                                   chunked ? "chunks" : "sliding window",
                                                   m.window->tokens, local_layers(m), m.layers)});
  }
  if (m.sparse_attention)
    rows.push_back(
        {"sparse attention",
         fmt::format("top {} keys per query, indexer of {} heads × {}", m.sparse_attention->top_k,
                     m.sparse_attention->index_heads, m.sparse_attention->index_head_dim)});
  if (m.moe) {
    rows.push_back(
        {"experts", fmt::format("{} routed, top-{}, {} shared, width {}", m.moe->experts,
                                m.moe->top_k, m.moe->shared_experts, m.moe->expert_ffn_hidden)});
  }
  return markdown_table({fmt::format("model: {}", m.name), ""}, rows);
}

std::string cluster_table(const ReportData& d) {
  const ClusterSpec& c = d.cluster;
  std::string out = fmt::format(
      "Cluster **{}**: {} of its {} GPUs ({} nodes × {}), {} ({:.0f} dense bf16 TFLOP/s, {:.0f} "
      "GiB "
      "HBM at {:.2f} TB/s).\n\n",
      c.name, with_commas(d.gpus), with_commas(c.gpus()), c.nodes, c.gpus_per_node, c.gpu.name,
      c.gpu.peak_bf16_flops_per_s / 1e12, static_cast<double>(c.gpu.hbm_bytes) / kGiB,
      c.gpu.hbm_bytes_per_s / 1e12);
  std::vector<std::vector<std::string>> rows;
  for (const NetworkLevel& l : c.network) {
    rows.push_back(
        {l.name, with_commas(l.span), fmt::format("{:.0f}", l.bandwidth_bytes_per_s / 1e9),
         fmt::format("{:.0f}", l.latency_s * 1e6), fmt::format("{:.1f}", l.oversubscription)});
  }
  return out + markdown_table({"network level", "span (GPUs)", "GB/s per GPU", "latency µs",
                               "oversubscription"},
                              rows);
}

std::string profile_text(const CalibrationProfile& p) {
  const Provenance& v = p.provenance;
  std::string out =
      fmt::format("Calibration profile **{}**: {}", p.name.empty() ? "(none)" : p.name, v.how);
  if (!v.gpu.empty()) out += fmt::format(", {}", v.gpu);
  if (v.gpu_count > 0) out += fmt::format(", {} GPUs on {} nodes", v.gpu_count, v.nodes);
  for (const auto& [what, value] : {std::pair{"driver", v.driver},
                                    {"CUDA", v.cuda},
                                    {"cuBLAS", v.cublas},
                                    {"NCCL", v.nccl},
                                    {"date", v.date}})
    if (!value.empty()) out += fmt::format(", {} {}", what, value);
  out += ".\n\n";
  for (const std::string& s : v.sources) out += fmt::format("- source: {}\n", s);
  for (const std::string& n : p.notes) out += fmt::format("- note: {}\n", n);
  return out + "\n";
}

}  // namespace

std::string inputs_section(const ReportData& d) {
  std::string out = "## Inputs\n\n";
  out += model_table(d);
  out += "\n";
  out += cluster_table(d);
  out += "\n";
  const TrainingSpec& t = d.training;
  out += fmt::format("Training: {} sequences × {} tokens = {} tokens per step, {}.\n\n",
                     t.global_batch, t.seq_len, with_commas(t.global_batch * t.seq_len),
                     to_string(t.precision));
  return out + profile_text(d.profile);
}

std::string search_section(const ReportData& d) {
  const SearchResult& r = d.search;
  std::string out = fmt::format(
      "## Search\n\n{} layouts evaluated, {} fit in memory{} and were "
      "timed.\n\n",
      with_commas(r.evaluated), with_commas(r.feasible),
      r.launcher.empty() ? "" : ", launch with " + r.launcher + ",");
  if (!r.rejected.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [reason, n] : r.rejected) rows.push_back({reason, with_commas(n)});
    out += markdown_table({"rejected because", "layouts"}, rows) + "\n";
  }
  if (r.ranked.empty() && r.launcher_refused > 0) {
    out += fmt::format(
        "**{} layouts fit, but {} runs none of them.** `--any-launcher` ranks "
        "them.\n\n",
        with_commas(r.launcher_refused), r.launcher);
  } else if (r.ranked.empty()) {
    out += "**Nothing fits.**";
    if (r.smallest) {
      out += fmt::format(" The smallest peak is `{}` at {} of {}.", to_string(r.smallest->layout),
                         gib(r.smallest->peak_bytes), gib(r.smallest->capacity_bytes));
    }
    out += "\n\n";
  }
  return out;
}

std::string top_section(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  std::vector<Layout> layouts;
  for (const Estimate& e : d.search.ranked) layouts.push_back(e.layout);
  const std::vector<std::string> labels = distinguishing_labels(layouts);
  for (size_t i = 0; i < d.search.ranked.size(); ++i) {
    const Estimate& e = d.search.ranked[i];
    rows.push_back({std::to_string(i + 1), fmt::format("`{}`", labels[i]),
                    fmt::format("{:.1f} / {:.1f}", e.peak_bytes / kGiB, e.capacity_bytes / kGiB),
                    pct(e.bubble_fraction), ms(e.step_time_s),
                    e.simulated_step_s > 0 ? ms(e.simulated_step_s) : "-",
                    short_count(e.tokens_per_s), pct(e.mfu)});
  }
  std::string out =
      d.request.objective == Objective::memory
          ? fmt::format(
                "## Top {} layouts\n\nRanked by peak memory per GPU, lowest first "
                "(`--objective memory`); each simulated.\n\n",
                d.search.ranked.size())
          : fmt::format(
                "## Top {} layouts\n\nRanked by analytic {}, then the top {} re-ranked "
                "by simulated step time.\n\n",
                d.search.ranked.size(),
                d.request.objective == Objective::tokens_per_s ? "tokens/s" : "MFU",
                d.search.ranked.size());
  return out +
         markdown_table({"#", "layout", "peak / capacity GiB", "bubble", "analytic step ms",
                         "simulated step ms", "tokens/s", "MFU"},
                        rows) +
         "\n";
}

}  // namespace meshplan
