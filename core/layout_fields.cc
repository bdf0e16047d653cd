#include "core/layout_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/edit_distance.h"

namespace meshplan {
namespace {

constexpr int64_t kMaxDegree = 1'000'000;

// Reads an integer in [min, max] into `field`; returns "" or the rule.
std::string parse_integer(const std::string& value, int64_t min, int64_t max, int64_t& field) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < min || v > max)
    return fmt::format("must be an integer between {} and {}", min, max);
  field = v;
  return "";
}

std::string parse_boolean(const std::string& value, bool& field) {
  if (value == "true" || value == "1" || value == "on") {
    field = true;
    return "";
  }
  if (value == "false" || value == "0" || value == "off") {
    field = false;
    return "";
  }
  return "must be true or false";
}

// Reads one of `names` (indexed like `values`) into `field`; returns "" or the rule.
template <class T>
std::string parse_choice(const std::string& value, const std::vector<std::string>& names,
                         const std::vector<T>& values, T& field) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == value) {
      field = values[i];
      return "";
    }
  }
  return fmt::format("must be one of {}{}", fmt::join(names, "|"), did_you_mean(value, names));
}

std::string parse_order(const std::string& value, Layout& layout) {
  std::array<Dim, 4> order{};
  size_t n = 0, start = 0;
  bool ok = true;
  unsigned seen = 0;
  while (ok && start <= value.size()) {
    size_t end = value.find('-', start);
    if (end == std::string::npos) end = value.size();
    std::string name = value.substr(start, end - start);
    std::optional<Dim> dim = name == "tp"   ? std::optional(Dim::tp)
                             : name == "cp" ? std::optional(Dim::cp)
                             : name == "dp" ? std::optional(Dim::dp)
                             : name == "pp" ? std::optional(Dim::pp)
                                            : std::nullopt;
    ok = dim && n < 4 && !(seen & (1u << static_cast<unsigned>(*dim)));
    if (ok) {
      seen |= 1u << static_cast<unsigned>(*dim);
      order[n++] = *dim;
    }
    start = end + 1;
  }
  if (!ok || n != 4)
    return "must list tp, cp, dp and pp once each, innermost first, e.g. tp-cp-dp-pp";
  layout.order = order;
  return "";
}

std::string print_order(const Layout& layout) {
  return fmt::format("{}-{}-{}-{}", to_string(layout.order[0]), to_string(layout.order[1]),
                     to_string(layout.order[2]), to_string(layout.order[3]));
}

std::string print_bool(bool value) { return value ? "true" : "false"; }

template <int64_t Layout::*member, int64_t min, int64_t max>
std::string parse_int(const std::string& value, Layout& layout) {
  return parse_integer(value, min, max, layout.*member);
}

template <int64_t Layout::*member>
std::string print_int(const Layout& layout) {
  return fmt::format("{}", layout.*member);
}

constexpr int64_t kMaxRecomputeLayers = 100'000;

// "N" (every stage) or "a:b:c:…" (one count per pipeline stage, stage 0 first). A list whose
// counts are all equal is the one count.
std::string parse_recompute_layers(const std::string& value, Layout& layout) {
  std::vector<int64_t> counts;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(':', start);
    if (end == std::string::npos) end = value.size();
    int64_t count = 0;
    if (!parse_integer(value.substr(start, end - start), 0, kMaxRecomputeLayers, count).empty())
      return fmt::format(
          "must be an integer between 0 and {}, or one per pipeline stage joined by ':' (4:3:2:1)",
          kMaxRecomputeLayers);
    counts.push_back(count);
    start = end + 1;
  }
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  const bool uniform =
      std::all_of(counts.begin(), counts.end(), [&](int64_t c) { return c == most; });
  layout.recompute_layers = most;
  layout.recompute_stage_layers = uniform ? StageCounts{} : StageCounts(counts);
  return "";
}

std::string print_recompute_layers(const Layout& layout) {
  if (layout.recompute_stage_layers.empty()) return std::to_string(layout.recompute_layers);
  return fmt::format("{}", fmt::join(layout.recompute_stage_layers, ":"));
}

}  // namespace

const std::array<LayoutField, 24> kLayoutFields = {{
    {"dp", "data-parallel degree; 0 (the default) fills the GPUs left after tp·pp·cp",
     FieldSearch::searched, 2, parse_int<&Layout::dp, 0, kMaxDegree>, print_int<&Layout::dp>,
     nullptr, [](const Layout& parsed, LayoutFix& fix) { fix.dp = parsed.dp; }},
    {"tp", "tensor-parallel degree (default 1)", FieldSearch::searched, 0,
     parse_int<&Layout::tp, 1, kMaxDegree>, print_int<&Layout::tp>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.tp = parsed.tp; }},
    {"pp", "pipeline-parallel degree (default 1)", FieldSearch::searched, 1,
     parse_int<&Layout::pp, 1, kMaxDegree>, print_int<&Layout::pp>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.pp = parsed.pp; }},
    {"cp", "context-parallel degree (default 1)", FieldSearch::searched, 3,
     parse_int<&Layout::cp, 1, kMaxDegree>, print_int<&Layout::cp>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.cp = parsed.cp; }},
    {"cp_kind",
     "how context parallelism exchanges attention inputs: ring (the default; K/V blocks around a "
     "ring, overlapped), allgather (K/V gathered before attention), a2a (Ulysses: all-to-all to a "
     "head split) or hybrid (a2a inside groups of cp_a2a ranks, a ring across them)",
     FieldSearch::searched, 16,
     [](const std::string& value, Layout& layout) {
       return parse_choice(value, {"ring", "allgather", "a2a", "hybrid"},
                           {CpKind::ring, CpKind::allgather, CpKind::a2a, CpKind::hybrid},
                           layout.cp_kind);
     },
     [](const Layout& layout) { return std::string(to_string(layout.cp_kind)); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.cp_kind = parsed.cp_kind; },
     [](const Layout& layout) { return layout.cp_kind == CpKind::ring; }},
    {"cp_a2a",
     "with cp_kind=hybrid: CP ranks in each all-to-all group (innermost; Megatron-LM "
     "--hierarchical-context-parallel-sizes cp_a2a cp/cp_a2a); 0 otherwise",
     FieldSearch::searched, 17, parse_int<&Layout::cp_a2a, 0, kMaxDegree>,
     print_int<&Layout::cp_a2a>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.cp_a2a = parsed.cp_a2a; },
     [](const Layout& layout) { return layout.cp_a2a == 0; }},
    {"ep", "expert-parallel degree, carved out of the dp·cp ranks (default 1)",
     FieldSearch::searched, 4, parse_int<&Layout::ep, 1, kMaxDegree>, print_int<&Layout::ep>,
     nullptr, [](const Layout& parsed, LayoutFix& fix) { fix.ep = parsed.ep; }},
    {"etp",
     "expert tensor-parallel degree: experts split over etp ranks, a divisor of tp (default: tp; "
     "etp < tp lays the experts out as etp × ep × expert-dp over each stage's tp·cp·dp ranks)",
     FieldSearch::searched, 22, parse_int<&Layout::etp, 1, kMaxDegree>,
     [](const Layout& layout) { return fmt::format("{}", layout.expert_tp()); },
     [](Layout& layout) { layout.etp = 0; },
     [](const Layout& parsed, LayoutFix& fix) { fix.etp = parsed.etp; },
     [](const Layout& layout) { return !layout.folds_experts(); }},
    {"ep_overlap",
     "MoE dispatch/combine all-to-alls overlapped with another micro-batch's compute (default "
     "false; the search turns it on where the framework overlaps them)",
     FieldSearch::searched, 18,
     [](const std::string& value, Layout& layout) {
       return parse_boolean(value, layout.ep_overlap);
     },
     [](const Layout& layout) { return print_bool(layout.ep_overlap); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.ep_overlap = parsed.ep_overlap; },
     [](const Layout& layout) { return !layout.ep_overlap; }},
    {"zero", "ZeRO stage: 0 none, 1 optimizer states, 2 + gradients, 3 + parameters (default 1)",
     FieldSearch::searched, 5,
     [](const std::string& value, Layout& layout) {
       int64_t stage = 0;
       std::string rule = parse_integer(value, 0, 3, stage);
       if (rule.empty()) layout.zero = static_cast<int>(stage);
       return rule;
     },
     [](const Layout& layout) { return fmt::format("{}", layout.zero); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.zero = parsed.zero; }},
    {"shard",
     "ZeRO shard group: 0 (the default) shards over all dp·cp ranks; N shards over the innermost "
     "N and replicates across dp·cp/N groups (hybrid sharding, HSDP)",
     FieldSearch::searched, 15, parse_int<&Layout::shard, 0, kMaxDegree>, print_int<&Layout::shard>,
     nullptr, [](const Layout& parsed, LayoutFix& fix) { fix.shard = parsed.shard; },
     [](const Layout& layout) { return layout.shard == 0; }},
    {"mbs", "micro-batch size in sequences (default 1)", FieldSearch::searched, 6,
     parse_int<&Layout::mbs, 1, kMaxDegree>, print_int<&Layout::mbs>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.mbs = parsed.mbs; }},
    {"vpp", "virtual pipeline stages (model chunks) per rank (default 1)", FieldSearch::searched, 7,
     parse_int<&Layout::vpp, 1, 1024>, print_int<&Layout::vpp>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.vpp = parsed.vpp; }},
    {"recompute", "activation recompute: none (the default), selective or full",
     FieldSearch::searched, 8,
     [](const std::string& value, Layout& layout) {
       return parse_choice(value, {"none", "selective", "full"},
                           {Recompute::none, Recompute::selective, Recompute::full},
                           layout.recompute);
     },
     [](const Layout& layout) { return std::string(to_string(layout.recompute)); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.recompute = parsed.recompute; }},
    {"recompute_modules",
     "with recompute=selective: the modules rebuilt in the backward, joined by '+', as "
     "Megatron-Core names them: core_attn (the default), layernorm, mla_up_proj, mlp, moe_act, "
     "moe, "
     "shared_experts (never searched)",
     FieldSearch::pinned_only, 23,
     [](const std::string& value, Layout& layout) -> std::string {
       const std::optional<RecomputeModules> set = parse_recompute_modules(value);
       if (!set || *set == 0)
         return fmt::format("must be one or more of {} joined by '+', each once",
                            fmt::join(recompute_module_names(), "|"));
       layout.recompute_modules = *set;
       return "";
     },
     [](const Layout& layout) { return to_string(layout.recompute_modules); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.recompute_modules = parsed.recompute_modules; },
     [](const Layout& layout) { return layout.recompute_modules == kDefaultRecomputeModules; }},
    {"recompute_layers",
     "with recompute none or selective: layers per stage fully recomputed, the rest follow "
     "recompute (Megatron's block method); with recompute=full: N > 1 keeps only every N-th "
     "layer's input and recomputes N layers at a time (the uniform method); a:b:c:… gives each "
     "pipeline stage its own count, stage 0 first (block method only) (default 0)",
     FieldSearch::searched, 9, parse_recompute_layers, print_recompute_layers, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.recompute_layers = parsed.recompute_layers; }},
    {"sp", "sequence parallelism (default: true when tp > 1)", FieldSearch::searched, 10,
     [](const std::string& value, Layout& layout) { return parse_boolean(value, layout.sp); },
     [](const Layout& layout) { return print_bool(layout.sp); },
     [](Layout& layout) { layout.sp = layout.tp > 1; },
     [](const Layout& parsed, LayoutFix& fix) { fix.sp = parsed.sp; }},
    {"schedule",
     "pipeline schedule: gpipe, 1f1b, interleaved, zb-h1, zb-h2, dualpipe (each rank also holds "
     "the mirror stage; micro-batches enter from both ends), dualpipev or zb-v (vpp=2, "
     "V-shaped), zb-interleaved (vpp >= 2, interleaved zero bubble) "
     "(default: interleaved when vpp > 1, else 1f1b)",
     FieldSearch::searched, 11,
     [](const std::string& value, Layout& layout) {
       std::vector<std::string> names;
       std::vector<Schedule> schedules;
       for (const ScheduleName& s : schedule_names()) {
         names.emplace_back(s.name);
         schedules.push_back(s.schedule);
       }
       return parse_choice(value, names, schedules, layout.schedule);
     },
     [](const Layout& layout) { return std::string(to_string(layout.schedule)); },
     [](Layout& layout) {
       layout.schedule = layout.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
     },
     [](const Layout& parsed, LayoutFix& fix) { fix.schedule = parsed.schedule; }},
    {"order", "rank order, innermost first (default tp-cp-dp-pp)", FieldSearch::searched, 14,
     parse_order, print_order, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.order = parsed.order; }},
    {"tp_overlap",
     "TP communication overlapped with GEMMs (default false; the search turns it on with sequence "
     "parallelism where the framework overlaps TP communication)",
     FieldSearch::searched, 12,
     [](const std::string& value, Layout& layout) {
       return parse_boolean(value, layout.tp_overlap);
     },
     [](const Layout& layout) { return print_bool(layout.tp_overlap); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.tp_overlap = parsed.tp_overlap; }},
    {"dispatch",
     "MoE token dispatch: alltoall (the default), allgather or deepep (one copy per node, "
     "NVLink-forwarded; never searched)",
     FieldSearch::pinned_only, 21,
     [](const std::string& value, Layout& layout) {
       return parse_choice(value, {"alltoall", "allgather", "deepep"},
                           {Dispatch::alltoall, Dispatch::allgather, Dispatch::deepep},
                           layout.dispatch);
     },
     [](const Layout& layout) { return std::string(to_string(layout.dispatch)); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.dispatch = parsed.dispatch; },
     [](const Layout& layout) { return layout.dispatch == Dispatch::alltoall; }},
    {"offload",
     "optimizer states in GPU memory (none, the default), host memory with a CPU step (cpu) or "
     "NVMe (nvme)",
     FieldSearch::searched, 19,
     [](const std::string& value, Layout& layout) {
       return parse_choice(value, {"none", "cpu", "nvme"},
                           {Offload::none, Offload::cpu, Offload::nvme}, layout.offload);
     },
     [](const Layout& layout) { return std::string(to_string(layout.offload)); }, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.offload = parsed.offload; },
     [](const Layout& layout) { return layout.offload == Offload::none; }},
    {"act_offload",
     "layers per stage whose activations go to host memory between forward and backward "
     "(default 0; never searched)",
     FieldSearch::pinned_only, 20, parse_int<&Layout::act_offload, 0, 100'000>,
     print_int<&Layout::act_offload>, nullptr,
     [](const Layout& parsed, LayoutFix& fix) { fix.act_offload = parsed.act_offload; },
     [](const Layout& layout) { return layout.act_offload == 0; }},
    {"uneven", "allow layers not divisible by pp·vpp (default false)", FieldSearch::derived, 13,
     [](const std::string& value, Layout& layout) { return parse_boolean(value, layout.uneven); },
     [](const Layout& layout) { return print_bool(layout.uneven); }, nullptr, nullptr},
}};

const LayoutField* find_layout_field(std::string_view key) {
  for (const LayoutField& field : kLayoutFields)
    if (key == field.key) return &field;
  return nullptr;
}

std::vector<std::string> layout_field_keys() {
  std::vector<std::string> keys;
  for (const LayoutField& field : kLayoutFields) keys.push_back(field.key);
  return keys;
}

}  // namespace meshplan
