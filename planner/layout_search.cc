#include "planner/layout_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

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

// The outer part of a layout, fixed per work item; the inner loops vary the rest.
struct WorkItem {
  Layout base;  // tp, cp, pp, dp, vpp, ep, mbs, sp, uneven set
};

struct Ranked {
  double key = 0;
  int64_t order = 0;  // enumeration index within the search: deterministic tie-break
  Layout layout;
  bool operator<(const Ranked& o) const { return key != o.key ? key < o.key : order < o.order; }
};

class Enumerator {
 public:
  Enumerator(const ModelSpec& m, const TrainingSpec& t, int64_t gpus, size_t levels,
             const SearchOptions& o)
      : m_(m), t_(t), gpus_(gpus), levels_(levels), o_(o) {}

  std::vector<WorkItem> work_items(std::map<std::string, int64_t>& rejected) const {
    std::vector<WorkItem> items;
    for (int64_t tp : divisors(gpus_)) {
      if (!allowed(o_.fix.tp, tp) || !tp_ok(tp)) continue;
      for (int64_t cp : divisors(gpus_ / tp)) {
        if (!allowed(o_.fix.cp, cp) || (cp > 1 && t_.seq_len % (2 * cp) != 0)) continue;
        for (int64_t pp : divisors(gpus_ / tp / cp)) {
          if (!allowed(o_.fix.pp, pp) || pp > m_.layers) continue;
          const int64_t dp = gpus_ / tp / cp / pp;
          if (!allowed(o_.fix.dp, dp)) continue;
          if (t_.global_batch % dp != 0) {
            ++rejected["global batch not divisible by dp"];
            continue;
          }
          add_pipeline_variants(tp, cp, pp, dp, items, rejected);
        }
      }
    }
    return items;
  }

 private:
  bool tp_ok(int64_t tp) const {
    if (m_.heads % tp != 0) return false;
    if (m_.kv_heads % tp != 0 && tp % m_.kv_heads != 0) return false;
    if (m_.dense_layers() > 0 && m_.ffn_hidden % tp != 0) return false;
    return !m_.moe || m_.moe->expert_ffn_hidden % tp == 0;
  }

  void add_pipeline_variants(int64_t tp, int64_t cp, int64_t pp, int64_t dp,
                             std::vector<WorkItem>& items,
                             std::map<std::string, int64_t>& rejected) const {
    for (int64_t v = 1; pp * v <= m_.layers && (v == 1 || pp > 1); ++v) {
      const int64_t chunks = pp * v;
      const int64_t deficit = (m_.layers + chunks - 1) / chunks * chunks - m_.layers;
      if (!allowed(o_.fix.vpp, v) || deficit > o_.max_uneven_deficit) continue;
      for (int64_t ep : divisors(m_.moe ? m_.moe->experts : 1)) {
        if (!allowed(o_.fix.ep, ep) || (dp * cp) % ep != 0) continue;
        for (int64_t mbs : divisors(t_.global_batch / dp)) {
          if (!allowed(o_.fix.mbs, mbs)) continue;
          const int64_t micro = t_.global_batch / dp / mbs;
          if (v > 1 && micro % pp != 0) {
            ++rejected["interleaving needs micro-batches in multiples of pp"];
            continue;
          }
          for (bool sp : {true, false}) {
            if ((sp && tp == 1) || !allowed(o_.fix.sp, sp && tp > 1)) continue;
            if (sp && (t_.seq_len / cp) % tp != 0) continue;
            for (const auto& order : orders()) {
              Layout l;
              l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.vpp = v, l.ep = ep, l.mbs = mbs;
              l.sp = sp;
              l.tp_overlap = tp > 1 && o_.fix.tp_overlap.value_or(false);
              l.uneven = deficit > 0;
              l.order = order;
              items.push_back({l});
            }
          }
        }
      }
    }
  }

  std::vector<std::array<Dim, 4>> orders() const {
    if (o_.fix.order) return {*o_.fix.order};
    std::vector<std::array<Dim, 4>> out = {{Dim::tp, Dim::cp, Dim::dp, Dim::pp}};
    if (o_.search_orders && levels_ > 2) out.push_back({Dim::tp, Dim::cp, Dim::pp, Dim::dp});
    return out;
  }

  const ModelSpec& m_;
  const TrainingSpec& t_;
  int64_t gpus_;
  size_t levels_ = 0;
  const SearchOptions& o_;
};

// Schedules worth trying for a pipeline shape.
std::vector<Schedule> schedules_for(const Layout& l, const LayoutFix& fix) {
  std::vector<Schedule> all;
  if (l.vpp > 1)
    all = {Schedule::interleaved};
  else if (l.pp == 1)
    all = {Schedule::one_f_one_b};
  else
    all = {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zb_h1};
  std::vector<Schedule> out;
  for (Schedule s : all)
    if (allowed(fix.schedule, s) || (l.pp == 1 && fix.schedule)) out.push_back(s);
  return out;
}

struct ItemResult {
  int64_t evaluated = 0, feasible = 0;
  std::vector<Ranked> best;  // at most top_k
  std::map<std::string, int64_t> rejected;
  std::optional<Ranked> smallest;  // key = peak bytes
};

double rank_key(const Estimate& e, Objective o) {
  return o == Objective::memory ? e.peak_bytes : e.step_time_s;
}

void keep_best(std::vector<Ranked>& best, Ranked r, size_t k) {
  if (best.size() == k && !(r < best.back())) return;
  best.insert(std::upper_bound(best.begin(), best.end(), r), std::move(r));
  if (best.size() > k) best.pop_back();
}

const char* dominant_term(const StageMemory& s) {
  const double states = s.params_bytes + s.grads_bytes + s.optimizer_bytes;
  const char* what = states >= s.activations_bytes && states >= s.other_bytes()
                         ? "exceeds memory: model states dominate"
                     : s.activations_bytes >= s.other_bytes()
                         ? "exceeds memory: activations dominate"
                         : "exceeds memory: logits/buffers dominate";
  return what;
}

ItemResult run_item(CostModel& model, const WorkItem& item, int64_t base_order,
                    const SearchOptions& o) {
  ItemResult out;
  const int64_t stage_layers = (model.model().layers + item.base.pp - 1) / item.base.pp;
  int64_t order = base_order;
  for (Schedule schedule : schedules_for(item.base, o.fix)) {
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
      if (!allowed(o.fix.recompute, rc)) continue;
      const int64_t max_layers = rc == Recompute::full ? 0 : stage_layers;
      for (int64_t rl = 0; rl <= max_layers; ++rl) {
        if (!allowed(o.fix.recompute_layers, rl)) continue;
        for (int zero = 0; zero <= 3; ++zero) {
          if (!allowed(o.fix.zero, zero)) continue;
          Layout l = item.base;
          l.schedule = schedule, l.recompute = rc, l.recompute_layers = rl, l.zero = zero;
          ++out.evaluated;
          ++order;
          const StageMemory peak = model.peak_stage_memory(l);
          const double bytes = peak.total_bytes();
          if (!out.smallest || bytes < out.smallest->key) out.smallest = Ranked{bytes, order, l};
          if (bytes > static_cast<double>(model.cluster().gpu.hbm_bytes)) {
            ++out.rejected[dominant_term(peak)];
            continue;
          }
          ++out.feasible;
          Estimate e = model.evaluate(l, peak, /*detail=*/false);
          keep_best(out.best, Ranked{rank_key(e, o.objective), order, l},
                    static_cast<size_t>(o.top_k));
        }
      }
    }
  }
  return out;
}

// Upper bound on the layouts one work item generates, for deterministic enumeration indices.
int64_t item_span(const ModelSpec& m, const Layout& base) {
  const int64_t stage_layers = (m.layers + base.pp - 1) / base.pp;
  return 3 * (2 * (stage_layers + 1) + 1) * 4 + 1;
}

}  // namespace

Result<LayoutFix> parse_layout_fix(const std::string& text) {
  Result<Layout> parsed = parse_layout(text, "--fix");
  if (!parsed) return parsed.errors();
  const Layout& l = parsed.value();
  LayoutFix f;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string key = text.substr(start, text.find('=', start) - start);
    if (key == "dp")
      f.dp = l.dp;
    else if (key == "tp")
      f.tp = l.tp;
    else if (key == "pp")
      f.pp = l.pp;
    else if (key == "cp")
      f.cp = l.cp;
    else if (key == "ep")
      f.ep = l.ep;
    else if (key == "mbs")
      f.mbs = l.mbs;
    else if (key == "vpp")
      f.vpp = l.vpp;
    else if (key == "zero")
      f.zero = l.zero;
    else if (key == "recompute")
      f.recompute = l.recompute;
    else if (key == "recompute_layers")
      f.recompute_layers = l.recompute_layers;
    else if (key == "schedule")
      f.schedule = l.schedule;
    else if (key == "sp")
      f.sp = l.sp;
    else if (key == "order")
      f.order = l.order;
    else if (key == "tp_overlap")
      f.tp_overlap = l.tp_overlap;
    else if (key == "uneven") {
      return Diagnostic{{"--fix", 1, static_cast<int>(start) + 1, text},
                        key,
                        "",
                        "cannot be fixed in a search (use estimate --layout)"};
    }
    start = end + 1;
  }
  return f;
}

SearchResult search_layouts(const CostModel& prototype, int64_t gpus, const SearchOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result;
  Enumerator enumerator(prototype.model(), prototype.training(), gpus,
                        prototype.cluster().network.size(), o);
  const std::vector<WorkItem> items = enumerator.work_items(result.rejected);
  std::vector<int64_t> base_order(items.size());
  for (size_t i = 1; i < items.size(); ++i)
    base_order[i] = base_order[i - 1] + item_span(prototype.model(), items[i - 1].base);
  std::vector<ItemResult> per_item(items.size());
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0};
  auto worker = [&] {
    CostModel model(prototype);
    for (size_t i = next++; i < items.size(); i = next++) {
      per_item[i] = run_item(model, items[i], base_order[i], o);
      int64_t d = ++done;
      if (o.progress) o.progress(d, static_cast<int64_t>(items.size()));
    }
  };
  const int threads = std::max(1, std::min<int>(o.threads, static_cast<int>(items.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  std::vector<Ranked> best;
  std::optional<Ranked> smallest;
  for (const ItemResult& r : per_item) {  // merged in item order: deterministic
    result.evaluated += r.evaluated;
    result.feasible += r.feasible;
    for (const auto& [reason, n] : r.rejected) result.rejected[reason] += n;
    for (const Ranked& x : r.best) keep_best(best, x, static_cast<size_t>(o.top_k));
    if (r.smallest && (!smallest || *r.smallest < *smallest)) smallest = r.smallest;
  }
  CostModel model(prototype);
  for (const Ranked& r : best) result.ranked.push_back(model.evaluate(r.layout, /*detail=*/true));
  if (result.ranked.empty() && smallest) result.smallest = model.evaluate(smallest->layout, true);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace meshplan
