// The layout's fields as one table: each entry says how its `key=value` is parsed (--layout,
// --fix), how to_string(Layout) prints it, what it defaults to and whether the search may pin
// it. parse_layout, to_string, parse_layout_fix and the search's --fix all read this table;
// adding a layout field is a Layout member, a LayoutFix member and one entry here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/layout.h"

namespace meshplan {

// Fields the user pinned with --fix (unset: searched). Filled by the table's `pin` entries.
struct LayoutFix {
  std::optional<int64_t> dp, tp, pp, cp, ep, mbs, vpp, recompute_layers;
  std::optional<int> zero;
  std::optional<Recompute> recompute;
  std::optional<RecomputeModules> recompute_modules;
  std::optional<Schedule> schedule;
  std::optional<bool> sp;
  std::optional<std::array<Dim, 4>> order;
  std::optional<int64_t> shard;
  std::optional<int64_t> etp;  // every candidate takes it; tp it does not divide are skipped
  std::optional<CpKind> cp_kind;
  std::optional<int64_t> cp_a2a;
  // Set, every MoE candidate with ep > 1 takes it; unset, the search turns it on where the
  // framework overlaps EP communication (CostOptions::ep_comm_overlap) and the recompute allows.
  std::optional<bool> ep_overlap;
  // Set, every candidate with tp > 1 takes it (validation rows whose source ran with
  // --tp-comm-overlap; --fix tp_overlap=true); unset, the search turns it on where the framework
  // overlaps TP communication (CostOptions::tp_comm_overlap) and sequence parallelism is on.
  std::optional<bool> tp_overlap;
  // Set, every candidate takes it; unset, the search tries none and, for a candidate that does
  // not fit, the framework's offload devices (CostOptions::offload_devices).
  std::optional<Offload> offload;
  std::optional<Dispatch> dispatch;
  std::optional<int64_t> act_offload;
};

// How the layout search treats a field.
enum class FieldSearch {
  searched,     // enumerated by the search; --fix pins it to one value
  pinned_only,  // never searched (kept at its default); --fix sets it for every candidate
                // (act_offload, dispatch)
  derived,      // the search derives it from the others; --fix refuses it
};

struct LayoutField {
  const char* key;
  const char* help;  // what the value means and its default
  FieldSearch search;
  int print_position;  // its place in to_string(Layout) (0 first)
  // Reads `value` into `layout`; returns "" or the rule the value breaks.
  std::string (*parse)(const std::string& value, Layout& layout);
  // The value as to_string(Layout) writes it; parse reads it back.
  std::string (*print)(const Layout& layout);
  // For a key the text leaves out: sets the field from the others (sp, schedule). Null: the
  // Layout{} member default stands.
  void (*derive_default)(Layout& layout);
  // Copies this field of `parsed` into `fix`. Null for FieldSearch::derived.
  void (*pin)(const Layout& parsed, LayoutFix& fix);
  // When set and true for a layout, to_string(Layout) leaves the field out (a field added after
  // layouts were first written keeps their text unchanged at its default).
  bool (*omitted)(const Layout& layout) = nullptr;
};

// Every layout field, in the order the keys are documented (and suggested for typos).
extern const std::array<LayoutField, 24> kLayoutFields;

// The entry for `key`, or null.
const LayoutField* find_layout_field(std::string_view key);
// The keys of kLayoutFields, in table order.
std::vector<std::string> layout_field_keys();

}  // namespace meshplan
