#include "planner/layout_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <limits>
#include <numeric>
#include <span>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include "core/layout_rules.h"
#include "core/pipeline_placement.h"
#include "planner/hash_mix.h"
#include "planner/work_item.h"
#include "simulator/pipeline_schedule.h"

namespace meshplan {
namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    d.push_back(i);
    if (i != n / i) d.push_back(n / i);
  }
  std::sort(d.begin(), d.end());
  return d;
}

template <class T>
bool allowed(const std::optional<T>& fixed, T value) {
  return !fixed || *fixed == value;
}

struct Ranked {
  double key = 0;
  int64_t order = 0;  // enumeration index within the search: deterministic tie-break
  Layout layout;
  bool operator<(const Ranked& o) const { return key != o.key ? key < o.key : order < o.order; }
};

// Counts by name of the enumeration's pruned branches. The names are string literals, found by
// address in the loop (a std::map keyed by a fresh std::string per count cost more than the
// enumeration itself) and merged by text into the result's maps at the end.
class Tally {
 public:
  int64_t& operator[](const char* name) {
    for (auto& [key, n] : counts_)
      if (key == name) return n;
    return counts_.emplace_back(name, 0).second;
  }
  void add_to(std::map<std::string, int64_t>& out) const {
    for (const auto& [key, n] : counts_) out[key] += n;
  }
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [key, n] : counts_) f(key, n);
  }

 private:
  std::vector<std::pair<const char*, int64_t>> counts_;
};

// Counts a branch of the enumeration that breaks `rule` under its name; returns whether the
// rule holds.
bool holds(bool ok, const char* rule, Tally& skipped) {
  if (!ok) ++skipped[rule];
  return ok;
}

// Whether the search may use schedule `s`: the one --fix names, else the framework's schedules
// (CostOptions::pipeline_schedules).
bool schedule_offered(Schedule s, const LayoutFix& fix, const std::vector<Schedule>& framework) {
  if (fix.schedule) return *fix.schedule == s;
  return std::find(framework.begin(), framework.end(), s) != framework.end();
}

// Schedules to try for a pipeline shape: of those that fit it (its vpp, and the micro-batch
// count each needs: core/layout_rules.h), the one --fix names, else the framework's
// (CostOptions::pipeline_schedules). Without a pipeline the schedule is moot: 1F1B.
std::vector<Schedule> schedules_for(const Layout& layout, const LayoutFix& fix,
                                    const std::vector<Schedule>& framework,
                                    const TrainingSpec& training) {
  if (layout.pp == 1) return {Schedule::one_f_one_b};
  std::vector<Schedule> out;
  Layout probe = layout;
  for (const sim::ScheduleInfo& info : sim::schedule_table()) {
    probe.schedule = info.schedule;
    if (schedule_offered(info.schedule, fix, framework) && schedule_fits_vpp(probe) &&
        interleaving_fills_pipeline(probe, training) && dual_pipe_fits(probe, training))
      out.push_back(info.schedule);
  }
  return out;
}

// schedules_for kept by the fields of the layout it reads (core/layout_rules.h's schedule
// rules: pp, vpp, and the micro-batch count by dp and mbs), for one search's fix, framework and
// training: a search asks it of every work item, and of every pipeline shape it enumerates.
class ScheduleMemo {
 public:
  const std::vector<Schedule>& schedules(const Layout& layout, const LayoutFix& fix,
                                         const std::vector<Schedule>& framework,
                                         const TrainingSpec& training) {
    const Key key{layout.pp, layout.vpp, layout.dp, layout.mbs};
    auto it = memo_.find(key);
    if (it == memo_.end())
      it = memo_.emplace(key, schedules_for(layout, fix, framework, training)).first;
    return it->second;
  }

 private:
  using Key = std::array<int64_t, 4>;
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return static_cast<size_t>(std::apply([](auto... v) { return hashed(v...); }, key));
    }
  };
  std::unordered_map<Key, std::vector<Schedule>, KeyHash> memo_;
};

class Enumerator {
 public:
  Enumerator(const ModelSpec& model, const TrainingSpec& training, int64_t gpus,
             const ClusterSpec& cluster, const SearchOptions& options, const CostOptions& framework)
      : model_(model),
        training_(training),
        gpus_(gpus),
        levels_(cluster.network.size()),
        node_gpus_(cluster.gpus_per_node),
        domain_gpus_(cluster.network.front().span),
        options_(options),
        framework_(framework) {}

  // The work items, in enumeration order. Branches pruned by a layout rule are counted in
  // `skipped`; those the reports show (batch and interleaving rules) in `rejected`. After each
  // tp·cp·pp·dp shape's items are added, `after_shape(items, from)` may drop some of the new ones
  // (items[from] on): the list never holds more than one shape's items that will not be kept.
  template <class AfterShape>
  std::vector<WorkItem> work_items(Tally& rejected, Tally& skipped,
                                   AfterShape&& after_shape) const {
    std::vector<WorkItem> items;
    const LayoutFix& fix = options_.fix;
    for (int64_t tp : divisors(gpus_)) {
      if (!allowed(fix.tp, tp)) continue;
      Layout probe;
      probe.tp = tp;
      if (!tp_splits_model(probe, skipped)) continue;
      for (int64_t cp : divisors(gpus_ / tp)) {
        if (!allowed(fix.cp, cp)) continue;
        if (cp > 1 && framework_.cp_kinds.empty() && !fix.cp_kind) {
          ++rejected["the framework has no context parallelism"];
          continue;
        }
        probe.cp = cp;
        if (!holds(cp_splits_sequence(probe, training_), "cp_splits_sequence", skipped)) continue;
        for (int64_t pp : divisors(gpus_ / tp / cp)) {
          if (!allowed(fix.pp, pp)) continue;
          probe.pp = pp;
          if (!holds(chunks_within_layers(probe, model_), "chunks_within_layers", skipped))
            continue;
          if (pp > 1 && !offers_pipeline()) {
            ++rejected["the framework has no pipeline parallelism"];
            continue;
          }
          const int64_t dp = gpus_ / tp / cp / pp;
          if (!allowed(fix.dp, dp)) continue;
          probe.dp = dp;
          if (!batch_splits(probe, training_)) {  // probe.mbs = 1: dp divides the batch
            ++rejected["global batch not divisible by dp"];
            continue;
          }
          const size_t from = items.size();
          add_pipeline_variants(probe, items, rejected, skipped);
          after_shape(items, from);
        }
      }
    }
    return items;
  }

 private:
  // Tensor parallelism's rules, counted under the first that fails.
  bool tp_splits_model(const Layout& probe, Tally& skipped) const {
    return holds(tp_splits_heads(probe, model_), "tp_splits_heads", skipped) &&
           holds(tp_splits_kv_heads(probe, model_), "tp_splits_kv_heads", skipped) &&
           holds(tp_splits_ffn(probe, model_), "tp_splits_ffn", skipped) &&
           holds(tp_splits_expert_ffn(probe, model_), "tp_splits_expert_ffn", skipped);
  }

  // `shape` has tp, cp, pp and dp set; adds every vpp, ep, mbs, sp and order for it.
  void add_pipeline_variants(const Layout& shape, std::vector<WorkItem>& items, Tally& rejected,
                             Tally& skipped) const {
    const LayoutFix& fix = options_.fix;
    const int64_t tp = shape.tp, cp = shape.cp, pp = shape.pp, dp = shape.dp;
    const std::vector<int64_t> ep_choices = divisors(model_.moe ? model_.moe->experts : 1);
    const std::vector<int64_t> mbs_choices = divisors(training_.global_batch / dp);
    const std::vector<std::array<Dim, 4>> order_choices = orders();
    std::vector<std::pair<CpKind, int64_t>> variants;  // cp_variants' buffer
    // vpp > 1 only with pp > 1, and no more chunks than the layout rule allows
    // (chunks_within_layers): the loop's bounds.
    Layout chunked = shape;
    for (chunked.vpp = 1; (chunked.vpp == 1 || pp > 1) && chunks_within_layers(chunked, model_);
         ++chunked.vpp) {
      const int64_t vpp = chunked.vpp;
      const int64_t deficit = chunk_deficit(model_.layers, pp * vpp);
      if (!allowed(fix.vpp, vpp)) continue;
      if (vpp > 1 && !offers_chunks(vpp)) {
        ++rejected["the framework has no interleaved schedule"];
        continue;
      }
      if (deficit > options_.max_uneven_deficit) {
        ++skipped["uneven deficit above max_uneven_deficit"];
        continue;
      }
      for (int64_t ep : ep_choices) {
        if (!allowed(fix.ep, ep)) continue;
        for (int64_t etp : expert_tp_choices(tp)) {
          Layout probe = shape;
          probe.ep = ep;
          probe.etp = etp == tp ? 0 : etp;
          if (!expert_fold_fits(probe, skipped)) continue;
          if (!holds(ep_fits_dp_cp(probe), "ep_fits_dp_cp", skipped)) continue;
          for (int64_t mbs : mbs_choices) {
            if (!allowed(fix.mbs, mbs)) continue;
            probe.vpp = vpp, probe.mbs = mbs;
            if (!pipeline_schedules_fit(probe, rejected, skipped)) continue;
            for (bool sp : {true, false}) {
              if ((sp && tp == 1) || !allowed(fix.sp, sp && tp > 1)) continue;
              probe.sp = sp;
              if (!holds(etp_fold_fits(probe), "etp_fold_fits", skipped)) continue;
              if (!holds(sp_splits_sequence(probe, training_), "sp_splits_sequence", skipped))
                continue;
              cp_variants(probe, skipped, variants);
              for (const auto& [cp_kind, cp_a2a] : variants) {
                for (const auto& order : order_choices) {
                  Layout ordered = probe;
                  ordered.order = order;
                  if (!holds(etp_fold_fits(ordered), "etp_fold_fits", skipped)) continue;
                  if (fix.shard && !fixed_shard_fits(probe, order, skipped)) continue;
                  Layout layout;
                  layout.tp = tp, layout.cp = cp, layout.pp = pp, layout.dp = dp;
                  layout.vpp = vpp, layout.ep = ep, layout.mbs = mbs, layout.etp = probe.etp;
                  layout.sp = sp;
                  layout.cp_kind = cp_kind, layout.cp_a2a = cp_a2a;
                  layout.order = order;
                  // Overlap never lengthens a step in the model (exposed_after_overlap), so where
                  // the framework has it, and the TP group lies within one NVLink domain, the
                  // search takes it rather than trying both; pinned on, the rest are skipped.
                  layout.tp_overlap =
                      tp > 1 && fix.tp_overlap.value_or(sp && framework_.tp_comm_overlap);
                  if (!tp_overlap_within_domain(layout, domain_gpus_)) {
                    if (fix.tp_overlap) {
                      ++skipped["tp_overlap_within_domain"];
                      continue;
                    }
                    layout.tp_overlap = false;
                  }
                  // EP overlap likewise, within Megatron-Core's limit (vpp with pp > 1); run_item
                  // turns it off where the recompute excludes it.
                  layout.ep_overlap =
                      model_.moe && ep > 1 &&
                      fix.ep_overlap.value_or(framework_.ep_comm_overlap && (pp == 1 || vpp > 1));
                  layout.uneven = deficit > 0;
                  // Fields never searched take what --fix pins, on every candidate that can
                  // carry it.
                  layout.dispatch = fix.dispatch.value_or(Dispatch::alltoall);
                  layout.act_offload = fix.act_offload.value_or(0);
                  if (!holds(dispatch_needs_ep(layout, model_), "dispatch_needs_ep", skipped) ||
                      !holds(act_offload_within_stage(layout, model_), "act_offload_within_stage",
                             skipped))
                    continue;
                  items.emplace_back(layout);
                }
              }
            }
          }
        }
      }
    }
  }

  // The experts' tensor-parallel degrees to try with `tp`: the one --fix names; else tp and, for
  // an MoE model where the framework lays experts out apart (CostOptions::
  // expert_tensor_parallel), 1: whole experts on each rank, the EP group taking the TP ranks
  // (Megatron-Core's recipes for Mixtral, DeepSeek-V3 and Qwen3 set
  // --expert-tensor-parallel-size 1). Intermediate degrees are left to --fix.
  std::vector<int64_t> expert_tp_choices(int64_t tp) const {
    if (options_.fix.etp) return {*options_.fix.etp};
    if (!model_.moe || tp == 1 || !framework_.expert_tensor_parallel) return {tp};
    return {tp, 1};
  }

  // etp's rules that do not depend on sp or the order; a pinned HSDP group excludes the fold.
  bool expert_fold_fits(const Layout& probe, Tally& skipped) const {
    if (!holds(etp_divides_tp(probe), "etp_divides_tp", skipped) ||
        !holds(etp_needs_moe(probe, model_), "etp_needs_moe", skipped) ||
        !holds(etp_splits_expert_ffn(probe, model_), "etp_splits_expert_ffn", skipped))
      return false;
    return holds(!probe.folds_experts() || options_.fix.shard.value_or(0) == 0, "etp_fold_fits",
                 skipped);
  }

  // Context-parallel variants for a shape (Layout::cp_kind, cp_a2a): ring alone without CP;
  // else the kind --fix names or the framework's (CostOptions::cp_kinds), hybrid with the CP
  // ranks inside one node as its all-to-all group (unless --fix names cp_a2a). Variants whose
  // all-to-all cannot split the heads, or whose hybrid group is 1 or all of cp, are counted.
  // Into `out` (emptied first), whose storage the caller keeps from call to call.
  void cp_variants(const Layout& probe, Tally& skipped,
                   std::vector<std::pair<CpKind, int64_t>>& out) const {
    const LayoutFix& fix = options_.fix;
    static constexpr CpKind kRingAlone[] = {CpKind::ring};
    std::span<const CpKind> kinds = fix.cp_kind ? std::span<const CpKind>(&*fix.cp_kind, 1)
                                                : std::span<const CpKind>(framework_.cp_kinds);
    if (probe.cp == 1 && !fix.cp_kind) kinds = kRingAlone;
    out.clear();
    for (CpKind kind : kinds) {
      Layout l = probe;
      l.cp_kind = kind;
      if (kind == CpKind::hybrid)
        l.cp_a2a = fix.cp_a2a.value_or(
            node_gpus_ % probe.tp == 0 ? std::gcd(probe.cp, node_gpus_ / probe.tp) : 1);
      if (!holds(cp_kind_needs_cp(l), "cp_kind_needs_cp", skipped) ||
          !holds(cp_a2a_splits_cp(l), "cp_a2a_splits_cp", skipped) ||
          !holds(cp_a2a_splits_heads(l, model_), "cp_a2a_splits_heads", skipped))
        continue;
      out.emplace_back(kind, l.cp_a2a);
    }
  }

  // Whether some schedule the search may try runs this pipeline shape. DualPipe variants
  // that need more micro-batches are counted under dual_pipe_fits; a shape no schedule runs
  // under the interleaving rule when vpp > 1 (Megatron-LM's multiple of pp), else dual_pipe_fits.
  bool pipeline_schedules_fit(const Layout& probe, Tally& rejected, Tally& skipped) const {
    if (probe.pp == 1) return true;
    for (Schedule s : {Schedule::dualpipe, Schedule::dualpipev}) {
      Layout l = probe;
      l.schedule = s;
      if (offers(s) && schedule_fits_vpp(l) && !dual_pipe_fits(l, training_))
        ++skipped["dual_pipe_fits"];
    }
    if (!schedule_memo_.schedules(probe, options_.fix, framework_.pipeline_schedules, training_)
             .empty())
      return true;
    ++rejected[probe.vpp > 1 ? "interleaving needs micro-batches in multiples of pp"
                             : "dual_pipe_fits"];
    return false;
  }

  bool offers(Schedule s) const {
    return schedule_offered(s, options_.fix, framework_.pipeline_schedules);
  }
  // Whether some offered schedule runs vpp > 1 chunks per rank: the interleaved ones any vpp,
  // the V-shaped ones (dualpipev, zb-v) vpp = 2.
  bool offers_chunks(int64_t vpp) const {
    return offers(Schedule::interleaved) || offers(Schedule::zb_interleaved) ||
           (vpp == 2 && (offers(Schedule::dualpipev) || offers(Schedule::zb_v)));
  }
  bool offers_pipeline() const {
    return options_.fix.schedule || !framework_.pipeline_schedules.empty();
  }

  // A shard group pinned with --fix must fit this shape's data-parallel ranks in `order`.
  bool fixed_shard_fits(const Layout& probe, const std::array<Dim, 4>& order,
                        Tally& skipped) const {
    Layout l = probe;
    l.order = order;
    l.shard = *options_.fix.shard;
    return holds(shard_divides_dp_cp(l), "shard_divides_dp_cp", skipped) &&
           holds(shard_holds_expert_groups(l), "shard_holds_expert_groups", skipped);
  }

  std::vector<std::array<Dim, 4>> orders() const {
    if (options_.fix.order) return {*options_.fix.order};
    std::vector<std::array<Dim, 4>> out = {{Dim::tp, Dim::cp, Dim::dp, Dim::pp}};
    if (options_.search_orders && levels_ > 2) out.push_back({Dim::tp, Dim::cp, Dim::pp, Dim::dp});
    return out;
  }

  const ModelSpec& model_;
  const TrainingSpec& training_;
  int64_t gpus_;
  size_t levels_ = 0;
  int64_t node_gpus_ = 0;
  int64_t domain_gpus_ = 0;  // GPUs of one NVLink domain (the innermost network level)
  const SearchOptions& options_;
  const CostOptions& framework_;
  mutable ScheduleMemo schedule_memo_;
};

// Whether a layer costs no more than `other` in every term a step time grows with that a CP
// variant changes (CostModel::CpTerms: compute, the attention forward selective recompute
// repeats, the weight gradients ZB-H1 defers, the exposed CP exchange); the CP variant is all
// that differs between the two.
bool no_slower(const CostModel::CpTerms::Layer& a, const CostModel::CpTerms::Layer& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] <= b[i])) return false;
  return true;
}

// A work item's fields but its CP variant and rank order. The enumeration emits the items of one
// such key in one run (add_pipeline_variants' two innermost loops), so each shape's CP variants
// (those of one order in the run) lie within it.
std::array<int64_t, 9> without_cp_variant_and_order(const Layout& l) {
  return {l.expert_tp(),
          l.tp,
          l.cp,
          l.pp,
          l.dp,
          l.vpp,
          l.ep,
          l.mbs,
          (l.sp ? 1 : 0) + (l.tp_overlap ? 2 : 0) + (l.ep_overlap ? 4 : 0) + (l.uneven ? 8 : 0)};
}

// Within one shape's items (`group`, in index order): marks in `dropped` (indexed from item
// `from`) each that another beats or ties in every per-layer term (the earlier one kept on a tie).
// Returns how many it marked.
int64_t drop_dominated_in_group(CostModel& model, const std::vector<WorkItem>& items,
                                const std::vector<size_t>& group,
                                std::vector<CostModel::CpTerms>& costs, std::vector<char>& dropped,
                                size_t from) {
  int64_t marked = 0;
  costs.clear();
  for (size_t i : group) costs.push_back(model.cp_terms(items[i].base()));
  for (size_t a = 0; a < group.size(); ++a) {
    const CostModel::CpTerms& mine = costs[a];
    for (size_t b = 0; b < group.size(); ++b) {
      if (b == a || dropped[group[b] - from]) continue;
      const CostModel::CpTerms& other = costs[b];
      const bool beaten = no_slower(other.dense, mine.dense) && no_slower(other.moe, mine.moe);
      const bool tied =
          beaten && no_slower(mine.dense, other.dense) && no_slower(mine.moe, other.moe);
      if (beaten && (!tied || group[b] < group[a])) {
        dropped[group[a] - from] = 1;
        ++marked;
        break;
      }
    }
  }
  return marked;
}

// The end of the run of items from `start` that share without_cp_variant_and_order.
size_t run_end(const std::vector<WorkItem>& items, size_t start) {
  const std::array<int64_t, 9> key = without_cp_variant_and_order(items[start].base());
  size_t end = start + 1;
  while (end < items.size() && without_cp_variant_and_order(items[end].base()) == key) ++end;
  return end;
}

// Marks in `dropped` (indexed from item `from`) the items of the runs [start, end) in `runs` whose
// CP variant another variant of the same shape beats or ties in every per-layer term
// (drop_dominated_in_group), each run's shapes split by their rank order. Returns how many it
// marked.
int64_t mark_dominated_cp_kinds(CostModel& model, const std::vector<WorkItem>& items,
                                const std::vector<std::pair<size_t, size_t>>& runs,
                                std::vector<char>& dropped, size_t from) {
  int64_t marked = 0;
  std::vector<size_t> group;              // one shape's items, by index
  std::vector<bool> grouped;              // of the run's items: taken into a group
  std::vector<CostModel::CpTerms> costs;  // the group's, in the same order
  for (const auto& [start, end] : runs) {
    grouped.assign(end - start, false);
    for (size_t first = start; first < end; ++first) {
      if (grouped[first - start]) continue;
      group.clear();
      for (size_t i = first; i < end; ++i) {
        if (grouped[i - start] || items[i].base().order != items[first].base().order) continue;
        grouped[i - start] = true;
        group.push_back(i);
      }
      marked += drop_dominated_in_group(model, items, group, costs, dropped, from);
    }
  }
  return marked;
}

// Which of `parts` search threads checks a run of CP variants: one chosen by the fields its layer
// compute depends on (CostModel::compute_of's key), so that each compute is priced by one cost
// model only, whichever batch of items the run comes in.
size_t dominance_part(const Layout& l, size_t parts) {
  uint64_t h = 0;
  for (int64_t v : {l.tp, l.expert_tp(), l.cp, l.ep, l.mbs, l.sp ? int64_t{1} : int64_t{0}})
    h = (h ^ static_cast<uint64_t>(v)) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>((h ^ (h >> 31)) % parts);
}

// Drops the work items from items[from] on whose CP variant (Layout::cp_kind) another variant of
// the same shape beats or ties in every per-layer term (the earlier one kept on a tie): the kinds
// leave memory unchanged and step time grows with each term, so the dropped layouts never rank
// above the kept ones. Counted in `skipped` under "cp_kind no faster than another". `from` must
// start a run (a run never spans two tp·cp·pp·dp shapes). The runs with CP (cp > 1) are shared
// among `models` (one per search thread, the first on this thread) by dominance_part and marked
// side by side: which model prices a layer does not change its cost, so the same items are
// dropped whatever the thread count.
void drop_dominated_cp_kinds(const std::vector<CostModel*>& models, std::vector<WorkItem>& items,
                             size_t from, Tally& skipped) {
  std::vector<char> dropped(items.size() - from, 0);
  std::vector<std::vector<std::pair<size_t, size_t>>> runs(models.size());  // [start, end) by part
  size_t with_cp = 0;
  for (size_t start = from, end = 0; start < items.size(); start = end) {
    end = run_end(items, start);
    if (items[start].cp() == 1) continue;
    runs[dominance_part(items[start].base(), models.size())].emplace_back(start, end);
    ++with_cp;
  }
  // Few runs are not worth a thread each: the first model takes them all.
  constexpr size_t kRunsPerThread = 16;
  if (with_cp < kRunsPerThread * models.size()) {
    for (size_t p = 1; p < runs.size(); ++p)
      runs[0].insert(runs[0].end(), runs[p].begin(), runs[p].end());
    runs.resize(1);
    std::sort(runs[0].begin(), runs[0].end());  // enumeration order, as the caches like it
  }
  std::vector<int64_t> marked(runs.size(), 0);
  std::vector<std::thread> pool;
  for (size_t p = 1; p < runs.size(); ++p)
    pool.emplace_back(
        [&, p] { marked[p] = mark_dominated_cp_kinds(*models[p], items, runs[p], dropped, from); });
  marked[0] = mark_dominated_cp_kinds(*models[0], items, runs[0], dropped, from);
  for (std::thread& t : pool) t.join();
  int64_t total = 0;
  for (int64_t m : marked) total += m;
  if (total > 0) skipped["cp_kind no faster than another"] += total;
  size_t kept = from;
  for (size_t i = from; i < items.size(); ++i)
    if (!dropped[i - from]) items[kept++] = items[i];
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(kept), items.end());
}

// Why a generated layout was rejected before timing; counted by index in the hot loop and
// reported under kRejectNames.
enum class Reject { model_states, activations, buffers, host, count };
constexpr const char* kRejectNames[] = {
    "exceeds memory: model states dominate", "exceeds memory: activations dominate",
    "exceeds memory: logits/buffers dominate", "host memory or NVMe (offload)"};

// One search thread's results over the work items it ran: counts, its best top_k (a bound for
// pruning, then merged with the other threads'), the smallest layout. Its size does not grow
// with the items.
struct ThreadResult {
  int64_t evaluated = 0, feasible = 0;
  int64_t pruned = 0;           // fit, but never timed: their step-time floor beat no kept layout
  int64_t counted_at_once = 0;  // of `evaluated`: in lost tails and unfit heads
  std::vector<Ranked> best;     // at most top_k
  std::array<int64_t, static_cast<size_t>(Reject::count)> rejected{};
  Tally launcher_refused;          // fit, but the launcher refuses them: by the field it refuses
  std::optional<Ranked> smallest;  // key = peak bytes
};

// Whether the launcher runs a layout it answered `field` of (nullptr: it runs it). A refused one
// is counted under the field the launcher refuses.
bool launcher_runs(const char* field, ThreadResult& out) {
  if (!field) return true;
  ++out.launcher_refused[field];
  return false;
}

// Whether a layout that fits may be ranked: the launcher the plan is for runs it (or none is
// set).
bool launcher_runs(const SearchOptions& options, const CostModel& model, const Layout& layout,
                   ThreadResult& out) {
  if (!options.launcher.refuses) return true;
  return launcher_runs(options.launcher.refuses(model.model(), model.training(), layout), out);
}

void keep_best(std::vector<Ranked>& best, Ranked r, size_t k) {
  if (best.size() == k && !(r < best.back())) return;
  best.insert(std::upper_bound(best.begin(), best.end(), r), std::move(r));
  if (best.size() > k) best.pop_back();
}

// The key a layout needs to beat to enter `best`: above it, it cannot (ties go to the earlier
// layout, and every kept one is earlier or better).
double entry_bound(const std::vector<Ranked>& best, size_t k) {
  return best.size() == k ? best.back().key : std::numeric_limits<double>::infinity();
}

Reject rejected_for(MemoryTerm term) {
  return term == MemoryTerm::states        ? Reject::model_states
         : term == MemoryTerm::activations ? Reject::activations
                                           : Reject::buffers;
}

Reject dominant_term(const StageTotals& s) { return rejected_for(largest_term(s)); }

Reject dominant_term(const StageMemory& s) {
  return dominant_term(StageTotals{s.params_bytes + s.grads_bytes + s.optimizer_bytes,
                                   s.activations_bytes, s.other_bytes(), s.total_bytes()});
}

// A recompute mode the search offers, with the counts of layers it may recompute in full beside
// it (recompute_layers 0, step, 2·step, ... up to max_layers).
struct RecomputeChoice {
  Recompute rc;
  int64_t max_layers = 0;
  int64_t step = 1;
};

// The recompute modes the search offers: selective only where the framework has it
// (CostOptions::partial_recompute); a count of layers beside recompute=none only where it has
// the block method (CostOptions::block_recompute), in multiples of vpp (Megatron-LM's
// --recompute-num-layers counts layers per virtual stage), and never beside selective, which no
// framework combines with a count. A count --fix pins is offered with none and selective alike.
// One list for the search and for its size count.
// Selective recompute is left out unless pinned where it drops nothing (attention_core_stores_
// activations false: flash attention in BF16): its memory is recompute=none's and its time more.
std::vector<RecomputeChoice> recompute_choices(const CostModel& model, const LayoutFix& fix,
                                               int64_t stage_layers, int64_t vpp,
                                               bool keep_selective = false) {
  const CostOptions& o = model.options();
  std::vector<RecomputeChoice> out;
  for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
    if (!allowed(fix.recompute, rc)) continue;
    if (rc == Recompute::selective && !o.partial_recompute) continue;
    const bool modules_pinned =
        fix.recompute_modules && *fix.recompute_modules != kDefaultRecomputeModules;
    if (rc == Recompute::selective && !fix.recompute && !keep_selective && !modules_pinned &&
        !model.selective_recompute_saves())
      continue;
    if (rc == Recompute::selective && modules_pinned) {
      Layout probe;
      probe.recompute_modules = *fix.recompute_modules;
      if (!recompute_modules_fit_model(probe, model.model())) continue;  // none can run them
    }
    RecomputeChoice choice{rc};
    if (rc != Recompute::full && o.partial_recompute && fix.recompute_layers) {
      choice.max_layers = stage_layers;
    } else if (rc == Recompute::none && o.partial_recompute && o.block_recompute) {
      choice.max_layers = stage_layers;
      choice.step = vpp;
    }
    out.push_back(choice);
  }
  return out;
}

// Hybrid-sharding groups to try for a shape (Layout::shard): the one --fix names, else full
// sharding (0) and, where the framework shards hybrid (CostOptions::hybrid_sharding), the
// dp·cp ranks inside one domain of each network level below the outermost (a node, a pod)
// when the data-parallel group spans more than that domain: shard on the fast fabric,
// all-reduce the shards across it.
std::vector<int64_t> shard_choices(const CostModel& model, const Layout& base,
                                   const LayoutFix& fix) {
  if (base.folds_experts()) return {0};  // etp_fold_fits: the fold takes no shard group
  if (fix.shard) return {*fix.shard};
  std::vector<int64_t> out = {0};
  if (!model.options().hybrid_sharding) return out;
  const GroupShape group = dp_group(base);
  const size_t levels = model.cluster().network.size();
  for (size_t level = 0; level + 1 < levels; ++level) {
    Layout probe = base;
    probe.shard = model.collectives().members_within(group, level);
    if (probe.shard <= 1 || probe.shard >= base.dp * base.cp) continue;
    if (!shard_divides_dp_cp(probe) || !shard_holds_expert_groups(probe)) continue;
    if (std::find(out.begin(), out.end(), probe.shard) == out.end()) out.push_back(probe.shard);
  }
  return out;
}

// ZeRO stages searched: the framework's (CostOptions::zero_stages) unless --fix names one, and
// with a shard group only those that shard something (zero ≥ 1).
bool zero_allowed(const CostOptions& o, const LayoutFix& fix, int zero, int64_t shard) {
  const bool offered = fix.zero || std::find(o.zero_stages.begin(), o.zero_stages.end(), zero) !=
                                       o.zero_stages.end();
  return offered && allowed(fix.zero, zero) && (shard == 0 || zero >= 1);
}

// A candidate too big for GPU memory, retried with its optimizer states off the GPU on the
// framework's devices in order (host memory first, then NVMe): offloading only adds time, so a
// candidate that fits without it is never retried. Tried only where it can help: ZeRO ≥ 1
// (offload_needs_zero), a host the cluster describes, and the peak stage fitting once its
// optimizer states leave. Each try is an evaluated layout. On success `layout` carries the
// device. `shape`: the layout's (CostModel::shape_ref), which the retries share.
bool offload_fit(CostModel& model, Layout& layout, CostModel::ShapeRef shape,
                 const StageMemory& peak, int64_t& order, ThreadResult& out) {
  const double hbm = static_cast<double>(model.cluster().gpu.hbm_bytes);
  const double slack = 1 + model.options().memory.allocator_slack_fraction;
  if (layout.zero < 1 || !model.cluster().host.known() ||
      peak.total_bytes() - peak.optimizer_bytes * slack > hbm)
    return false;
  for (Offload device : model.options().offload_devices) {
    Layout off = layout;
    off.offload = device;
    ++out.evaluated;
    ++order;
    const double bytes = model.peak_stage_memory(off, shape).total_bytes();
    if (!out.smallest || bytes < out.smallest->key) out.smallest = Ranked{bytes, order, off};
    if (bytes > hbm) return false;
    if (!model.host_fits(off)) continue;
    layout = off;
    return true;
  }
  return false;
}

// The peak stage of a layout as built (StageMemory) or as its sums alone (StageTotals, for a
// layout that offloads nothing: bit for bit the built stage's, stage_totals), and its bytes.
double total_of(const StageMemory& peak) { return peak.total_bytes(); }
double total_of(const StageTotals& peak) { return peak.total; }
void peak_of(const CostModel& model, const Layout& l, CostModel::ShapeRef shape, StageMemory& out) {
  out = model.peak_stage_memory(l, shape);
}
void peak_of(const CostModel& model, const Layout& l, CostModel::ShapeRef shape, StageTotals& out) {
  std::array<bool, 4> zero{};
  zero[static_cast<size_t>(l.zero)] = true;
  std::array<StageTotals, 4> peaks;
  model.peak_totals_by_zero(l, shape, zero, peaks);
  out = peaks[static_cast<size_t>(l.zero)];
}

// Whether a layout too big for GPU memory is retried in uniform recompute groups: full recompute,
// where the framework groups layers and no count is pinned.
bool retried_in_groups(const CostModel& model, const Layout& layout, const SearchOptions& options) {
  return layout.recompute == Recompute::full && model.options().uniform_recompute &&
         !options.fix.recompute_layers;
}

// A full-recompute candidate too big for GPU memory, retried with the uniform method's groups
// (CostModel::uniform_recompute_group): the same compute, fewer stored layer inputs. Taken when
// it needs less memory (one evaluated layout); `layout` and `peak` then carry it. `shape`: the
// layout's (CostModel::shape_ref), which the retry shares.
template <class Peak>
bool uniform_groups_help(CostModel& model, Layout& layout, CostModel::ShapeRef shape, Peak& peak,
                         int64_t& order, ThreadResult& out) {
  const int64_t group = model.uniform_recompute_group(layout, shape);
  if (group <= 1) return false;
  Layout grouped = layout;
  grouped.recompute_layers = group;
  ++out.evaluated;
  ++order;
  Peak p;
  peak_of(model, grouped, shape, p);
  if (!out.smallest || total_of(p) < out.smallest->key)
    out.smallest = Ranked{total_of(p), order, grouped};
  if (total_of(p) >= total_of(peak)) return false;
  layout = grouped;
  peak = p;
  return true;
}

// Layouts per schedule and ZeRO stage of an item whose stages hold `stage_layers` layers: its
// recompute choices' counts.
int64_t recompute_count(const CostModel& model, const LayoutFix& fix, int64_t stage_layers,
                        int64_t vpp, bool keep_selective) {
  int64_t n = 0;
  for (const auto& [rc, max_layers, step] :
       recompute_choices(model, fix, stage_layers, vpp, keep_selective)) {
    n += fix.recompute_layers
             ? (*fix.recompute_layers <= max_layers && *fix.recompute_layers % step == 0)
             : max_layers / step + 1;
  }
  return n;
}

// recompute_choices and recompute_count as the work item before asked them, answered again when
// the next asks with the same inputs, and schedules_for by its inputs (ScheduleMemo): one
// search's model and --fix throughout.
class ItemChoices {
 public:
  const std::vector<RecomputeChoice>& recompute(const CostModel& model, const LayoutFix& fix,
                                                int64_t stage_layers, int64_t vpp) {
    const std::array<int64_t, 2> key{stage_layers, vpp};
    if (key != recompute_key_) {
      recompute_ = recompute_choices(model, fix, stage_layers, vpp);
      recompute_key_ = key;
    }
    return recompute_;
  }
  const std::vector<Schedule>& schedules(const CostModel& model, const LayoutFix& fix,
                                         const Layout& base) {
    return schedules_.schedules(base, fix, model.options().pipeline_schedules, model.training());
  }
  // One hybrid-sharding group of an item (shard_choices) and the ZeRO stages searched with it
  // (zero_allowed).
  struct Shard {
    int64_t shard = 0;
    std::array<bool, 4> zeros{};
  };
  // shard_choices, with their ZeRO stages, kept by the fields of the layout it reads (the degrees
  // and the rank order): a search asks it of every work item, twice (count_items, run_item), and
  // the items of one pipeline shape differ mostly in fields it does not read.
  const std::vector<Shard>& shards(const CostModel& model, const LayoutFix& fix,
                                   const Layout& base) {
    const ShardKey key{base.tp,
                       base.cp,
                       base.pp,
                       base.dp,
                       base.ep,
                       base.etp,
                       static_cast<int64_t>(base.order[0]),
                       static_cast<int64_t>(base.order[1]),
                       static_cast<int64_t>(base.order[2]),
                       static_cast<int64_t>(base.order[3])};
    auto it = shards_.find(key);
    if (it == shards_.end()) {
      std::vector<Shard> found;
      for (int64_t shard : shard_choices(model, base, fix)) {
        Shard& s = found.emplace_back();
        s.shard = shard;
        for (int zero = 0; zero <= 3; ++zero)
          s.zeros[static_cast<size_t>(zero)] = zero_allowed(model.options(), fix, zero, shard);
      }
      it = shards_.emplace(key, std::move(found)).first;
    }
    return it->second;
  }
  // recompute_count without and (with `selective`, else 0) with keep_selective.
  const std::array<int64_t, 2>& recompute_counts(const CostModel& model, const LayoutFix& fix,
                                                 int64_t stage_layers, int64_t vpp,
                                                 bool selective) {
    const std::array<int64_t, 3> key{stage_layers, vpp, selective ? 1 : 0};
    if (key != counts_key_) {
      counts_ = {recompute_count(model, fix, stage_layers, vpp, false),
                 selective ? recompute_count(model, fix, stage_layers, vpp, true) : 0};
      counts_key_ = key;
    }
    return counts_;
  }

 private:
  std::array<int64_t, 2> recompute_key_{-1, -1};
  std::vector<RecomputeChoice> recompute_;
  std::array<int64_t, 3> counts_key_{-1, -1, -1};
  std::array<int64_t, 2> counts_{};
  ScheduleMemo schedules_;
  using ShardKey = std::array<int64_t, 10>;
  struct ShardKeyHash {
    size_t operator()(const ShardKey& key) const {
      return static_cast<size_t>(std::apply([](auto... v) { return hashed(v...); }, key));
    }
  };
  std::unordered_map<ShardKey, std::vector<Shard>, ShardKeyHash> shards_;
};

// A search thread: its own cost model (the caches are per instance), timing buffers and results.
struct SearchThread {
  CostModel* model;  // the search's model of this thread (search_layouts' `models`)
  CostModel::PipelineTiming timing;
  ThreadResult out;
  ItemChoices choices;
  std::array<StageTotals, 4> peaks{};  // run_zero_stages' buffer
};

// What rank_fitting knows of one recompute mode's pipeline timings in one shape and schedule.
struct FloorState {
  int64_t timed_layers = -1;  // the recompute_layers t.timing holds (−1: none yet)
  // A recompute_layers ≥ 1 whose floor was above the entry bound (−1: none). The floor grows
  // with recompute_layers from 1 on (same shape, more layers recomputed: every per-class term
  // grows, and each schedule's pipeline time grows with them), while the bound only falls, so
  // the later counts cannot rank either. A relative margin far above rounding keeps it exact.
  int64_t beyond_from = -1;
};
constexpr double kFloorMargin = 1e-9;

// Whether rank_fitting prunes a layout recomputing `rl` layers without timing it: a count beyond
// one whose floor already lost (FloorState::beyond_from; only set when pruning by step time).
// run_zero_stages asks it before the call: most layouts that fit end here.
bool beyond_floor(const FloorState& floor, int64_t rl, const SearchOptions& options) {
  return options.prune && floor.beyond_from >= 1 && rl > floor.beyond_from;
}

// Times a layout that fits and keeps it if it ranks. The pipeline part, in `t.timing`, is shared
// by the ZeRO stages of one recompute choice. A layout whose step-time floor is above the
// thread's entry bound cannot rank and is not timed further: exact, the floor being a true lower
// bound in floating point (CostModel::step_time_floor_s).
void rank_fitting(SearchThread& t, const Layout& layout, CostModel::ShapeRef shape,
                  double peak_bytes, int64_t order, const SearchOptions& options,
                  FloorState& floor) {
  const auto k = static_cast<size_t>(options.top_k);
  if (options.objective == Objective::memory) {
    keep_best(t.out.best, Ranked{peak_bytes, order, layout}, k);
    return;
  }
  const int64_t rl = layout.recompute_layers;
  if (beyond_floor(floor, rl, options)) {
    ++t.out.pruned;
    return;
  }
  const double bound = entry_bound(t.out.best, k);
  if (floor.timed_layers != rl) {
    // Where the shape's bound lost by the margin, the floor did too: pruned as below, without
    // timing (and beyond_from set where the floor would set it).
    if (options.prune &&
        t.model->step_time_lower_bound_s(layout, shape) > bound * (1 + kFloorMargin)) {
      if (rl >= 1 && layout.recompute != Recompute::full && floor.beyond_from < 0)
        floor.beyond_from = rl;
      ++t.out.pruned;
      return;
    }
    t.model->time_pipeline(layout, shape, t.timing);
    floor.timed_layers = rl;
  }
  const double floor_s = CostModel::step_time_floor_s(t.timing);
  if (options.prune && floor_s > bound) {
    if (rl >= 1 && layout.recompute != Recompute::full && floor_s > bound * (1 + kFloorMargin) &&
        floor.beyond_from < 0)
      floor.beyond_from = rl;
    ++t.out.pruned;
    return;
  }
  const double step_s = t.model->finish_step(layout, shape, t.timing);
  keep_best(t.out.best, Ranked{step_s, order, layout}, k);
}

// A layout too big for GPU memory (or offloading): retried with uniform recompute groups and
// with its optimizer states offloaded where the search allows, then ranked or rejected under
// the reason it did not fit. `peak` is its peak stage, built (StageMemory) or, where nothing may
// be offloaded (!allow_offload, !layout.offloads()), its sums alone (StageTotals: the same bytes,
// retry and dominant term without building a stage); `layout` carries the retry that fit.
template <class Peak>
void place_with_retries(SearchThread& t, Layout& layout, CostModel::ShapeRef shape, Peak peak,
                        int64_t& order, bool allow_offload, const SearchOptions& options,
                        FloorState& floor) {
  CostModel& model = *t.model;
  ThreadResult& out = t.out;
  const double hbm = static_cast<double>(model.cluster().gpu.hbm_bytes);
  double bytes = total_of(peak);
  if (bytes > hbm && retried_in_groups(model, layout, options) &&
      uniform_groups_help(model, layout, shape, peak, order, out))
    bytes = total_of(peak);
  bool offloaded = false;
  if constexpr (std::is_same_v<Peak, StageMemory>)
    offloaded = bytes > hbm && allow_offload && offload_fit(model, layout, shape, peak, order, out);
  if (offloaded) {
    bytes = model.peak_stage_memory(layout, shape).total_bytes();
  } else if (bytes > hbm) {
    ++out.rejected[static_cast<size_t>(dominant_term(peak))];
    return;
  } else if (layout.offload != Offload::none && !model.host_fits(layout)) {
    ++out.rejected[static_cast<size_t>(Reject::host)];
    return;
  }
  if (!launcher_runs(options, model, layout, out)) return;
  ++out.feasible;
  rank_fitting(t, layout, shape, bytes, order, options, floor);
}

// EP overlap for one recompute choice and schedule. Megatron-Core's EP overlap excludes full and
// block recomputation: the search's own choice gives way to them (a --fix keeps it on).
// DualPipe overlaps them by construction (its F&B pairs), DualPipeV where the framework overlaps
// them at all; --fix ep_overlap=false keeps them exposed.
bool ep_overlap_for(const CostModel& model, const Layout& base, Schedule schedule, Recompute rc,
                    int64_t rl, const LayoutFix& fix) {
  const bool dual = schedule == Schedule::dualpipe ||
                    (schedule == Schedule::dualpipev && model.options().ep_comm_overlap);
  return (base.ep_overlap && (fix.ep_overlap || (rc != Recompute::full && rl == 0))) ||
         (dual && model.model().moe && base.ep > 1 && fix.ep_overlap.value_or(true));
}

// One recompute choice of a shape and schedule (`layout` without its ZeRO stage): each ZeRO stage
// `zeros` marks is generated, placed on memory and, if it fits, ranked. Nothing offloaded and no
// retry to try when a layout does not fit is the fast path (peak_totals_by_zero).
void run_zero_stages(SearchThread& t, Layout layout, CostModel::ShapeRef shape,
                     const std::array<bool, 4>& zeros, int64_t& order, const SearchOptions& options,
                     bool allow_offload, FloorState& floor, std::array<bool, 4>& fits) {
  CostModel& model = *t.model;
  ThreadResult& out = t.out;
  const double hbm = static_cast<double>(model.cluster().gpu.hbm_bytes);
  const Offload offload = layout.offload;
  const int64_t rl = layout.recompute_layers;
  const bool plain = !layout.offloads();
  const bool retries = allow_offload || retried_in_groups(model, layout, options);
  // Filled for the stages `zeros` marks, the only ones read: the thread's buffer, which saves
  // zeroing a fresh one per call.
  std::array<StageTotals, 4>& peaks = t.peaks;
  // The launcher's answers for the ZeRO stages that fit as they are: asked at once, at the first
  // that fits, where two or more do (for one, `refuses` is the cheaper question).
  std::array<const char*, 4> refused{};
  bool asked = false, by_zero = false;
  if (plain) model.peak_totals_by_zero(layout, shape, zeros, peaks);
  fits = {};
  for (int zero = 0; zero <= 3; ++zero) {
    if (!zeros[static_cast<size_t>(zero)]) continue;
    // The retries below may change the recompute group and the offload device.
    layout.zero = zero, layout.recompute_layers = rl, layout.offload = offload;
    ++out.evaluated;
    ++order;
    if (!plain) {  // offloading: the general path
      StageMemory peak = model.peak_stage_memory(layout, shape);
      const double bytes = peak.total_bytes();
      if (!out.smallest || bytes < out.smallest->key) out.smallest = Ranked{bytes, order, layout};
      place_with_retries(t, layout, shape, std::move(peak), order, allow_offload, options, floor);
      continue;
    }
    const StageTotals& peak = peaks[static_cast<size_t>(zero)];
    if (!out.smallest || peak.total < out.smallest->key)
      out.smallest = Ranked{peak.total, order, layout};
    fits[static_cast<size_t>(zero)] = peak.total <= hbm;
    if (peak.total <= hbm) {
      if (!asked && options.launcher.refuses && options.launcher.refuses_by_zero) {
        asked = true;
        std::array<bool, 4> fitting{};
        for (size_t z = static_cast<size_t>(zero) + 1; z < zeros.size(); ++z) {
          fitting[z] = zeros[z] && peaks[z].total <= hbm;
          by_zero = by_zero || fitting[z];
        }
        if (by_zero) {
          fitting[static_cast<size_t>(zero)] = true;
          options.launcher.refuses_by_zero(model.model(), model.training(), layout, fitting,
                                           refused);
        }
      }
      if (by_zero ? !launcher_runs(refused[static_cast<size_t>(zero)], out)
                  : !launcher_runs(options, model, layout, out))
        continue;
      ++out.feasible;
      if (beyond_floor(floor, rl, options)) {  // rank_fitting's first answer, without the call
        ++out.pruned;
        continue;
      }
      rank_fitting(t, layout, shape, peak.total, order, options, floor);
    } else if (!retries) {
      ++out.rejected[static_cast<size_t>(dominant_term(peak))];
    } else if (!allow_offload) {
      place_with_retries(t, layout, shape, peak, order, allow_offload, options, floor);
    } else {
      place_with_retries(t, layout, shape, model.peak_stage_memory(layout, shape), order,
                         allow_offload, options, floor);
    }
  }
}

// Whether run_item may count a recompute choice's head of counts at which no ZeRO stage fits at
// once (count_unfit_head): the per-layout path of those counts would place each on memory alone
// and reject it, without a retry (none without offloading or full recompute) or a question to the
// launcher (asked only of layouts that fit).
bool head_countable(const Layout& layout, const SearchOptions& options, bool allow_offload) {
  return options.count_at_once && !options.fix.recompute_layers && !allow_offload &&
         layout.recompute != Recompute::full && !layout.offloads();
}

// Whether run_item may count a recompute choice's lost tail at once (count_lost_tail): as for a
// head, each of those counts would be placed on memory alone; besides, every one that fits would
// be pruned (beyond_floor), and the launcher, if any, answers alike for them.
bool tail_countable(const Layout& layout, int64_t step, const SearchOptions& options,
                    bool allow_offload) {
  return head_countable(layout, options, allow_offload) && options.prune &&
         options.objective != Objective::memory && options.top_k >= 1 &&
         (!options.launcher.refuses || (options.launcher.counts_alike && step % layout.vpp == 0));
}

// The least index in [lo, hi] at which `holds` is true, by bisection, given that it is at hi and
// stays so from its first index on.
template <class Holds>
int64_t first_holding(int64_t lo, int64_t hi, Holds holds) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (holds(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// Whether a ZeRO stage `zeros` marks fits at recompute count `count` (`peaks` takes their totals).
bool any_fits(const CostModel& model, Layout& layout, CostModel::ShapeRef shape,
              const std::array<bool, 4>& zeros, int64_t count, std::array<StageTotals, 4>& peaks) {
  const double hbm = static_cast<double>(model.cluster().gpu.hbm_bytes);
  layout.recompute_layers = count;
  model.peak_totals_by_zero(layout, shape, zeros, peaks);
  for (size_t z = 0; z < zeros.size(); ++z)
    if (zeros[z] && peaks[z].total <= hbm) return true;
  return false;
}

// Of the counts from, from + step, ... (`n` of them) of one recompute choice, over which the
// activations settle (CostModel::activations_settle): the index of the first at which a ZeRO
// stage `zeros` marks fits, found by bisection (no peak total grows), given that one fits at the
// last and none at the first.
int64_t first_fitting(const CostModel& model, Layout layout, CostModel::ShapeRef shape,
                      const std::array<bool, 4>& zeros, int64_t from, int64_t step, int64_t n,
                      std::array<StageTotals, 4>& peaks) {
  return first_holding(1, n - 1, [&](int64_t i) {
    return any_fits(model, layout, shape, zeros, from + i * step, peaks);
  });
}

// Of the counts from, from + step, ... of one recompute choice (`layout`, its ZeRO stage aside),
// over which the activations settle (CostModel::activations_settle): under ZeRO stage `zero`, the
// index in [lo, hi] at which whether `term` is largest in every stage class changes, by bisection
// (CostModel::largest_in_every_class: the states are so from one count on, the activations up to
// one). For the states the first index at which they are, given that they are at hi and not at
// lo − 1; for the activations the first at which they are not, given that they are at lo − 1 and
// not at hi.
int64_t term_changes_at(const CostModel& model, Layout layout, CostModel::ShapeRef shape, int zero,
                        MemoryTerm term, int64_t from, int64_t step, int64_t lo, int64_t hi) {
  return first_holding(lo, hi, [&](int64_t i) {
    layout.recompute_layers = from + i * step;
    return model.largest_in_every_class(layout, shape, zero, term) == (term == MemoryTerm::states);
  });
}

// The rejections run_zero_stages counts one by one for layouts that do not fit, for the first
// `unfit[z]` of the counts from, from + step, ... under each ZeRO stage z (none fitting; no
// retry, nothing offloaded), over which the activations settle: each under the dominant term of
// its peak stage. Where one term is largest in every stage class it is that term whichever class
// peaks (CostModel::largest_in_every_class): the activations up to one count, the states from
// one on, each run found by bisection and counted at once; the counts between are placed one by
// one.
void count_rejections(SearchThread& t, Layout layout, CostModel::ShapeRef shape, int64_t from,
                      int64_t step, const std::array<int64_t, 4>& unfit) {
  CostModel& model = *t.model;
  ThreadResult& out = t.out;
  // The terms largest in every class at a count, asked for every ZeRO stage with counts there
  // and kept (the stages share their first count, and mostly their last).
  struct Probe {
    int64_t index = -1;
    std::array<uint8_t, 4> bits{};
  };
  std::array<Probe, 5> probes{};  // at most the first count and each stage's last
  const auto largest = [&](size_t z, MemoryTerm term, int64_t index) {
    auto probe = std::find_if(probes.begin(), probes.end(),
                              [&](const Probe& p) { return p.index == index || p.index < 0; });
    if (probe == probes.end()) probe = probes.end() - 1;  // all taken: the last is asked anew
    if (probe->index != index) {
      layout.recompute_layers = from + index * step;
      std::array<bool, 4> here{};
      for (size_t k = 0; k < unfit.size(); ++k) here[k] = index < unfit[k];
      model.largest_in_every_class_by_zero(layout, shape, here, probe->bits);
      probe->index = index;
    }
    return ((probe->bits[z] >> static_cast<unsigned>(term)) & 1U) != 0;
  };
  // By ZeRO stage: the counts in [placed_from, placed_to) are placed one by one.
  std::array<int64_t, 4> placed_from{}, placed_to{};
  for (size_t z = 0; z < unfit.size(); ++z) {
    const int64_t u = unfit[z];
    if (u == 0) continue;
    const int zero = static_cast<int>(z);
    int64_t activations_to = 0;  // the activations are largest before it
    if (largest(z, MemoryTerm::activations, 0))
      activations_to = largest(z, MemoryTerm::activations, u - 1)
                           ? u
                           : term_changes_at(model, layout, shape, zero, MemoryTerm::activations,
                                             from, step, 1, u - 1);
    int64_t states_from = u;  // the states are largest from it on
    if (activations_to < u && largest(z, MemoryTerm::states, u - 1))
      states_from = largest(z, MemoryTerm::states, activations_to)
                        ? activations_to
                        : term_changes_at(model, layout, shape, zero, MemoryTerm::states, from,
                                          step, activations_to + 1, u - 1);
    out.rejected[static_cast<size_t>(Reject::activations)] += activations_to;
    out.rejected[static_cast<size_t>(Reject::model_states)] += u - states_from;
    placed_from[z] = activations_to, placed_to[z] = states_from;
  }
  std::array<StageTotals, 4>& peaks = t.peaks;
  int64_t begin = std::numeric_limits<int64_t>::max(), end = 0;
  for (size_t z = 0; z < unfit.size(); ++z) {
    if (placed_from[z] >= placed_to[z]) continue;
    begin = std::min(begin, placed_from[z]);
    end = std::max(end, placed_to[z]);
  }
  for (int64_t i = begin; i < end; ++i) {
    std::array<bool, 4> placed{};
    for (size_t z = 0; z < unfit.size(); ++z) placed[z] = placed_from[z] <= i && i < placed_to[z];
    if (std::find(placed.begin(), placed.end(), true) == placed.end()) continue;
    layout.recompute_layers = from + i * step;
    model.peak_totals_by_zero(layout, shape, placed, peaks);
    for (size_t z = 0; z < placed.size(); ++z)
      if (placed[z]) ++out.rejected[static_cast<size_t>(dominant_term(peaks[z]))];
  }
}

// Counts the layouts of recompute counts from, from + step, ... up to `to` of one recompute
// choice (`layout`, its ZeRO stage aside), all beyond a count whose step-time floor lost
// (FloorState::beyond_from), as run_zero_stages would one by one: the same evaluated, feasible,
// pruned, rejected and launcher counts and the same `order`, without placing each. Exact because
// - no stage class's activations grow over the counts (CostModel::activations_settle), so neither
//   does any ZeRO stage's peak total: each stage fits from one count on (found by bisection),
//   and the counts before it do not fit: their rejections are counted by count_rejections;
// - the least total of each ZeRO stage is at the last count, placed first: when none is below
//   ThreadResult::smallest, no layout of the tail replaces it (its test is a strict <);
// - every layout of the tail that fits is pruned (beyond_floor), and the launcher answers alike
//   for all counts (tail_countable), so it is asked once, at the first.
// False, having counted nothing, where the smallest layout could change: run_item goes on layout
// by layout. REQUIRES: tail_countable, and activations_settle(..., from, to, step) <= from.
bool count_lost_tail(SearchThread& t, Layout layout, CostModel::ShapeRef shape,
                     const std::array<bool, 4>& zeros, int64_t from, int64_t to, int64_t step,
                     int64_t& order, const SearchOptions& options) {
  CostModel& model = *t.model;
  ThreadResult& out = t.out;
  std::array<StageTotals, 4>& peaks = t.peaks;
  const int64_t n = (to - from) / step + 1;  // counts in the tail
  layout.recompute_layers = from + (n - 1) * step;
  model.peak_totals_by_zero(layout, shape, zeros, peaks);
  int64_t stages = 0;
  for (size_t z = 0; z < zeros.size(); ++z) {
    if (!zeros[z]) continue;
    ++stages;
    if (!out.smallest || peaks[z].total < out.smallest->key) return false;
  }
  const double hbm = static_cast<double>(model.cluster().gpu.hbm_bytes);
  std::array<int64_t, 4> fits_from{};  // by ZeRO stage: the first count's index that fits (n: none)
  for (size_t z = 0; z < zeros.size(); ++z)
    if (zeros[z]) fits_from[z] = peaks[z].total > hbm ? n : -1;
  // Most stages that fit at the last count fit at the first already: asked together first.
  std::array<bool, 4> open{};
  for (size_t z = 0; z < zeros.size(); ++z) open[z] = zeros[z] && fits_from[z] < 0;
  layout.recompute_layers = from;
  if (std::find(open.begin(), open.end(), true) != open.end())
    model.peak_totals_by_zero(layout, shape, open, peaks);
  for (size_t z = 0; z < zeros.size(); ++z) {
    if (!open[z]) continue;
    std::array<bool, 4> marked{};  // this stage alone: the others' totals at `from` stay read
    marked[z] = true;
    fits_from[z] = peaks[z].total <= hbm
                       ? 0
                       : first_fitting(model, layout, shape, marked, from, step, n, peaks);
  }
  std::array<int64_t, 4> unfit{};
  for (size_t z = 0; z < zeros.size(); ++z) unfit[z] = zeros[z] ? fits_from[z] : 0;
  count_rejections(t, layout, shape, from, step, unfit);
  layout.recompute_layers = from;
  for (size_t z = 0; z < zeros.size(); ++z) {
    if (!zeros[z] || fits_from[z] == n) continue;
    const int64_t fitting = n - fits_from[z];
    const char* refused = nullptr;
    if (options.launcher.refuses) {
      layout.zero = static_cast<int>(z);
      refused = options.launcher.refuses(model.model(), model.training(), layout);
    }
    if (refused) {
      out.launcher_refused[refused] += fitting;
    } else {
      out.feasible += fitting;
      out.pruned += fitting;
    }
  }
  const int64_t layouts = n * stages;
  out.evaluated += layouts;
  out.counted_at_once += layouts;
  order += layouts;
  return true;
}

// Fewer counts left than this are placed one by one: the bisection's questions would cost more
// than the placing (mixtral-8x7b's heads are of 1-4 counts).
constexpr int64_t kLeastHead = 5;

// Of the counts from, from + step, ... up to `to` of one recompute choice (`layout`, its ZeRO
// stage aside), the first at which a ZeRO stage `zeros` marks fits (past `to` where none does),
// the counts before it counted as run_zero_stages would one by one: the same evaluated and
// rejected counts and the same `order`, without placing each. Exact because no stage class's
// activations grow over the counts (`settled`, CostModel::activations_settle, asked here once per
// recompute choice), so neither does any ZeRO stage's peak total: whether any fits is false up
// to one count and true from it on, found by bisection; and every total of those counts is above
// the GPU's memory, so none is below ThreadResult::smallest where that fits (its test is a strict
// <). `from` itself, having counted nothing, where that does not hold: the search then places
// the counts one by one, as it does where fewer than kLeastHead counts are left. REQUIRES:
// head_countable.
int64_t count_unfit_head(SearchThread& t, Layout layout, CostModel::ShapeRef shape,
                         const std::array<bool, 4>& zeros, int64_t from, int64_t to, int64_t step,
                         int64_t& settled, int64_t& order) {
  CostModel& model = *t.model;
  ThreadResult& out = t.out;
  const double hbm = static_cast<double>(model.cluster().gpu.hbm_bytes);
  const int64_t n = (to - from) / step + 1;  // counts from `from` on
  if (n < kLeastHead || !out.smallest || !(out.smallest->key <= hbm)) return from;
  if (settled < 0) settled = model.activations_settle(layout, shape, from, to, step);
  if (settled > from) return from;
  std::array<StageTotals, 4>& peaks = t.peaks;
  if (any_fits(model, layout, shape, zeros, from, peaks)) return from;
  const int64_t first =  // index of the first count at which one fits (n: none)
      any_fits(model, layout, shape, zeros, from + (n - 1) * step, peaks)
          ? first_fitting(model, layout, shape, zeros, from, step, n, peaks)
          : n;
  std::array<int64_t, 4> unfit{};
  int64_t stages = 0;
  for (size_t z = 0; z < zeros.size(); ++z) {
    if (!zeros[z]) continue;
    unfit[z] = first;
    ++stages;
  }
  count_rejections(t, layout, shape, from, step, unfit);
  const int64_t layouts = first * stages;
  out.evaluated += layouts;
  out.counted_at_once += layouts;
  order += layouts;
  return from + first * step;
}

// The block method with a count per pipeline stage (Layout::recompute_stage_layers, issue 12):
// for each ZeRO stage `zeros` marks, every stage recomputes the fewest layers (multiples of
// `step`) with which it fits (CostModel::least_recompute_by_stage), and the layout is ranked.
// Only where those counts differ between stages: equal counts are a layout of the uniform loop,
// as are the all-zero counts of a ZeRO stage that fits without recompute (`fit_without`).
// No less memory than uniform counts, but less recompute on the later stages, which hold fewer
// micro-batches in flight. `base`: the layout without its recompute counts and ZeRO stage.
void run_stage_recompute(SearchThread& t, Layout base, const std::array<bool, 4>& zeros,
                         const std::array<bool, 4>& fit_without, int64_t step, int64_t& order,
                         const SearchOptions& options) {
  CostModel& model = *t.model;
  const CostModel::ShapeRef uniform = model.shape_ref(base);
  std::vector<int64_t> counts;
  double peak_bytes = 0;
  for (int zero = 0; zero <= 3; ++zero) {
    if (!zeros[static_cast<size_t>(zero)] || fit_without[static_cast<size_t>(zero)]) continue;
    base.zero = zero;
    if (!model.least_recompute_by_stage(base, uniform, step, counts, peak_bytes)) continue;
    const int64_t most = *std::max_element(counts.begin(), counts.end());
    if (*std::min_element(counts.begin(), counts.end()) == most) continue;
    Layout layout = base;
    layout.recompute_layers = most;
    layout.recompute_stage_layers = counts;
    ++t.out.evaluated;
    ++order;
    if (!t.out.smallest || peak_bytes < t.out.smallest->key)
      t.out.smallest = Ranked{peak_bytes, order, layout};
    if (!launcher_runs(options, model, layout, t.out)) continue;
    ++t.out.feasible;
    FloorState floor;
    rank_fitting(t, layout, model.shape_ref(layout), peak_bytes, order, options, floor);
  }
}

// Whether the search generates per-stage recompute counts: not for a launcher that refuses them
// (no launcher runs them today: launcher_export.cc), whose plan could never rank one.
bool launcher_takes_stage_recompute(const CostModel& model, const SearchOptions& options) {
  if (!options.launcher.refuses) return true;
  Layout probe;
  probe.pp = 2;
  probe.recompute_layers = 1;
  probe.recompute_stage_layers = {1, 0};
  const char* field = options.launcher.refuses(model.model(), model.training(), probe);
  return !field || std::string_view(field) != "recompute_layers";
}

// The most layers one of `pp` pipeline stages holds: its share of the model's, rounded up, and
// the multi-token-prediction layers the last stage adds.
int64_t most_stage_layers(const ModelSpec& m, int64_t pp) {
  return (m.layers + pp - 1) / pp + m.mtp_layers;
}

static_assert(std::is_trivially_copyable_v<Layout>, "the search copies layouts freely");

void run_item(SearchThread& t, const WorkItem& item, int64_t base_order,
              const SearchOptions& options, bool allow_offload, bool stage_recompute) {
  CostModel& model = *t.model;
  const Layout base = item.base();
  model.forget_shapes();
  const int64_t stage_layers = most_stage_layers(model.model(), item.pp());
  int64_t order = base_order;
  const std::vector<RecomputeChoice>& choices =
      t.choices.recompute(model, options.fix, stage_layers, item.vpp());
  const std::vector<Schedule>& schedules = t.choices.schedules(model, options.fix, base);
  for (const auto& [shard, zeros] : t.choices.shards(model, options.fix, base)) {
    for (Schedule schedule : schedules) {
      std::array<std::optional<CostModel::ShapeRef>, 2> shapes;  // by ep_overlap
      for (const auto& [rc, max_layers, step] : choices) {
        FloorState floor;
        std::array<bool, 4> fits{}, fit_without{};  // fit_without: at recompute_layers 0
        int64_t settled = -1;  // activations_settle of the counts past the first it was asked of
                               // (−1: not asked yet), for unfit heads and lost tails
        for (int64_t rl = 0; rl <= max_layers; rl += step) {
          if (!allowed(options.fix.recompute_layers, rl)) continue;
          Layout layout = base;
          layout.schedule = schedule, layout.recompute = rc, layout.recompute_layers = rl;
          layout.recompute_modules =
              rc == Recompute::selective
                  ? options.fix.recompute_modules.value_or(kDefaultRecomputeModules)
                  : kDefaultRecomputeModules;
          layout.shard = shard;
          layout.ep_overlap = ep_overlap_for(model, base, schedule, rc, rl, options.fix);
          layout.offload = options.fix.offload.value_or(Offload::none);
          // Within one shard group and schedule the shape changes with ep_overlap alone.
          std::optional<CostModel::ShapeRef>& known = shapes[layout.ep_overlap ? 1 : 0];
          if (!known) known = model.shape_ref(layout);
          floor.timed_layers = -1;
          run_zero_stages(t, layout, *known, zeros, order, options, allow_offload, floor, fits);
          if (rl == 0) fit_without = fits;
          if (rl + step > max_layers) continue;
          if (floor.beyond_from < 1) {
            // Nothing fits yet: the counts up to the first at which a ZeRO stage fits are
            // counted at once where they can be, and the loop goes on from that count.
            if (std::find(fits.begin(), fits.end(), true) == fits.end() &&
                head_countable(layout, options, allow_offload))
              rl = count_unfit_head(t, layout, *known, zeros, rl + step, max_layers, step, settled,
                                    order) -
                   step;
            continue;
          }
          if (!tail_countable(layout, step, options, allow_offload)) continue;
          if (settled < 0)
            settled = model.activations_settle(layout, *known, rl + step, max_layers, step);
          if (settled <= rl + step && count_lost_tail(t, layout, *known, zeros, rl + step,
                                                      max_layers, step, order, options))
            break;
        }
        if (stage_recompute && rc == Recompute::none && max_layers > 0 && item.pp() > 1 &&
            !options.fix.recompute_layers &&
            options.fix.offload.value_or(Offload::none) == Offload::none && !base.offloads()) {
          Layout layout = base;
          layout.schedule = schedule, layout.recompute = rc, layout.shard = shard;
          layout.ep_overlap = ep_overlap_for(model, base, schedule, rc, step, options.fix);
          run_stage_recompute(t, layout, zeros, fit_without, step, order, options);
        }
      }
    }
  }
}

// Upper bound on the layouts one work item generates, for deterministic enumeration indices:
// shard groups (at most one per network level) × schedules (the table's) × recompute choices ×
// ZeRO stages.
int64_t item_span(const CostModel& model, const Layout& base) {
  const int64_t stage_layers = most_stage_layers(model.model(), base.pp);
  const int64_t shards = static_cast<int64_t>(model.cluster().network.size()) + 1;
  const auto schedules = static_cast<int64_t>(sim::schedule_table().size());
  const int64_t offload_tries = 1 + static_cast<int64_t>(model.options().offload_devices.size());
  // Per choice: the layout, a uniform-group retry for full recompute, the offload tries; one
  // per-stage recompute layout per ZeRO stage.
  return shards * schedules * (2 * (stage_layers + 1) + 3) * 4 * (1 + offload_tries) + 1;
}

// The layouts run_item generates for `items`, retries aside: schedules × recompute choices ×
// ZeRO stages (summed over the shard groups) per item; with `count_selective`, also the count
// that keeps recompute=selective where it drops nothing (recompute_choices' keep_selective).
struct LayoutCount {
  int64_t layouts = 0, with_selective = 0;
};
LayoutCount count_items(const CostModel& model, const std::vector<WorkItem>& items,
                        const LayoutFix& fix, bool count_selective) {
  LayoutCount total;
  ItemChoices choices;
  for (const WorkItem& item : items) {
    const Layout base = item.base();
    const int64_t stage_layers = most_stage_layers(model.model(), item.pp());
    int64_t zeros = 0;  // summed over the shard groups
    for (const ItemChoices::Shard& s : choices.shards(model, fix, base))
      zeros += std::count(s.zeros.begin(), s.zeros.end(), true);
    const auto schedules = static_cast<int64_t>(choices.schedules(model, fix, base).size());
    const std::array<int64_t, 2>& counts =
        choices.recompute_counts(model, fix, stage_layers, item.vpp(), count_selective);
    total.layouts += schedules * counts[0] * zeros;
    if (count_selective) total.with_selective += schedules * counts[1] * zeros;
  }
  return total;
}

}  // namespace

Result<LayoutFix> parse_layout_fix(const std::string& text) {
  Result<Layout> parsed = parse_layout(text, "--fix");
  if (!parsed) return parsed.errors();
  LayoutFix fix;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string key = text.substr(start, text.find('=', start) - start);
    if (const LayoutField* field = find_layout_field(key)) {
      if (!field->pin) {
        return Diagnostic{{"--fix", 1, static_cast<int>(start) + 1, text},
                          key,
                          "",
                          "cannot be fixed in a search (use estimate --layout)"};
      }
      if (!parsed->recompute_stage_layers.empty() &&
          std::string_view(field->key) == "recompute_layers") {
        return Diagnostic{{"--fix", 1, static_cast<int>(start) + 1, text},
                          key,
                          field->print(parsed.value()),
                          "takes one count in a search, which chooses per-stage counts itself "
                          "(give a per-stage list to estimate --layout)"};
      }
      field->pin(parsed.value(), fix);
    }
    start = end + 1;
  }
  return fix;
}

SearchResult search_layouts(const CostModel& prototype, int64_t gpus,
                            const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result;
  if (options.launcher.refuses) result.launcher = options.launcher.launcher;
  Enumerator enumerator(prototype.model(), prototype.training(), gpus, prototype.cluster(), options,
                        prototype.options());
  Tally rejected, skipped;
  // One cost model per search thread (the caches are per instance), made first: the CP-dominance
  // check runs on them side by side, and each then serves its search thread, so the layer costs
  // the check computed are not computed (nor held) twice.
  CostModel first(prototype);
  std::deque<CostModel> helpers;  // a deque: each stays where `models` points
  std::vector<CostModel*> models{&first};
  for (int i = 1; i < options.threads; ++i) models.push_back(&helpers.emplace_back(prototype));
  // The check takes the items of several tp·cp·pp·dp shapes at once (a few thousand: enough to
  // share among the threads, few enough to hold before dropping).
  constexpr size_t kDominanceBatch = 4096;
  size_t unchecked = 0;  // the first item the check has not seen
  auto check = [&](std::vector<WorkItem>& all) {
    drop_dominated_cp_kinds(models, all, unchecked, skipped);
    unchecked = all.size();
  };
  std::vector<WorkItem> items =
      enumerator.work_items(rejected, skipped, [&](std::vector<WorkItem>& all, size_t) {
        if (all.size() - unchecked >= kDominanceBatch) check(all);
      });
  check(items);
  rejected.add_to(result.rejected);
  skipped.add_to(result.skipped);
  const LayoutCount count =
      count_items(prototype, items, options.fix, !prototype.selective_recompute_saves());
  const int64_t n = count.layouts;
  if (!prototype.selective_recompute_saves()) {
    const int64_t useless = count.with_selective - n;
    if (useless > 0)
      result.skipped["recompute=selective with nothing to drop (flash attention)"] += useless;
  }
  if (n > options.max_layouts) {
    result.refused = n;
    return result;
  }
  std::vector<int64_t> base_order(items.size());
  for (size_t i = 1; i < items.size(); ++i)
    base_order[i] = base_order[i - 1] + item_span(prototype, items[i - 1].base());
  const bool stage_recompute = launcher_takes_stage_recompute(first, options);
  auto run_all = [&](bool allow_offload) {
    const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(items.size())));
    std::deque<SearchThread> per_thread;
    for (int i = 0; i < threads; ++i)
      per_thread.emplace_back(SearchThread{models[static_cast<size_t>(i)], {}, {}, {}, {}});
    // Each thread runs first the items whose layer compute its model priced in the CP-dominance
    // check (dominance_part), in enumeration order, then helps with the others' (the caches are
    // per model: a compute priced on one thread is not priced again on another unless it helps).
    std::vector<std::vector<size_t>> queues(per_thread.size());
    for (size_t i = 0; i < items.size(); ++i)
      queues[dominance_part(items[i].base(), queues.size())].push_back(i);
    std::vector<std::atomic<size_t>> next(queues.size());
    std::atomic<int64_t> done{0};
    auto worker = [&](SearchThread& t, size_t own) {
      for (size_t k = 0; k < queues.size(); ++k) {
        const std::vector<size_t>& queue = queues[(own + k) % queues.size()];
        std::atomic<size_t>& cursor = next[(own + k) % queues.size()];
        for (size_t at = cursor++; at < queue.size(); at = cursor++) {
          const size_t i = queue[at];
          run_item(t, items[i], base_order[i], options, allow_offload, stage_recompute);
          int64_t d = ++done;
          if (options.progress) options.progress(d, static_cast<int64_t>(items.size()));
        }
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < per_thread.size(); ++t)
      pool.emplace_back(worker, std::ref(per_thread[t]), t);
    worker(per_thread[0], 0);
    for (auto& t : pool) t.join();
    std::vector<ThreadResult> out;
    for (SearchThread& t : per_thread) out.push_back(std::move(t.out));
    return out;
  };
  std::vector<ThreadResult> per_thread = run_all(false);
  // Offload is the last resort: its host-side costs are priced at datasheet ceilings (PCIe,
  // DRAM bandwidth for the CPU step), optimistic enough that meshplan does not rank a layout
  // above GPU-only ones on them. Only when nothing fits on the GPUs alone does the search run
  // again with the framework's offload devices (--fix offload=... searches with it directly).
  int64_t first_pass = 0, first_feasible = 0;
  for (const ThreadResult& r : per_thread) first_pass += r.evaluated, first_feasible += r.feasible;
  if (first_feasible == 0 && !options.fix.offload && prototype.cluster().host.known() &&
      !prototype.options().offload_devices.empty()) {
    per_thread = run_all(true);
    result.offload_fallback = true;
    result.evaluated += first_pass;
  }

  // Merged under the total order of (key, enumeration index): the same top_k and smallest
  // whichever thread ran which item.
  std::vector<Ranked> best;
  std::optional<Ranked> smallest;
  for (const ThreadResult& r : per_thread) {
    result.evaluated += r.evaluated;
    result.feasible += r.feasible;
    result.pruned += r.pruned;
    result.counted_at_once += r.counted_at_once;
    for (size_t i = 0; i < r.rejected.size(); ++i)
      if (r.rejected[i] > 0) result.rejected[kRejectNames[i]] += r.rejected[i];
    r.launcher_refused.for_each([&](const char* field, int64_t n) {
      result.launcher_refused += n;
      result.rejected[fmt::format("{} cannot run it: {}", result.launcher, field)] += n;
    });
    for (const Ranked& x : r.best) keep_best(best, x, static_cast<size_t>(options.top_k));
    if (r.smallest && (!smallest || *r.smallest < *smallest)) smallest = r.smallest;
  }
  CostModel model(prototype);
  for (const Ranked& r : best) result.ranked.push_back(model.evaluate(r.layout, /*detail=*/true));
  if (result.ranked.empty() && smallest) result.smallest = model.evaluate(smallest->layout, true);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

int64_t count_search_layouts(const CostModel& model, int64_t gpus, const SearchOptions& options) {
  Tally rejected, skipped;
  CostModel costs(model);
  std::vector<WorkItem> items =
      Enumerator(model.model(), model.training(), gpus, model.cluster(), options, model.options())
          .work_items(rejected, skipped, [&](std::vector<WorkItem>& all, size_t from) {
            drop_dominated_cp_kinds({&costs}, all, from, skipped);
          });
  return count_items(model, items, options.fix, /*count_selective=*/false).layouts;
}

namespace {

Diagnostic search_size_error(int64_t n, const std::string& origin) {
  return Diagnostic{{origin, 0, 0, ""},
                    "",
                    "",
                    fmt::format("the search would evaluate {} layouts; at most {} are searched "
                                "(pin fields such as pp, vpp or recompute with --fix)",
                                n, kMaxSearchLayouts)};
}

}  // namespace

std::optional<Diagnostic> check_search_size(const CostModel& model, int64_t gpus,
                                            const SearchOptions& options,
                                            const std::string& origin) {
  const int64_t n = count_search_layouts(model, gpus, options);
  if (n <= options.max_layouts) return std::nullopt;
  return search_size_error(n, origin);
}

std::optional<Diagnostic> check_search_size(const SearchResult& result, const std::string& origin) {
  if (result.refused <= 0) return std::nullopt;
  return search_size_error(result.refused, origin);
}

}  // namespace meshplan
