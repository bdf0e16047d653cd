#include "reports/memory_render.h"

#include <fmt/format.h>

#include <cmath>

#include "core/units.h"
#include "planner/param_count.h"
#include "reports/text_format.h"

namespace meshplan {
namespace {

int64_t bytes(double b) { return static_cast<int64_t>(std::llround(b)); }

}  // namespace

nlohmann::ordered_json memory_json(const MemoryEstimate& e) {
  nlohmann::ordered_json j;
  j["params_total"] = e.params_total;
  j["stages"] = nlohmann::ordered_json::array();
  for (const StageMemory& s : e.stages) {
    nlohmann::ordered_json st;
    st["stage"] = s.stage;
    st["layers"] = s.layers;
    st["params"] = s.params;
    st["params_bytes"] = bytes(s.params_bytes);
    st["grads_bytes"] = bytes(s.grads_bytes);
    st["optimizer_bytes"] = bytes(s.optimizer_bytes);
    st["activations_bytes"] = bytes(s.activations_bytes);
    st["activations_per_layer_bytes"] = bytes(s.activations_per_layer_bytes);
    st["in_flight_micro_batches"] = s.in_flight_micro_batches;
    st["other_bytes"] = bytes(s.other_bytes());
    st["other"] = {{"logits_bytes", bytes(s.logits_bytes)},
                   {"zero3_buffer_bytes", bytes(s.zero3_buffer_bytes)},
                   {"fp8_weight_cache_bytes", bytes(s.fp8_weight_cache_bytes)},
                   {"fp8_scaling_bytes", bytes(s.fp8_scaling_bytes)},
                   {"cuda_context_bytes", bytes(s.cuda_context_bytes)},
                   {"nccl_bytes", bytes(s.nccl_bytes)},
                   {"allocator_slack_bytes", bytes(s.allocator_slack_bytes)}};
    st["total_bytes"] = bytes(s.total_bytes());
    j["stages"].push_back(st);
  }
  j["peak_bytes"] = bytes(e.peak_bytes);
  j["peak_stage"] = e.peak_stage;
  j["capacity_bytes"] = bytes(e.capacity_bytes);
  j["fits"] = e.fits();
  return j;
}

std::string memory_table(const MemoryEstimate& e, const ModelSpec& model,
                         const ClusterSpec& cluster, const Layout& layout,
                         const TrainingSpec& training) {
  const int64_t micro = training.global_batch / (layout.dp * layout.mbs);
  // DeepSeek-V3's multi-token-prediction modules: counted apart, trained on the last stage.
  const std::string mtp = model.mtp_layers > 0
                              ? fmt::format("; {} more in {} MTP module{} on the last stage",
                                            with_commas(mtp_params(model)), model.mtp_layers,
                                            model.mtp_layers > 1 ? "s" : "")
                              : "";
  std::string out = fmt::format(
      "{} ({} parameters{}) on {} ({} × {}, {} each)\nlayout   {}\nbatch    {} sequences × {} "
      "tokens; {} micro-batches of {} per data-parallel rank\n\n",
      model.name, with_commas(e.params_total), mtp, cluster.name, layout.gpus(), cluster.gpu.name,
      gib(e.capacity_bytes), short_label(layout), training.global_batch, training.seq_len, micro,
      layout.mbs);
  std::vector<std::vector<std::string>> rows;
  auto g = [](double b) { return fmt::format("{:.2f}", b / units::kGiB); };
  for (const StageMemory& s : e.stages) {
    rows.push_back({std::to_string(s.stage), std::to_string(s.layers),
                    short_count(static_cast<double>(s.params)), g(s.params_bytes), g(s.grads_bytes),
                    g(s.optimizer_bytes), g(s.activations_bytes),
                    fmt::format("{:.2f}", s.in_flight_micro_batches), g(s.other_bytes()),
                    g(s.total_bytes())});
  }
  out += text_table({"stage", "layers", "params/GPU", "weights", "grads", "optimizer",
                     "activations", "in flight", "other", "total GiB"},
                    rows);
  out += fmt::format(
      "\npeak     stage {}: {} of {} — {}\n", e.peak_stage, gib_and_gb(e.peak_bytes),
      gib_and_gb(e.capacity_bytes),
      e.fits() ? "fits"
               : fmt::format("does not fit (over by {})", gib(e.peak_bytes - e.capacity_bytes)));
  if (e.fp8) {
    const StageMemory& p = e.stages[static_cast<size_t>(e.peak_stage)];
    out += fmt::format(
        "fp8      stage {}: cached FP8 weights {}, scaling state {:.1f} KiB; activations {} "
        "({} with BF16 linear-layer inputs)\n",
        e.peak_stage, gib(p.fp8_weight_cache_bytes), p.fp8_scaling_bytes / units::kKiB,
        gib(p.activations_bytes), gib(e.peak_bf16_activations_bytes));
  }
  double host = 0, nvme = 0;
  for (const StageMemory& s : e.stages) {
    host = std::max(host, s.host_bytes);
    nvme = std::max(nvme, s.nvme_bytes);
  }
  const double node = static_cast<double>(cluster.gpus_per_node);
  if (host > 0)
    out += fmt::format("host     {} per GPU (optimizer states, activations), {} per node of {}\n",
                       gib(host), gib(node * host), gib(cluster.host.memory_bytes));
  if (nvme > 0)
    out += fmt::format("NVMe     {} per GPU (optimizer states), {} per node of {}\n", gib(nvme),
                       gib(node * nvme), gib(cluster.host.nvme_bytes));
  return out;
}

}  // namespace meshplan
