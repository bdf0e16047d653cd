#include "reports/sweep_render.h"

#include <fmt/format.h>

#include <cmath>

#include "core/units.h"
#include "reports/estimate_render.h"
#include "reports/text_format.h"
#include "reports/training_time_render.h"

namespace meshplan {
namespace {

bool has_budget(const SweepRequest& r) { return r.tokens > 0; }
bool has_price(const SweepRequest& r) { return r.tokens > 0 && r.gpu_hour_cost_usd > 0; }

std::string dollars(double usd) {
  return fmt::format("${}", with_commas(static_cast<int64_t>(std::llround(usd))));
}

// "none: memory, 15.66 GiB over" / "none: divisibility": the layout cell of a row without one.
std::string no_layout_cell(const NoLayoutReason& r) {
  if (r.kind == NoLayoutKind::memory)
    return fmt::format("none: memory, {} over", gib(r.over_bytes()));
  return fmt::format("none: {}", to_string(r.kind));
}

std::vector<std::string> header(const SweepResult& s, const SweepRequest& request) {
  std::vector<std::string> h;
  if (s.axis == SweepAxis::seq_len) h.push_back("seq len");
  for (const char* c : {"GPUs", "layout", "batch", "step"}) h.push_back(c);
  if (request.simulate_top > 0) h.push_back("simulated");
  for (const char* c : {"tokens/s", "MFU", "peak GiB"}) h.push_back(c);
  if (has_budget(request)) h.insert(h.end(), {"time to train", "GPU-hours"});
  if (has_price(request)) h.push_back("cost");
  if (s.axis == SweepAxis::gpus) h.push_back("scaling");
  return h;
}

std::vector<std::string> row_cells(const SweepRow& row, const SweepResult& s,
                                   const SweepRequest& request, bool markdown) {
  std::vector<std::string> c;
  if (s.axis == SweepAxis::seq_len) c.push_back(with_commas(row.seq_len));
  c.push_back(fmt::format("{}{}", with_commas(row.gpus), row.cluster_extended ? "+" : ""));
  if (!row.best) {
    c.push_back(no_layout_cell(*row.no_layout));
    c.push_back(with_commas(row.global_batch));
    while (c.size() < header(s, request).size()) c.push_back("-");
    return c;
  }
  const Estimate& e = *row.best;
  c.push_back(markdown ? fmt::format("`{}`", short_label(e.layout)) : short_label(e.layout));
  c.push_back(with_commas(row.global_batch));
  c.push_back(seconds(e.step_time_s));
  if (request.simulate_top > 0)
    c.push_back(e.simulated_step_s > 0 ? seconds(e.simulated_step_s) : "-");
  c.push_back(short_count(e.tokens_per_s));
  c.push_back(fmt::format("{:.1f}%", 100 * e.mfu));
  c.push_back(fmt::format("{:.1f}", e.peak_bytes / units::kGiB));
  if (has_budget(request)) {
    c.push_back(duration_text(row.time_to_train_s));
    c.push_back(with_commas(static_cast<int64_t>(std::llround(row.gpu_hours))));
  }
  if (has_price(request)) c.push_back(dollars(row.cost_usd));
  if (s.axis == SweepAxis::gpus) c.push_back(fmt::format("{:.1f}%", 100 * row.scaling_efficiency));
  return c;
}

// The lines under the table: the extension rule once, then each point without a layout.
std::vector<std::string> notes(const SweepResult& s) {
  std::vector<std::string> out;
  const ClusterSpec& c = s.cluster;
  for (const SweepRow& row : s.rows) {
    if (!row.cluster_extended) continue;
    out.push_back(fmt::format(
        "+ beyond the cluster's {} GPUs: {} extended with more nodes of {} × {} and the same "
        "network levels, the outermost ({}) spanning every GPU",
        with_commas(c.gpus()), c.name, c.gpus_per_node, c.gpu.name,
        c.network.empty() ? "-" : c.network.back().name));
    break;
  }
  for (const SweepRow& row : s.rows) {
    if (row.best) continue;
    const std::string where =
        s.axis == SweepAxis::seq_len        ? fmt::format("seq len {}", with_commas(row.seq_len))
        : s.axis == SweepAxis::global_batch ? fmt::format("batch {}", with_commas(row.global_batch))
                                            : fmt::format("{} GPUs", with_commas(row.gpus));
    out.push_back(fmt::format("no layout at {}: {}", where, row.no_layout->text));
  }
  return out;
}

std::string batch_text(const SweepRequest& r, const SweepResult& s) {
  if (s.axis == SweepAxis::global_batch) return "the global batch of each row";
  switch (r.batch.rule) {
    case BatchRule::model_default:
      return fmt::format("{} sequences per step", with_commas(s.training.global_batch));
    case BatchRule::fixed_sequences:
      return fmt::format("{} sequences per step", with_commas(r.batch.value));
    case BatchRule::tokens_per_step:
      return fmt::format("{} tokens per step", with_commas(r.batch.value));
    case BatchRule::sequences_per_gpu:
      return fmt::format("{} sequences per GPU per step", with_commas(r.batch.value));
  }
  return "";
}

nlohmann::ordered_json number_or_null(bool applies, double v) {
  return applies ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

const char* to_string(SweepAxis axis) {
  switch (axis) {
    case SweepAxis::gpus:
      return "gpus";
    case SweepAxis::seq_len:
      return "seq_len";
    case SweepAxis::global_batch:
      return "global_batch";
  }
  return "";
}

const char* to_string(BatchRule rule) {
  switch (rule) {
    case BatchRule::model_default:
      return "model_default";
    case BatchRule::fixed_sequences:
      return "fixed_sequences";
    case BatchRule::tokens_per_step:
      return "tokens_per_step";
    case BatchRule::sequences_per_gpu:
      return "sequences_per_gpu";
  }
  return "";
}

std::string sweep_heading(const SweepResult& s, const SweepRequest& request) {
  const ClusterSpec& c = s.cluster;
  std::string out = fmt::format("{} on {} ({}: {} node{} × {})", s.model_name, c.gpu.name, c.name,
                                with_commas(c.nodes), c.nodes == 1 ? "" : "s", c.gpus_per_node);
  if (s.axis != SweepAxis::gpus && !s.rows.empty())
    out += fmt::format(", {} GPUs", with_commas(s.rows.front().gpus));
  if (s.axis != SweepAxis::seq_len && !s.rows.empty())
    out += fmt::format(", {} tokens per sequence", with_commas(s.rows.front().seq_len));
  out += fmt::format(" — {}\n", batch_text(request, s));
  if (has_budget(request)) {
    out += fmt::format("token budget {} tokens", short_count(request.tokens));
    if (has_price(request)) out += fmt::format(", ${:.2f} per GPU-hour", request.gpu_hour_cost_usd);
    out += "\n";
  }
  return out;
}

std::string sweep_table(const SweepResult& s, const SweepRequest& request) {
  std::vector<std::vector<std::string>> rows;
  for (const SweepRow& row : s.rows) rows.push_back(row_cells(row, s, request, false));
  std::string out = sweep_heading(s, request) + "\n";
  out += text_table(header(s, request), rows, s.axis == SweepAxis::seq_len ? 3 : 2);
  const std::vector<std::string> lines = notes(s);
  if (!lines.empty()) out += "\n";
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

std::string sweep_csv(const SweepResult& s) {
  std::vector<std::vector<std::string>> rows;
  for (const SweepRow& row : s.rows) {
    std::vector<std::string> r = {std::to_string(row.gpus), std::to_string(row.seq_len),
                                  std::to_string(row.global_batch), std::to_string(row.nodes),
                                  row.cluster_extended ? "true" : "false"};
    if (row.best) {
      const Estimate& e = *row.best;
      const bool budget = row.time_to_train_s > 0;
      r.insert(
          r.end(),
          {to_string(e.layout), fmt::format("{:.6f}", e.step_time_s),
           fmt::format("{:.1f}", e.tokens_per_s), fmt::format("{:.6f}", e.mfu),
           fmt::format("{:.0f}", e.peak_bytes), fmt::format("{:.0f}", e.capacity_bytes),
           budget ? fmt::format("{:.1f}", row.time_to_train_s) : "",
           budget ? fmt::format("{:.1f}", row.gpu_hours) : "",
           row.cost_usd > 0 ? fmt::format("{:.2f}", row.cost_usd) : "",
           s.axis == SweepAxis::gpus ? fmt::format("{:.6f}", row.scaling_efficiency) : "", ""});
    } else {
      r.insert(r.end(), {"", "", "", "", "", "", "", "", "", "", row.no_layout->text});
    }
    rows.push_back(r);
  }
  return csv_table({"gpus", "seq_len", "global_batch", "nodes", "cluster_extended", "layout",
                    "step_time_s", "tokens_per_s", "mfu", "peak_bytes", "capacity_bytes",
                    "time_to_train_s", "gpu_hours", "cost_usd", "scaling_efficiency", "no_layout"},
                   rows);
}

nlohmann::ordered_json sweep_json(const SweepResult& s, const SweepRequest& request) {
  nlohmann::ordered_json j;
  j["model"] = s.model_name;
  j["cluster"] = s.cluster.name;
  j["gpu"] = s.cluster.gpu.name;
  j["framework"] = s.framework;
  j["sweep"] = to_string(s.axis);
  j["batch"] = {{"rule", to_string(request.batch.rule)},
                {"value", request.batch.rule == BatchRule::model_default ? s.training.global_batch
                                                                         : request.batch.value}};
  j["tokens"] = number_or_null(has_budget(request), request.tokens);
  j["gpu_hour_cost_usd"] = number_or_null(has_price(request), request.gpu_hour_cost_usd);
  j["rows"] = nlohmann::ordered_json::array();
  for (const SweepRow& row : s.rows) {
    nlohmann::ordered_json r;
    r["gpus"] = row.gpus;
    r["seq_len"] = row.seq_len;
    r["global_batch"] = row.global_batch;
    r["nodes"] = row.nodes;
    r["cluster_extended"] = row.cluster_extended;
    nlohmann::ordered_json rejected = nlohmann::ordered_json::object();
    for (const auto& [reason, n] : row.rejected) rejected[reason] = n;
    r["search"] = {
        {"evaluated", row.evaluated}, {"feasible", row.feasible}, {"rejected", rejected}};
    if (row.best) {
      r["best"] = estimate_json(*row.best);
      r["time_to_train_s"] = number_or_null(has_budget(request), row.time_to_train_s);
      r["gpu_hours"] = number_or_null(has_budget(request), row.gpu_hours);
      r["cost_usd"] = number_or_null(has_price(request), row.cost_usd);
      r["scaling_efficiency"] = number_or_null(s.axis == SweepAxis::gpus, row.scaling_efficiency);
    } else {
      const NoLayoutReason& n = *row.no_layout;
      r["no_layout"] = {
          {"kind", to_string(n.kind)},
          {"text", n.text},
          {"rules", n.rules},
          {"over_bytes", number_or_null(n.kind == NoLayoutKind::memory, n.over_bytes())}};
    }
    j["rows"].push_back(r);
  }
  return j;
}

std::string sweep_markdown_table(const SweepResult& s, const SweepRequest& request) {
  std::vector<std::vector<std::string>> rows;
  for (const SweepRow& row : s.rows) rows.push_back(row_cells(row, s, request, true));
  std::string out = markdown_table(header(s, request), rows);
  const std::vector<std::string> lines = notes(s);
  if (!lines.empty()) out += "\n";
  for (const std::string& line : lines)  // the row marker as code, not a nested list
    out += line.rfind("+ ", 0) == 0 ? fmt::format("- `+` {}\n", line.substr(2))
                                    : fmt::format("- {}\n", line);
  return out;
}

}  // namespace meshplan
