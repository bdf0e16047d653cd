#include "calibrate/calibration_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "calibrate/alpha_beta_fit.h"
#include "core/collective.h"

namespace meshplan::calibrate {

std::vector<std::string> default_collective_kinds() {
  std::vector<std::string> kinds;
  for (const CollectiveInfo& c : collectives())
    if (c.calibrated) kinds.emplace_back(c.name);
  return kinds;
}
namespace {

struct Variant {
  bool in_place, graph;
  const char* source;
};
constexpr Variant kDefaultVariant{false, false, "measured"};
constexpr Variant kExtraVariants[] = {{true, false, "measured, in-place"},
                                      {false, true, "measured, cuda graph"}};

class Run {
 public:
  Run(Benchmarker& bench, const CalibrationPlan& plan, const ProgressFn& progress)
      : bench_(bench), plan_(plan), progress_(progress) {}

  Result<CalibrationProfile> execute();

 private:
  Result<bool> gemm_section();
  Result<bool> sustained_section();
  void relate_sustained_to_samples();
  Result<bool> hbm_section();
  Result<bool> collective_section();
  // The fitted collective, or nothing (listed as missing, samples kept in the entry) when its
  // timings admit no α-β fit: a profile holds no collective it cannot price.
  std::optional<CollectiveFit> measure_collective(const std::string& kind, int64_t group,
                                                  const Variant& v);
  Result<bool> save();
  void report(const std::string& section, const std::string& item) {
    if (progress_) progress_({section, item, done_++, total_});
  }
  // Whether to stop before the next measurement (sticky once asked for).
  bool stopping() {
    if (!stopped_) stopped_ = bench_.agree_to_stop(plan_.stop_requested && plan_.stop_requested());
    return stopped_;
  }
  void mark_missing(std::string what) {
    profile_.complete = false;
    profile_.missing.push_back(std::move(what));
  }
  std::vector<std::string> dtypes() const {
    return plan_.dtypes.empty() ? bench_.gemm_dtypes() : plan_.dtypes;
  }
  // The plan's shapes measured in `dtype` (measured_in).
  int64_t shapes_in(const std::string& dtype) const {
    return std::count_if(plan_.gemm_shapes.begin(), plan_.gemm_shapes.end(),
                         [&](const GemmShape& s) { return measured_in(s, dtype); });
  }
  std::vector<Variant> variants(const std::string& kind) const;
  std::vector<int64_t> sizes(const std::string& kind) const {
    return message_sizes(plan_.min_bytes,
                         std::min(plan_.max_bytes, bench_.max_collective_bytes(kind)),
                         plan_.step_factor);
  }
  int64_t count_items() const;

  Benchmarker& bench_;
  const CalibrationPlan& plan_;
  const ProgressFn& progress_;
  CalibrationProfile profile_;
  std::map<std::string, SustainedResult> sustained_;  // by dtype
  int64_t done_ = 0, total_ = 0;
  bool stopped_ = false;
};

// In-place all-to-all and send/recv are not defined (nccl-tests reports them as N/A); graph
// variants only where the backend captures graphs.
std::vector<Variant> Run::variants(const std::string& kind) const {
  std::vector<Variant> v = {kDefaultVariant};
  if (!plan_.collective_variants) return v;
  for (const Variant& x : kExtraVariants)
    if ((!x.in_place || has_in_place_form(kind)) && (!x.graph || bench_.captures_graphs()))
      v.push_back(x);
  return v;
}

int64_t Run::count_items() const {
  int64_t n = 0;
  if (plan_.gemm)
    for (const auto& dtype : dtypes()) n += shapes_in(dtype);
  if (plan_.gemm && plan_.sustained_seconds > 0) n += static_cast<int64_t>(dtypes().size());
  if (plan_.hbm) n += 1;
  if (plan_.collectives)
    for (const auto& kind : plan_.collective_kinds)
      n += static_cast<int64_t>(bench_.collective_group_sizes().size() * variants(kind).size() *
                                sizes(kind).size());
  return n;
}

Result<bool> Run::save() {
  if (plan_.out_path.empty() || !bench_.is_reporting_rank()) return true;
  return write_profile_atomically(profile_, plan_.out_path);
}

Result<bool> Run::gemm_section() {
  for (const auto& dtype : dtypes()) {
    if (stopping()) {
      mark_missing("gemm " + dtype);
      continue;
    }
    GemmTable table;
    table.dtype = dtype;
    double peak = bench_.peak_flops(dtype), best = 0;
    for (const auto& shape : plan_.gemm_shapes) {
      if (!measured_in(shape, dtype)) continue;
      if (stopping()) {
        mark_missing(
            fmt::format("gemm {}: {} of {} shapes", dtype, table.samples.size(), shapes_in(dtype)));
        break;
      }
      report("gemm", fmt::format("{} {}x{}x{}", dtype, shape.m, shape.n, shape.k));
      GemmSample s{shape.m, shape.n, shape.k, 0, 0, 0, "ok"};
      auto r = bench_.gemm(shape, dtype, plan_.gemm_timing);
      double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                     static_cast<double>(shape.k);
      if (r && r->median_s > 0) {
        s.flops_per_s = flops / r->median_s;
        s.heuristic_flops_per_s = r->heuristic_median_s > 0 ? flops / r->heuristic_median_s : 0;
        s.p95_time_s = r->p95_s;
        best = std::max(best, s.flops_per_s);
      } else {
        s.status = "failed: " + (r ? std::string("zero time") : r.errors()[0].rule);
      }
      table.samples.push_back(s);
    }
    table.max_efficiency = peak > 0 ? std::min(1.0, best / peak) : 0.0;
    profile_.gemm[dtype] = table;
    auto w = save();
    if (!w) return w;
  }
  return true;
}

// One back-to-back run per dtype: the first dtype's sets the sustained ratio; each dtype's
// last quarter becomes its GEMM table's sustained ceiling (relate_sustained_to_samples).
Result<bool> Run::sustained_section() {
  const GemmShape& shape = plan_.sustained_shape;
  const std::vector<std::string> all = dtypes();
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& dtype = all[i];
    if (i > 0 && stopping()) {
      mark_missing("sustained " + dtype);
      continue;
    }
    report("sustained", fmt::format("{} {}x{}x{} for {:g} s", dtype, shape.m, shape.n, shape.k,
                                    plan_.sustained_seconds));
    auto r = bench_.sustained_gemm(shape, dtype, plan_.sustained_seconds);
    if (!r && i == 0) {  // a backend without it: one note for the section
      profile_.notes.push_back("sustained compute not measured: " + r.errors()[0].rule);
      return save();
    }
    if (!r) {
      profile_.notes.push_back(
          fmt::format("sustained {} not measured: {}", dtype, r.errors()[0].rule));
      if (auto saved = save(); !saved) return saved.errors();
      continue;
    }
    sustained_[dtype] = *r;
    if (i == 0 && r->burst_flops_per_s > 0 && r->sustained_flops_per_s > 0)
      profile_.sustained_compute_ratio =
          std::min(1.0, r->sustained_flops_per_s / r->burst_flops_per_s);
    std::string series;
    for (double w : r->window_flops_per_s) series += fmt::format(" {:.0f}", w * 1e-12);
    profile_.notes.push_back(fmt::format(
        "sustained {} {}x{}x{}: {:.1f} TFLOP/s over the first second, {:.1f} over the last "
        "quarter of {:.1f} s; TFLOP/s per window:{}",
        dtype, shape.m, shape.n, shape.k, r->burst_flops_per_s * 1e-12,
        r->sustained_flops_per_s * 1e-12, r->seconds, series));
    if (auto saved = save(); !saved) return saved.errors();
  }
  return true;
}

// The cost model multiplies every GEMM sample by the sustained ratio, so the ratio is sustained
// over the sample of the same shape when the sweep has one (the sweep may itself run warm),
// else over the run's own first second. Each measured dtype's sustained rate caps its table's
// fallback (planner/gemm_model.h).
void Run::relate_sustained_to_samples() {
  for (const auto& [dtype, result] : sustained_) {
    auto table = profile_.gemm.find(dtype);
    if (table != profile_.gemm.end() && result.sustained_flops_per_s > 0)
      table->second.sustained_flops_per_s = result.sustained_flops_per_s;
  }
  const std::string first = dtypes().front();
  auto run = sustained_.find(first);
  if (run == sustained_.end() || run->second.sustained_flops_per_s <= 0) return;
  const double sustained = run->second.sustained_flops_per_s;
  const GemmShape& shape = plan_.sustained_shape;
  auto table = profile_.gemm.find(first);
  if (table == profile_.gemm.end()) return;
  for (const GemmSample& s : table->second.samples)
    if (s.m == shape.m && s.n == shape.n && s.k == shape.k && s.status == "ok" &&
        s.flops_per_s > 0) {
      profile_.sustained_compute_ratio = std::min(1.0, sustained / s.flops_per_s);
      profile_.notes.push_back(fmt::format(
          "sustained_compute_ratio {:.3f} = sustained {:.1f} / the sweep's {}x{}x{} sample {:.1f} "
          "TFLOP/s (capped at 1)",
          profile_.sustained_compute_ratio, sustained * 1e-12, shape.m, shape.n, shape.k,
          s.flops_per_s * 1e-12));
      return;
    }
  profile_.notes.push_back(fmt::format(
      "sustained_compute_ratio {:.3f} = sustained / first second (the sweep has no {}x{}x{})",
      profile_.sustained_compute_ratio, shape.m, shape.n, shape.k));
}

Result<bool> Run::hbm_section() {
  report("hbm", fmt::format("copy {} MiB", plan_.hbm_bytes >> 20));
  auto r = bench_.hbm(plan_.hbm_bytes, plan_.hbm_timing);
  if (r) {
    profile_.hbm_bytes_per_s = r->copy_bytes_per_s;
    if (r->triad_bytes_per_s > 0)
      profile_.notes.push_back(fmt::format("hbm triad: {:.1f} GB/s", r->triad_bytes_per_s * 1e-9));
  } else {
    profile_.notes.push_back("hbm failed: " + r.errors()[0].rule);
  }
  return save();
}

std::optional<CollectiveFit> Run::measure_collective(const std::string& kind, int64_t group,
                                                     const Variant& v) {
  CollectiveFit fit;
  fit.collective = kind;
  fit.group_size = group;
  fit.level = bench_.level_for_group(group);
  fit.source = v.source;
  double factor = bus_factor(kind, group);
  for (int64_t bytes : sizes(kind)) {
    report("collectives", fmt::format("{} x{} {} B{}", kind, group, bytes,
                                      v.in_place ? " in-place"
                                      : v.graph  ? " graph"
                                                 : ""));
    CollectiveRequest req{kind, group, bytes, v.in_place, v.graph, plan_.collective_timing};
    auto r = bench_.collective(req);
    CollectiveSample s{bytes, 0, 0, "ok"};
    if (r && r->median_s > 0) {
      s.time_s = r->median_s;
      s.busbw_bytes_per_s = static_cast<double>(bytes) / r->median_s * factor;
    } else {
      s.status = "failed: " + (r ? std::string("zero time") : r.errors()[0].rule);
    }
    fit.samples.push_back(s);
  }
  auto f = refit(fit);
  if (f) return fit;
  std::vector<std::string> timed;
  for (const CollectiveSample& s : fit.samples)
    timed.push_back(s.status == "ok" ? fmt::format("{} B {:.3g} us", s.bytes, s.time_s * 1e6)
                                     : fmt::format("{} B {}", s.bytes, s.status));
  mark_missing(fmt::format("collectives {} x{} ({}): no fit, {} (samples: {})", kind, group,
                           v.source, f.errors()[0].rule, fmt::join(timed, ", ")));
  return std::nullopt;
}

Result<bool> Run::collective_section() {
  if (bench_.collective_group_sizes().empty()) return true;
  for (const auto& kind : plan_.collective_kinds)
    for (int64_t group : bench_.collective_group_sizes())
      for (const auto& v : variants(kind)) {
        if (stopping()) {
          mark_missing(fmt::format("collectives {} x{} ({})", kind, group, v.source));
          continue;
        }
        if (auto fit = measure_collective(kind, group, v))
          profile_.collectives.push_back(std::move(*fit));
        auto w = save();
        if (!w) return w;
      }
  return true;
}

Result<CalibrationProfile> Run::execute() {
  profile_.name = plan_.name;
  profile_.provenance = bench_.describe();
  profile_.provenance.how = "measured";
  profile_.provenance.command = plan_.command;
  profile_.provenance.date = plan_.date;
  if (bench_.collective_group_sizes().empty())
    profile_.notes.push_back("backend has no collectives: none measured");
  total_ = count_items();
  // HBM and the sustained run first: they are short, and the sustained run's first second is a
  // burst only on a GPU that has not just run minutes of GEMMs.
  if (plan_.hbm) {
    if (stopping())
      mark_missing("hbm");
    else if (auto r = hbm_section(); !r)
      return r.errors();
  }
  if (plan_.gemm && plan_.sustained_seconds > 0) {
    if (stopping())
      mark_missing("sustained");
    else if (auto r = sustained_section(); !r)
      return r.errors();
  }
  if (plan_.gemm) {
    if (auto r = gemm_section(); !r) return r.errors();
    relate_sustained_to_samples();
  }
  if (plan_.collectives)
    if (auto r = collective_section(); !r) return r.errors();
  if (auto r = save(); !r) return r.errors();
  return profile_;
}

}  // namespace

std::vector<int64_t> message_sizes(int64_t min_bytes, int64_t max_bytes, int64_t factor) {
  std::vector<int64_t> out;
  for (int64_t s = min_bytes; s >= 1 && s <= max_bytes; s *= factor) {
    out.push_back(s);
    if (s > max_bytes / factor) break;
  }
  return out;
}

std::vector<GemmShape> gemm_grid(int lo_log2, int hi_log2) {
  std::vector<GemmShape> out;
  for (int e = lo_log2; e <= hi_log2; ++e) out.push_back({1 << e, 1 << e, 1 << e, "grid cube"});
  const int64_t mid = int64_t{1} << std::max(lo_log2, hi_log2 - 1);
  for (int e = lo_log2; e <= hi_log2; ++e) {
    const int64_t x = int64_t{1} << e;
    if (x != mid) out.push_back({mid, mid, x, "grid k sweep"});
    if (x != mid) out.push_back({x, mid, mid, "grid m sweep"});
  }
  return out;
}

CalibrationPlan cuda_plan(bool quick) {
  CalibrationPlan p;
  p.gemm_shapes = quick ? gemm_grid(10, 13) : gemm_grid(8, 14);
  // Full: up to 8 algorithms, 10 warm-ups and 50 samples each, within 50 ms per shape: a
  // 64K-token GEMM of a 405B layer (100+ ms a run) gets its heuristic's choice timed with 1
  // warm-up and 3 samples, a 4096³ one (~0.2 ms) every algorithm in full.
  p.gemm_timing = quick ? TimingOptions{3, 10, 0.02, 4} : TimingOptions{10, 50, 0.05, 8};
  p.sustained_seconds = quick ? 0 : 30;
  p.hbm_bytes = quick ? int64_t{1} << 30 : int64_t{4} << 30;
  p.max_bytes = quick ? int64_t{1} << 30 : int64_t{8} << 30;
  p.step_factor = quick ? 4 : 2;
  p.collective_timing = quick ? TimingOptions{3, 10} : TimingOptions{5, 20};
  p.collective_variants = !quick;
  return p;
}

CalibrationPlan cpu_plan(bool quick) {
  CalibrationPlan p;
  p.gemm_shapes = quick ? gemm_grid(6, 8) : gemm_grid(6, 10);
  p.gemm_timing = quick ? TimingOptions{1, 3} : TimingOptions{2, 10};
  p.hbm_bytes = quick ? int64_t{16} << 20 : int64_t{256} << 20;
  p.hbm_timing = quick ? TimingOptions{1, 3} : TimingOptions{2, 10};
  // Collectives only when launched as several processes (the MPI module); alone there are none.
  p.max_bytes = quick ? int64_t{1} << 20 : int64_t{64} << 20;
  p.step_factor = quick ? 8 : 2;
  p.collective_timing = quick ? TimingOptions{2, 5} : TimingOptions{5, 20};
  p.collective_variants = !quick;
  return p;
}

Result<CalibrationProfile> run_calibration(Benchmarker& bench, const CalibrationPlan& plan,
                                           const ProgressFn& progress) {
  return Run(bench, plan, progress).execute();
}

}  // namespace meshplan::calibrate
