#include "planner/collective_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "planner/calibration.h"

namespace meshplan {

const char* to_string(Collective c) { return collective_info(c).name; }

int64_t GroupShape::size() const {
  int64_t n = 1;
  for (int i = 0; i < dim_count; ++i) n *= dims[static_cast<size_t>(i)].size;
  return n;
}

// The bus efficiencies do not depend on the GEMM precision.
CollectiveModel::CollectiveModel(const CalibrationProfile& profile, const ClusterSpec& cluster,
                                 CollectiveAlgorithm algorithm, bool rails)
    : CollectiveModel(profile, cluster, resolve_calibration(profile, cluster.gpu, Precision::bf16),
                      algorithm, rails) {}

CollectiveModel::CollectiveModel(const CalibrationProfile& profile, const ClusterSpec& cluster,
                                 const ResolvedCalibration& calibration,
                                 CollectiveAlgorithm algorithm, bool rails)
    : levels_(cluster.network),
      algorithm_(algorithm),
      rails_(rails),
      intra_efficiency_(calibration.intra_node_bus_efficiency.value),
      inter_efficiency_(calibration.inter_node_bus_efficiency.value) {
  for (auto& per_level : fits_) per_level.resize(levels_.size());
  for (const CollectiveFit& f : profile.collectives) {
    if (f.busbw_bytes_per_s <= 0) continue;
    for (int c = 0; c < kCollectiveCount; ++c) {
      if (f.collective != to_string(static_cast<Collective>(c))) continue;
      for (size_t l = 0; l < levels_.size(); ++l)
        if (levels_[l].name == f.level) fits_[static_cast<size_t>(c)][l].push_back(f);
    }
  }
  for (auto& per_level : fits_)
    for (auto& v : per_level)
      std::stable_sort(v.begin(), v.end(), [](const CollectiveFit& a, const CollectiveFit& b) {
        return a.group_size < b.group_size;
      });
  for (int c = 0; c < kCollectiveCount; ++c) {
    auto& table = power_fits_[static_cast<size_t>(c)];
    table.resize(levels_.size());
    for (size_t l = 0; l < levels_.size(); ++l)
      for (int k = 0; k < kPowerFits; ++k)
        table[l][static_cast<size_t>(k)] = fit_of(static_cast<Collective>(c), l, int64_t{1} << k);
  }
}

int64_t CollectiveModel::members_within(const GroupShape& group, size_t level) const {
  const int64_t span = levels_[level].span;
  int64_t n = 1;
  for (int i = 0; i < group.dim_count; ++i) {
    const GroupShape::Dim& d = group.dims[static_cast<size_t>(i)];
    if (d.stride < span) n *= std::min(d.size, std::max<int64_t>(1, span / d.stride));
  }
  return n;
}

static double ring_steps(Collective c, int64_t n) { return collective_info(c).ring_steps(n); }

static double factor(Collective c, int64_t n) {
  return collective_info(c).bus_factor(static_cast<double>(n));
}

// α of a group between two fitted sizes, linear in NCCL's ring steps between the fits that
// bracket it (its ring latency model: Σ steps × per-step latency, src/graph/tuning.cc): an
// all-reduce of 4 NVLink ranks between fits at 2 (6 µs) and 8 (25 µs) pays 6 + 19·(6 − 2)/(14 −
// 2) = 12.3 µs. Nothing outside the fitted sizes (no extrapolation: NCCL switches algorithms).
static std::optional<double> between_fits_latency_s(Collective c,
                                                    const std::vector<CollectiveFit>& sorted,
                                                    int64_t members) {
  for (size_t i = 0; i + 1 < sorted.size(); ++i) {
    const CollectiveFit &lo = sorted[i], &hi = sorted[i + 1];
    if (!(lo.group_size < members && members < hi.group_size)) continue;
    const double s_lo = ring_steps(c, lo.group_size), s_hi = ring_steps(c, hi.group_size);
    if (s_hi <= s_lo) return std::nullopt;
    const double w = (ring_steps(c, members) - s_lo) / (s_hi - s_lo);
    return lo.latency_s + (hi.latency_s - lo.latency_s) * w;
  }
  return std::nullopt;
}

CollectiveModel::LevelFit CollectiveModel::fit(Collective c, size_t level, int64_t members) const {
  if (members > 0 && (members & (members - 1)) == 0 && members < (int64_t{1} << kPowerFits))
    return power_fits_[static_cast<size_t>(c)][level]
                      [static_cast<size_t>(std::countr_zero(static_cast<uint64_t>(members)))];
  return fit_of(c, level, members);
}

CollectiveModel::LevelFit CollectiveModel::fit_of(Collective c, size_t level,
                                                  int64_t members) const {
  const std::vector<CollectiveFit>& fits = fits_[static_cast<size_t>(c)][level];
  const NetworkLevel& l = levels_[level];
  LevelFit out;
  if (!fits.empty()) {
    // Nearest group size on a log scale (ratio closest to 1); ties go to the smaller group.
    const CollectiveFit* best = &fits.front();
    double best_ratio = 1e300;
    const double n = static_cast<double>(members);
    for (const CollectiveFit& f : fits) {
      const double g = static_cast<double>(f.group_size);
      const double ratio = g > n ? g / n : n / g;
      if (ratio < best_ratio) {
        best_ratio = ratio;
        best = &f;
      }
    }
    out = {between_fits_latency_s(c, fits, members).value_or(best->latency_s),
           best->busbw_bytes_per_s, true,
           best->latency_s / std::max(1.0, ring_steps(c, best->group_size))};
  } else {
    const double eff = level == 0 ? intra_efficiency_ : inter_efficiency_;
    out = {l.latency_s * ring_steps(c, members), l.bandwidth_bytes_per_s * eff, false, l.latency_s};
  }
  out.busbw_bytes_per_s /= l.oversubscription;
  return out;
}

double CollectiveModel::level_time_s(Collective c, size_t level, int64_t members,
                                     double bytes) const {
  if (members <= 1) return 0;
  LevelFit f = fit(c, level, members);
  return f.latency_s + bytes * factor(c, members) / f.busbw_bytes_per_s;
}

std::optional<CollectiveModel::RingTerms> CollectiveModel::ring_terms(
    Collective c, const GroupShape& group) const {
  if (algorithm_ != CollectiveAlgorithm::ring || c == Collective::all_to_all || group.size() <= 1)
    return std::nullopt;
  const int64_t n = group.size();
  const size_t level = spanned_level(group);
  const LevelFit f = fit(c, level, n);
  return RingTerms{level == 0 ? f.latency_s : ring_latency_s(c, group, level), factor(c, n),
                   rail_busbw(c, group, level, f.busbw_bytes_per_s)};
}

double CollectiveModel::ring_latency_s(Collective c, const GroupShape& group,
                                       size_t spanned) const {
  const int64_t n = group.size();
  double latency = 0, inner_steps = 0;
  // Steps that stay inside one level-k domain cross level k at most; count from the inside out.
  for (size_t k = 0; k <= spanned; ++k) {
    const int64_t within = k == spanned ? n : members_within(group, k);
    const int64_t domains = n / std::max<int64_t>(1, within);
    const double outer_steps = domains > 1 ? ring_steps(c, domains) : 0;
    const double steps_here = ring_steps(c, n) - outer_steps - inner_steps;
    if (steps_here > 0) {
      latency += steps_here * fit(c, k, std::max<int64_t>(2, within)).step_latency_s;
      inner_steps += steps_here;
    }
  }
  return latency;
}

size_t CollectiveModel::spanned_level(const GroupShape& group) const {
  const int64_t n = group.size();
  for (size_t l = 0; l < levels_.size(); ++l)
    if (members_within(group, l) >= n) return l;
  return levels_.size() - 1;
}

// Rail-optimized fabrics: every GPU has its own NIC (DGX H100: 8 × 400 Gb/s per node), and
// NCCL runs one ring channel per rail, so a ring whose members sit `inner` to a domain of the
// level inside drives `inner` links of this level at once. Its bus bandwidth is then
// min(inner × per-GPU busbw of this level, busbw of the ring inside the domain): 8 GPUs per
// node on NDR give min(8 × 47, 365) = 365 GB/s, matching NVIDIA's 370-380 GB/s for DGX H100
// all-reduce at 32 GPUs (GTC24 S62129; ../shared/REFERENCE-performance.md §4.3); one GPU per
// node gives one NIC's 47 GB/s. Every member's traffic crosses the level, so an oversubscribed
// level (fit() divides its busbw) slows the ring by the full factor.
double CollectiveModel::rail_busbw(Collective c, const GroupShape& group, size_t level,
                                   double busbw) const {
  if (level == 0 || !rails_) return busbw;
  const int64_t inner = members_within(group, level - 1);
  if (inner <= 1) return busbw;
  return std::min(static_cast<double>(inner) * busbw,
                  rail_busbw(c, group, level - 1, fit(c, level - 1, inner).busbw_bytes_per_s));
}

namespace {

// Calls visit(level, inside, within) for each of the `levels` network levels that joins members
// of `group` (within / inside > 1 of them), innermost first: `inside` members sit within one
// domain of the level before, `within` within one of this level.
template <class Visit>
void for_each_joining_level(const CollectiveModel& model, size_t levels, const GroupShape& group,
                            Visit visit) {
  const int64_t n = group.size();
  int64_t inside = 1;
  for (size_t l = 0; l < levels && inside < n; ++l) {
    const int64_t within = model.members_within(group, l);
    if (within / inside <= 1) continue;
    visit(l, inside, within);
    inside = within;
  }
}

}  // namespace

double CollectiveModel::time_s(Collective c, const GroupShape& group, double bytes) const {
  const int64_t n = group.size();
  if (n <= 1 || bytes <= 0) return 0;
  if (const std::optional<RingTerms> ring = ring_terms(c, group)) return ring->time_s(bytes);
  if (c == Collective::all_to_all) return all_to_all_terms(group).time_s(bytes);
  double total = 0, data = bytes;
  for_each_joining_level(
      *this, levels_.size(), group, [&](size_t l, int64_t inside, int64_t within) {
        const int64_t here = within / inside;  // members this level joins together
        total += level_time_s(c, l, here, data);
        // Each member now holds (all-reduce, reduce-scatter) or contributes 1/here of the data.
        if (c != Collective::send_recv) data /= static_cast<double>(here);
      });
  return total;
}

CollectiveModel::AllToAllTerms CollectiveModel::all_to_all_terms(const GroupShape& group) const {
  const int64_t n = group.size();
  AllToAllTerms t;
  for_each_joining_level(
      *this, levels_.size(), group, [&](size_t l, int64_t inside, int64_t within) {
        if (t.count == AllToAllTerms::kMaxLevels) return;  // more levels than a cluster may have
        // Share of each rank's (n−1)/n·S that crosses this level but no outer one.
        const LevelFit f = fit(Collective::all_to_all, l, within / inside);
        t.levels[t.count++] = {f.latency_s,
                               static_cast<double>(within - inside) / static_cast<double>(n),
                               f.busbw_bytes_per_s};
      });
  return t;
}

double CollectiveModel::AllToAllTerms::time_s(double bytes) const {
  double slowest = 0;
  for (size_t i = 0; i < count; ++i) {
    const Level& l = levels[i];
    slowest = std::max(slowest, l.latency_s + bytes * l.share / l.busbw_bytes_per_s);
  }
  return slowest;
}

double CollectiveModel::ring_step_time_s(const GroupShape& group, double bytes) const {
  if (group.size() <= 1 || bytes <= 0) return 0;
  LevelFit f = fit(Collective::send_recv, spanned_level(group), 2);
  return f.latency_s + bytes / f.busbw_bytes_per_s;
}

double CollectiveModel::p2p_time_s(int64_t distance, double bytes) const {
  if (bytes <= 0) return 0;
  size_t level = levels_.size() - 1;
  for (size_t l = 0; l < levels_.size(); ++l) {
    if (levels_[l].span > distance) {
      level = l;
      break;
    }
  }
  LevelFit f = fit(Collective::send_recv, level, 2);
  return f.latency_s + bytes / f.busbw_bytes_per_s;
}

}  // namespace meshplan
