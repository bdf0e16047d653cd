#include "core/profile_merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace meshplan {
namespace {

// Which sections each layer supplied, and how each was made there (a layer that is itself a
// merge passes on its own sections' origins).
class Credits {
 public:
  void give(const std::string& section, const ProfileLayer& layer) {
    owner_[section] = {layer.label, section_origin(layer.profile, section).how};
  }
  // One line per layer and how, in layer order: "merged: a, b from FILE (measured)".
  std::vector<std::string> lines(const std::vector<ProfileLayer>& layers) const {
    std::vector<std::string> out;
    for (const ProfileLayer& layer : layers) {
      std::map<std::string, std::vector<std::string>> by_how;
      for (const auto& [section, owner] : owner_)
        if (owner.first == layer.label) by_how[owner.second].push_back(section);
      for (const auto& [how, sections] : by_how)
        out.push_back(
            fmt::format("merged: {} from {} ({})", fmt::join(sections, ", "), layer.label, how));
    }
    return out;
  }

 private:
  std::map<std::string, std::pair<std::string, std::string>> owner_;  // section → (label, how)
};

void take_scalar(double& into, double from, const char* section, const ProfileLayer& layer,
                 Credits& credits) {
  if (from <= 0) return;
  into = from;
  credits.give(section, layer);
}

void overlay_attention(CalibrationProfile& out, const ProfileLayer& layer, Credits& credits) {
  const CalibrationProfile& top = layer.profile;
  std::vector<std::string> kernels;
  for (const AttentionSample& s : top.attention)
    if (std::find(kernels.begin(), kernels.end(), s.kernel) == kernels.end())
      kernels.push_back(s.kernel);
  for (const std::string& k : kernels) {
    std::erase_if(out.attention, [&](const AttentionSample& s) { return s.kernel == k; });
    credits.give("attention " + k, layer);
  }
  out.attention.insert(out.attention.end(), top.attention.begin(), top.attention.end());
}

void overlay_collectives(CalibrationProfile& out, const ProfileLayer& layer, Credits& credits) {
  const CalibrationProfile& top = layer.profile;
  auto key = [](const CollectiveFit& c) { return std::tie(c.collective, c.level, c.group_size); };
  for (const CollectiveFit& fit : top.collectives) {
    auto same = std::find_if(out.collectives.begin(), out.collectives.end(),
                             [&](const CollectiveFit& c) { return key(c) == key(fit); });
    if (same != out.collectives.end())
      *same = fit;
    else
      out.collectives.push_back(fit);
    credits.give(fmt::format("{} x{} on {}", fit.collective, fit.group_size, fit.level), layer);
  }
}

void overlay(CalibrationProfile& out, const ProfileLayer& layer, Credits& credits) {
  const CalibrationProfile& top = layer.profile;
  for (const auto& [dtype, table] : top.gemm) {
    out.gemm[dtype] = table;
    credits.give("gemm " + dtype, layer);
  }
  take_scalar(out.hbm_bytes_per_s, top.hbm_bytes_per_s, "hbm", layer, credits);
  take_scalar(out.attention_efficiency, top.attention_efficiency, "attention_efficiency", layer,
              credits);
  take_scalar(out.sustained_compute_ratio, top.sustained_compute_ratio, "sustained_compute_ratio",
              layer, credits);
  take_scalar(out.gpu_compute_spread, top.gpu_compute_spread, "gpu_compute_spread", layer, credits);
  take_scalar(out.intra_node_bus_efficiency, top.intra_node_bus_efficiency,
              "intra_node_bus_efficiency", layer, credits);
  take_scalar(out.inter_node_bus_efficiency, top.inter_node_bus_efficiency,
              "inter_node_bus_efficiency", layer, credits);
  for (const auto& [recipe, overhead] : top.fp8_quantization_overhead) {
    out.fp8_quantization_overhead[recipe] = overhead;
    credits.give("fp8_quantization_overhead " + recipe, layer);
  }
  overlay_attention(out, layer, credits);
  overlay_collectives(out, layer, credits);
  if (top.peer_all_reduce.known()) {
    out.peer_all_reduce = top.peer_all_reduce;
    credits.give("peer_all_reduce", layer);
  }
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

// "merged: a, b from FILE (how)": whether it credits `section`; FILE and how when it does.
bool credit_for(const std::string& line, const std::string& section, SectionOrigin& origin) {
  const std::string prefix = "merged: ";
  const size_t from = line.find(" from ");
  if (line.rfind(prefix, 0) != 0 || from == std::string::npos) return false;
  const std::string list = ", " + line.substr(prefix.size(), from - prefix.size()) + ",";
  if (list.find(", " + section + ",") == std::string::npos) return false;
  origin.file = line.substr(from + 6);
  origin.how.clear();
  const size_t open = origin.file.rfind(" (");
  if (origin.file.size() > 2 && origin.file.back() == ')' && open != std::string::npos) {
    origin.how = origin.file.substr(open + 2, origin.file.size() - open - 3);
    origin.file.resize(open);
  }
  return true;
}

}  // namespace

SectionOrigin section_origin(const CalibrationProfile& profile, const std::string& section) {
  for (const std::string& line : profile.provenance.sources) {
    SectionOrigin origin;
    if (credit_for(line, section, origin)) {
      if (origin.how.empty()) origin.how = profile.provenance.how;
      return origin;
    }
  }
  return {"", profile.provenance.how};
}

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
