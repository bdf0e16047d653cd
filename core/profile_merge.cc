#include "core/profile_merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace meshplan {
namespace {

// Which sections each label supplied, in the order first supplied.
class Credits {
 public:
  void give(const std::string& section, const std::string& label) { owner_[section] = label; }
  std::vector<std::string> lines(const std::vector<ProfileLayer>& layers) const {
    std::vector<std::string> out;
    for (const ProfileLayer& layer : layers) {
      std::vector<std::string> mine;
      for (const auto& [section, label] : owner_)
        if (label == layer.label) mine.push_back(section);
      if (!mine.empty())
        out.push_back(fmt::format("merged: {} from {} ({})", fmt::join(mine, ", "), layer.label,
                                  layer.profile.provenance.how));
    }
    return out;
  }

 private:
  std::map<std::string, std::string> owner_;
};

void take_scalar(double& into, double from, const char* section, const std::string& label,
                 Credits& credits) {
  if (from <= 0) return;
  into = from;
  credits.give(section, label);
}

void overlay_attention(CalibrationProfile& out, const CalibrationProfile& top,
                       const std::string& label, Credits& credits) {
  std::vector<std::string> kernels;
  for (const AttentionSample& s : top.attention)
    if (std::find(kernels.begin(), kernels.end(), s.kernel) == kernels.end())
      kernels.push_back(s.kernel);
  for (const std::string& k : kernels) {
    std::erase_if(out.attention, [&](const AttentionSample& s) { return s.kernel == k; });
    credits.give("attention " + k, label);
  }
  out.attention.insert(out.attention.end(), top.attention.begin(), top.attention.end());
}

void overlay_collectives(CalibrationProfile& out, const CalibrationProfile& top,
                         const std::string& label, Credits& credits) {
  auto key = [](const CollectiveFit& c) { return std::tie(c.collective, c.level, c.group_size); };
  for (const CollectiveFit& fit : top.collectives) {
    auto same = std::find_if(out.collectives.begin(), out.collectives.end(),
                             [&](const CollectiveFit& c) { return key(c) == key(fit); });
    if (same != out.collectives.end())
      *same = fit;
    else
      out.collectives.push_back(fit);
    credits.give(fmt::format("{} x{} on {}", fit.collective, fit.group_size, fit.level), label);
  }
}

void overlay(CalibrationProfile& out, const ProfileLayer& layer, Credits& credits) {
  const CalibrationProfile& top = layer.profile;
  for (const auto& [dtype, table] : top.gemm) {
    out.gemm[dtype] = table;
    credits.give("gemm " + dtype, layer.label);
  }
  take_scalar(out.hbm_bytes_per_s, top.hbm_bytes_per_s, "hbm", layer.label, credits);
  take_scalar(out.attention_efficiency, top.attention_efficiency, "attention_efficiency",
              layer.label, credits);
  take_scalar(out.sustained_compute_ratio, top.sustained_compute_ratio, "sustained_compute_ratio",
              layer.label, credits);
  take_scalar(out.gpu_compute_spread, top.gpu_compute_spread, "gpu_compute_spread", layer.label,
              credits);
  take_scalar(out.intra_node_bus_efficiency, top.intra_node_bus_efficiency,
              "intra_node_bus_efficiency", layer.label, credits);
  take_scalar(out.inter_node_bus_efficiency, top.inter_node_bus_efficiency,
              "inter_node_bus_efficiency", layer.label, credits);
  for (const auto& [recipe, overhead] : top.fp8_quantization_overhead) {
    out.fp8_quantization_overhead[recipe] = overhead;
    credits.give("fp8_quantization_overhead " + recipe, layer.label);
  }
  overlay_attention(out, top, layer.label, credits);
  overlay_collectives(out, top, layer.label, credits);
}

// Field by field, the last layer that has a value; commands of every layer, in order.
Provenance merged_provenance(const std::vector<ProfileLayer>& layers) {
  Provenance out;
  std::vector<std::string> commands;
  for (const ProfileLayer& layer : layers) {
    const Provenance& p = layer.profile.provenance;
    for (auto [into, from] : {std::pair{&out.how, &p.how},
                              {&out.gpu, &p.gpu},
                              {&out.driver, &p.driver},
                              {&out.cuda, &p.cuda},
                              {&out.cublas, &p.cublas},
                              {&out.nccl, &p.nccl},
                              {&out.date, &p.date}})
      if (!from->empty()) *into = *from;
    if (p.gpu_count > 0) out.gpu_count = p.gpu_count;
    if (p.nodes > 0) out.nodes = p.nodes;
    if (!p.nccl_env.empty()) out.nccl_env = p.nccl_env;
    if (!p.command.empty()) commands.push_back(p.command);
  }
  out.command = fmt::format("{}", fmt::join(commands, "; "));
  return out;
}

}  // namespace

CalibrationProfile merge_profiles(const std::vector<ProfileLayer>& layers,
                                  const std::string& name) {
  CalibrationProfile out;
  Credits credits;
  for (const ProfileLayer& layer : layers) overlay(out, layer, credits);
  out.name = name;
  out.provenance = merged_provenance(layers);
  out.provenance.sources = credits.lines(layers);
  out.notes.clear();
  for (const ProfileLayer& layer : layers) {
    for (const std::string& s : layer.profile.provenance.sources)
      out.provenance.sources.push_back(layer.label + ": " + s);
    for (const std::string& n : layer.profile.notes) out.notes.push_back(layer.label + ": " + n);
    // An interrupted calibration stays marked as such through any overlay.
    out.complete = out.complete && layer.profile.complete;
    for (const std::string& m : layer.profile.missing)
      out.missing.push_back(layer.label + ": " + m);
  }
  return out;
}

}  // namespace meshplan
