#include "reports/estimate_render.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "planner/no_layout_reason.h"
#include "reports/memory_render.h"
#include "reports/text_format.h"

namespace meshplan {
namespace {

nlohmann::ordered_json breakdown_json(const TimeBreakdown& b) {
  return {{"compute_s", b.compute_s},
          {"recompute_s", b.recompute_s},
          {"tp_s", b.tp_s},
          {"cp_s", b.cp_s},
          {"ep_s", b.ep_s},
          {"pp_s", b.pp_s},
          {"dp_s", b.dp_s},
          {"bubble_s", b.bubble_s},
          {"optimizer_s", b.optimizer_s}};
}

std::vector<std::string> summary_row(const Estimate& e, size_t rank, const std::string& label) {
  return {std::to_string(rank),
          label,
          fmt::format("{:.1f}/{:.1f}", e.peak_bytes / units::kGiB, e.capacity_bytes / units::kGiB),
          fmt::format("{:.1f}%", 100 * e.bubble_fraction),
          seconds(e.step_time_s),
          e.simulated_step_s > 0 ? seconds(e.simulated_step_s) : "-",
          short_count(e.tokens_per_s),
          fmt::format("{:.1f}", e.model_tflops_per_gpu),
          fmt::format("{:.1f}%", 100 * e.mfu)};
}

// The summary table's rows. Layouts whose rows would print identically (same short label and
// numbers: they differ only in fields that change no figure) share one row, its '#' listing
// their ranks and its label the differing fields as "key=a/b". Rows left with the same short
// label get the fields that tell them apart (core/layout.h distinguishing_labels).
std::vector<std::vector<std::string>> summary_rows(const std::vector<Estimate>& ranked) {
  std::vector<std::vector<std::string>> printed;  // with short labels
  std::vector<std::vector<size_t>> members;       // ranked indices per printed row
  for (size_t i = 0; i < ranked.size(); ++i) {
    std::vector<std::string> row = summary_row(ranked[i], i + 1, short_label(ranked[i].layout));
    size_t same = 0;
    while (same < printed.size() &&
           !std::equal(row.begin() + 1, row.end(), printed[same].begin() + 1))
      ++same;
    if (same == printed.size()) {
      printed.push_back(std::move(row));
      members.push_back({i});
    } else {
      printed[same][0] += "," + row[0];
      members[same].push_back(i);
    }
  }
  std::vector<Layout> heads;
  for (const auto& m : members) heads.push_back(ranked[m.front()].layout);
  const std::vector<std::string> labels = distinguishing_labels(heads);
  for (size_t r = 0; r < printed.size(); ++r) {
    printed[r][1] = labels[r];
    if (members[r].size() < 2) continue;
    std::vector<Layout> group;
    for (size_t i : members[r]) group.push_back(ranked[i].layout);
    printed[r][1] = short_label(group.front());
    for (const std::string& field : differing_fields(group)) printed[r][1] += " " + field;
  }
  return printed;
}

const std::vector<std::string> kSummaryHeader = {
    "#", "layout", "peak/cap GiB", "bubble", "step", "simulated", "tokens/s", "TFLOP/s", "MFU"};

}  // namespace

std::vector<BreakdownComponent> breakdown_components(const TimeBreakdown& b) {
  using K = ComponentKind;
  std::vector<BreakdownComponent> out = {{"compute", b.compute_s, K::compute},
                                         {"recompute", b.recompute_s, K::recompute},
                                         {"TP communication (exposed)", b.tp_s, K::communication},
                                         {"CP communication (exposed)", b.cp_s, K::communication},
                                         {"EP all-to-all (exposed)", b.ep_s, K::communication},
                                         {"PP transfers (exposed)", b.pp_s, K::communication},
                                         {"DP gradient sync (exposed)", b.dp_s, K::communication},
                                         {"pipeline bubble", b.bubble_s, K::bubble}};
  // Listed only where the layout offloads activations (Layout::act_offload).
  if (b.offload_s > 0)
    out.push_back({"activation offload (exposed)", b.offload_s, K::communication});
  out.push_back({"optimizer step", b.optimizer_s, K::optimizer});
  return out;
}

nlohmann::ordered_json estimate_json(const Estimate& e) {
  nlohmann::ordered_json j = memory_json(e.memory);
  j["layout"] = to_string(e.layout);
  j["micro_batches"] = e.micro_batches;
  j["step_time_s"] = e.step_time_s;
  j["bubble_fraction"] = e.bubble_fraction;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["model_tflops_per_gpu"] = e.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = e.hardware_tflops_per_gpu;
  j["tokens_per_s"] = e.tokens_per_s;
  if (e.simulated_step_s > 0) j["simulated_step_time_s"] = e.simulated_step_s;
  j["model_flops_per_step"] = e.model_flops;
  j["hardware_flops_per_step"] = e.hardware_flops;
  j["time_breakdown"] = breakdown_json(e.breakdown);
  j["stage_times"] = nlohmann::ordered_json::array();
  for (const StageTiming& s : e.stages) {
    j["stage_times"].push_back({{"stage", s.stage},
                                {"forward_s", s.forward_s},
                                {"backward_s", s.backward_s},
                                {"recompute_s", s.recompute_s},
                                {"tp_s", s.tp_s},
                                {"cp_s", s.cp_s},
                                {"ep_s", s.ep_s},
                                {"per_micro_batch_s", s.per_micro_batch_s()},
                                {"dp_exposed_s", s.dp_exposed_s},
                                {"optimizer_s", s.optimizer_s}});
  }
  return j;
}

std::string estimate_table(const Estimate& e, const CostModel& model) {
  std::string out =
      memory_table(e.memory, model.model(), model.cluster(), e.layout, model.training());
  const TimeBreakdown& b = e.breakdown;
  std::vector<std::vector<std::string>> rows;
  for (const BreakdownComponent& c : breakdown_components(b)) {
    rows.push_back(
        {c.label, seconds(c.seconds), fmt::format("{:.1f}%", 100 * c.seconds / e.step_time_s)});
  }
  out += "\nstep time breakdown (critical stage)\n";
  out += text_table({"component", "time", "share"}, rows);
  out += fmt::format(
      "\nstep     {}   bubble {:.1f}%   {} tokens/s\nMFU      {:.1f}% ({:.1f} model TFLOP/s per "
      "GPU)   "
      "HFU {:.1f}% ({:.1f} hardware TFLOP/s per GPU)\n",
      seconds(e.step_time_s), 100 * e.bubble_fraction, short_count(e.tokens_per_s), 100 * e.mfu,
      e.model_tflops_per_gpu, 100 * e.hfu, e.hardware_tflops_per_gpu);
  return out;
}

nlohmann::ordered_json plan_json(const SearchResult& r) {
  nlohmann::ordered_json j;
  j["search"] = {{"evaluated", r.evaluated}, {"feasible", r.feasible}, {"wall_s", r.wall_s}};
  nlohmann::ordered_json rejected = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : r.rejected) rejected[reason] = n;
  j["search"]["rejected"] = rejected;
  j["ranked"] = nlohmann::ordered_json::array();
  for (const Estimate& e : r.ranked) j["ranked"].push_back(estimate_json(e));
  if (r.smallest) j["smallest"] = estimate_json(*r.smallest);
  return j;
}

std::string plan_table(const SearchResult& r, const CostModel& model, int64_t gpus) {
  // No wall time here: the table is byte-identical for any thread count (JSON has wall_s).
  std::string out = fmt::format(
      "{} on {} × {} — {} sequences × {} tokens per step\nsearched {} layouts: {} fit{}\n\n",
      model.model().name, gpus, model.cluster().gpu.name, model.training().global_batch,
      model.training().seq_len, with_commas(r.evaluated), with_commas(r.feasible),
      r.launcher_refused == 0
          ? ""
          : fmt::format(" and run under {0}; {1} more fit but {0} cannot run them "
                        "(--any-launcher ranks them)",
                        r.launcher, with_commas(r.launcher_refused)));
  if (r.ranked.empty()) return out + nothing_fits_text(r, model, gpus);
  if (r.offload_fallback)
    out += fmt::format(
        "nothing{} fit on the GPUs alone: these layouts keep their optimizer states off the GPU "
        "(offload)\n\n",
        r.launcher.empty() ? "" : " " + r.launcher + " runs");
  out += text_table(kSummaryHeader, summary_rows(r.ranked), 2);
  out += fmt::format("\nbest: --layout {}\n", to_string(r.ranked.front().layout));
  return out;
}

std::string plan_csv(const SearchResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const Estimate& e = r.ranked[i];
    rows.push_back({std::to_string(i + 1), to_string(e.layout), fmt::format("{:.0f}", e.peak_bytes),
                    fmt::format("{:.0f}", e.capacity_bytes),
                    fmt::format("{:.6f}", e.bubble_fraction), fmt::format("{:.6f}", e.step_time_s),
                    fmt::format("{:.1f}", e.tokens_per_s),
                    fmt::format("{:.3f}", e.model_tflops_per_gpu), fmt::format("{:.6f}", e.mfu)});
  }
  return csv_table({"rank", "layout", "peak_bytes", "capacity_bytes", "bubble_fraction",
                    "step_time_s", "tokens_per_s", "model_tflops_per_gpu", "mfu"},
                   rows);
}

std::string plan_markdown(const SearchResult& r) {
  std::vector<std::vector<std::string>> rows = summary_rows(r.ranked);
  for (auto& row : rows) row[1] = "`" + row[1] + "`";
  return markdown_table(kSummaryHeader, rows);
}

namespace {

// What moving the optimizer states off the GPU would do for the smallest layout: the bytes it
// frees on the peak stage and the time it adds (the CPU step and its PCIe copies).
std::string offload_advice(const SearchResult& r, const CostModel& model, const Estimate& e,
                           const StageMemory& s) {
  if (!model.cluster().host.known() || e.layout.offload != Offload::none || s.optimizer_bytes <= 0)
    return "";
  Layout off = e.layout;
  off.offload = Offload::cpu;
  off.zero = std::max(off.zero, 1);
  CostModel costs(model);
  const Estimate with = costs.evaluate(off, /*detail=*/false);
  return fmt::format(
      "  - optimizer states in host memory (offload=cpu, zero ≥ 1; DeepSpeed and Megatron-Core "
      "run it): {} per GPU instead of {}, {} more per step for the CPU step and its PCIe "
      "copies{}\n",
      gib(with.peak_bytes), gib(e.peak_bytes), seconds(with.step_time_s - e.step_time_s),
      r.offload_fallback ? " (the search tried offload: not enough; parameter offload is not "
                           "modelled)"
                         : "");
}

}  // namespace

std::string nothing_fits_text(const SearchResult& r, const CostModel& model, int64_t gpus) {
  if (!r.smallest || r.launcher_refused > 0)
    return "no layout: " + explain_no_layout(r, model.model(), model.training(), gpus).text + "\n";
  const Estimate& e = *r.smallest;
  const StageMemory& s = e.memory.stages[static_cast<size_t>(e.peak_stage)];
  const double states = s.params_bytes + s.grads_bytes + s.optimizer_bytes;
  std::string out = fmt::format(
      "nothing fits in {} per GPU.\nsmallest peak: --layout {}\n  stage {} needs {}, over by {}: "
      "model states {}, activations {}, other {}\n",
      gib(e.capacity_bytes), to_string(e.layout), e.peak_stage, gib(e.peak_bytes),
      gib(e.peak_bytes - e.capacity_bytes), gib(states), gib(s.activations_bytes),
      gib(s.other_bytes()));
  out += "what would make it fit:\n";
  if (states >= s.activations_bytes) {
    out += "  - more GPUs (model states shrink with tp·pp and with ZeRO sharding over dp)\n";
    if (e.layout.zero < 3)
      out += "  - a higher ZeRO stage (the search tried up to 3 already if not fixed)\n";
  } else {
    out += "  - full recompute or a smaller micro-batch (activations dominate)\n";
    out += fmt::format("  - a shorter sequence than {} or more context parallelism\n",
                       model.training().seq_len);
    out += "  - more GPUs for tensor/pipeline parallelism\n";
  }
  out += offload_advice(r, model, e, s);
  return out;
}

}  // namespace meshplan
