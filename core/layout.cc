#include "core/layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/layout_fields.h"

namespace meshplan {

int64_t Layout::degree(Dim dim) const {
  switch (dim) {
    case Dim::tp:
      return tp;
    case Dim::cp:
      return cp;
    case Dim::dp:
      return dp;
    case Dim::pp:
      return pp;
  }
  return 1;
}

std::array<int64_t, 4> Layout::strides() const {
  std::array<int64_t, 4> out{};
  int64_t ranks = 1;
  for (Dim inner : order) {
    out[static_cast<size_t>(inner)] = ranks;
    ranks *= degree(inner);
  }
  return out;
}

int64_t Layout::stride(Dim dim) const {
  int64_t ranks = 1;
  for (Dim inner : order) {
    if (inner == dim) return ranks;
    ranks *= degree(inner);
  }
  return ranks;
}

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}

const char* to_string(CpKind kind) {
  switch (kind) {
    case CpKind::ring:
      return "ring";
    case CpKind::allgather:
      return "allgather";
    case CpKind::a2a:
      return "a2a";
    case CpKind::hybrid:
      return "hybrid";
  }
  return "?";
}

const char* to_string(Offload offload) {
  switch (offload) {
    case Offload::none:
      return "none";
    case Offload::cpu:
      return "cpu";
    case Offload::nvme:
      return "nvme";
  }
  return "?";
}

const char* to_string(Dispatch dispatch) {
  switch (dispatch) {
    case Dispatch::alltoall:
      return "alltoall";
    case Dispatch::allgather:
      return "allgather";
    case Dispatch::deepep:
      return "deepep";
  }
  return "?";
}

const char* to_string(Dim dim) {
  switch (dim) {
    case Dim::tp:
      return "tp";
    case Dim::cp:
      return "cp";
    case Dim::dp:
      return "dp";
    case Dim::pp:
      return "pp";
  }
  return "?";
}

// kLayoutFields in to_string(Layout)'s order.
static std::vector<const LayoutField*> fields_in_print_order() {
  std::vector<const LayoutField*> fields;
  for (const LayoutField& field : kLayoutFields) fields.push_back(&field);
  std::sort(fields.begin(), fields.end(), [](const LayoutField* a, const LayoutField* b) {
    return a->print_position < b->print_position;
  });
  return fields;
}

std::string to_string(const Layout& layout) {
  static const std::vector<const LayoutField*> fields = fields_in_print_order();
  std::string out;
  for (const LayoutField* field : fields) {
    if (field->omitted && field->omitted(layout)) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", field->key, field->print(layout));
  }
  return out;
}

std::string short_label(const Layout& layout) {
  std::string s = fmt::format("tp{} pp{} dp{}", layout.tp, layout.pp, layout.dp);
  if (layout.cp > 1) s += fmt::format(" cp{}", layout.cp);
  if (layout.cp > 1 && layout.cp_kind == CpKind::hybrid)
    s += fmt::format(" a2a{}", layout.cp_a2a);
  else if (layout.cp > 1 && layout.cp_kind != CpKind::ring)
    s += fmt::format(" {}", to_string(layout.cp_kind));
  if (layout.ep > 1) s += fmt::format(" ep{}", layout.ep);
  if (layout.folds_experts()) s += fmt::format(" etp{}", layout.expert_tp());
  if (layout.vpp > 1) s += fmt::format(" v{}", layout.vpp);
  s += fmt::format(" z{}", layout.zero);
  if (layout.shard > 0) s += fmt::format(" shard{}", layout.shard);
  if (layout.offload != Offload::none) s += fmt::format(" opt-{}", to_string(layout.offload));
  if (layout.dispatch != Dispatch::alltoall) s += fmt::format(" {}", to_string(layout.dispatch));
  s += fmt::format(" mbs{}", layout.mbs);
  const char* rc = layout.recompute == Recompute::none        ? ""
                   : layout.recompute == Recompute::selective ? " sel"
                                                              : " full";
  s += rc;
  if (!layout.recompute_stage_layers.empty())  // per stage, stage 0 first
    s += fmt::format("+{}full", fmt::join(layout.recompute_stage_layers, ":"));
  else if (layout.recompute_layers > 0 && layout.recompute != Recompute::full)
    s += fmt::format("+{}full", layout.recompute_layers);
  if (layout.recompute_layers > 1 && layout.recompute == Recompute::full)
    s += fmt::format("/{}", layout.recompute_layers);  // uniform groups of N layers
  if (layout.act_offload > 0) s += fmt::format(" act-off{}", layout.act_offload);
  if (layout.tp > 1 && !layout.sp) s += " nosp";
  if (layout.pp > 1) s += fmt::format(" {}", to_string(layout.schedule));
  return s;
}

namespace {

std::vector<std::string> split_fields(const std::string& full) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= full.size();) {
    size_t comma = full.find(',', at);
    if (comma == std::string::npos) comma = full.size();
    out.push_back(full.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> distinguishing_labels(const std::vector<Layout>& layouts) {
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> fields;
  for (const Layout& l : layouts) {
    labels.push_back(short_label(l));
    fields.push_back(split_fields(to_string(l)));  // same keys in the same order for all
  }
  std::vector<std::string> out = labels;
  for (size_t i = 0; i < layouts.size(); ++i) {
    std::vector<size_t> group;
    for (size_t j = 0; j < layouts.size(); ++j)
      if (labels[j] == labels[i]) group.push_back(j);
    if (group.size() < 2) continue;
    for (size_t f = 0; f < fields[i].size(); ++f) {
      bool differs = false;
      for (size_t j : group) differs = differs || fields[j][f] != fields[i][f];
      if (differs) out[i] += " " + fields[i][f];
    }
  }
  return out;
}

std::vector<std::string> differing_fields(const std::vector<Layout>& layouts) {
  std::vector<std::vector<std::string>> fields;
  for (const Layout& l : layouts) fields.push_back(split_fields(to_string(l)));
  std::vector<std::string> out;
  if (fields.empty()) return out;
  for (size_t f = 0; f < fields[0].size(); ++f) {
    std::vector<std::string> values;
    for (const auto& row : fields) {
      const std::string value = row[f].substr(row[f].find('=') + 1);
      if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
    }
    if (values.size() < 2) continue;
    std::string field = fields[0][f].substr(0, fields[0][f].find('=') + 1);
    for (size_t i = 0; i < values.size(); ++i) field += (i ? "/" : "") + values[i];
    out.push_back(field);
  }
  return out;
}

}  // namespace meshplan
