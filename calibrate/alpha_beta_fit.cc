#include "calibrate/alpha_beta_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>

namespace meshplan::calibrate {
namespace {

Diagnostic fit_error(const std::string& what, const std::string& rule) {
  return Diagnostic{{}, what, "", rule};
}

// Samples a fit may use, in ascending size (stable for equal sizes).
std::vector<const CollectiveSample*> usable(const std::vector<CollectiveSample>& samples) {
  std::vector<const CollectiveSample*> used;
  for (const auto& s : samples)
    if (s.status == "ok" && s.time_s > 0 && s.bytes > 0) used.push_back(&s);
  std::stable_sort(used.begin(), used.end(),
                   [](const auto* a, const auto* b) { return a->bytes < b->bytes; });
  return used;
}

// α minimising Σ((t_i − α − x_i/busbw)/t_i)² for a fixed busbw, clamped at 0.
double latency_for_slope(const std::vector<const CollectiveSample*>& used, double factor,
                         double busbw) {
  double num = 0, den = 0;
  for (const auto* s : used) {
    double rest = s->time_s - static_cast<double>(s->bytes) * factor / busbw;
    num += rest / (s->time_s * s->time_s);
    den += 1.0 / (s->time_s * s->time_s);
  }
  return std::max(0.0, num / den);
}

void fill_residuals(const std::vector<const CollectiveSample*>& used, double factor,
                    AlphaBetaFit& fit) {
  for (const auto* s : used) {
    double predicted =
        fit.latency_s + static_cast<double>(s->bytes) * factor / fit.busbw_bytes_per_s;
    fit.residuals.push_back({s->bytes, predicted / s->time_s - 1.0});
  }
  size_t best_from = 0, best_len = 0;
  for (size_t i = 0; i < fit.residuals.size();) {
    size_t j = i;
    while (j < fit.residuals.size() && std::fabs(fit.residuals[j].relative) <= kFitHoldsWithin) ++j;
    if (j > i && j - i >= best_len) best_from = i, best_len = j - i;
    i = j == i ? i + 1 : j;
  }
  if (best_len == 0) return;
  fit.holds_from_bytes = fit.residuals[best_from].bytes;
  fit.holds_to_bytes = fit.residuals[best_from + best_len - 1].bytes;
}

// "512 B", "64 KiB", "1.5 MiB", "8 GiB".
std::string bytes_text(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) v /= 1024, ++unit;
  return v == std::floor(v) ? fmt::format("{:.0f} {}", v, kUnits[unit])
                            : fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string residual_text(const FitResidual& r) {
  const double percent = std::fabs(r.relative) < 0.0005 ? 0.0 : r.relative * 100;  // no "-0.0%"
  return fmt::format("{:+.1f}% at {}", percent, bytes_text(r.bytes));
}

}  // namespace

Result<AlphaBetaFit> fit_alpha_beta(const std::vector<CollectiveSample>& samples, double factor,
                                    const std::string& what) {
  if (!(factor > 0)) return fit_error(what, "bus factor must be positive (group of 1 rank?)");
  std::vector<const CollectiveSample*> used = usable(samples);
  std::set<int64_t> sizes;
  for (const auto* s : used) sizes.insert(s->bytes);
  if (sizes.size() < 2) return fit_error(what, "needs timings at two or more message sizes");
  const Eigen::Index n = static_cast<Eigen::Index>(used.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  double peak = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    double t = used[i]->time_s;
    double x = static_cast<double>(used[i]->bytes) * factor;
    a(i, 0) = 1.0 / t;  // coefficient of α
    a(i, 1) = x / t;    // coefficient of 1/busbw
    peak = std::max(peak, x / t);
  }
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(b);
  if (x(0) < 0) {  // negative latency is noise at large sizes: fit the slope alone
    x(0) = 0;
    x(1) = a.col(1).dot(b) / a.col(1).squaredNorm();
  }
  if (!(x(1) > 0)) return fit_error(what, "time does not grow with message size");
  AlphaBetaFit fit;
  fit.latency_s = x(0);
  fit.busbw_bytes_per_s = 1.0 / x(1);
  fit.peak_busbw_bytes_per_s = peak;
  fit.unconstrained_busbw_bytes_per_s = fit.busbw_bytes_per_s;
  const double half_peak = fit.latency_s * fit.busbw_bytes_per_s / factor;
  fit.saturated = static_cast<double>(used.back()->bytes) >= kSaturatedAtHalfPeaks * half_peak;
  if (fit.saturated && fit.busbw_bytes_per_s > peak) {
    fit.capped_at_peak = true;
    fit.busbw_bytes_per_s = peak;
    fit.latency_s = latency_for_slope(used, factor, peak);
  }
  fit.half_peak_bytes = fit.latency_s * fit.busbw_bytes_per_s / factor;
  fill_residuals(used, factor, fit);
  return fit;
}

Result<AlphaBetaFit> refit(CollectiveFit& c) {
  std::string what = fmt::format("{} over {} ranks ({})", c.collective, c.group_size, c.level);
  auto fit = fit_alpha_beta(c.samples, bus_factor(c.collective, c.group_size), what);
  if (!fit) return fit.errors();
  c.latency_s = fit->latency_s;
  c.busbw_bytes_per_s = fit->busbw_bytes_per_s;
  c.half_peak_bytes = fit->half_peak_bytes;
  return fit;
}

std::string describe_fit(const CollectiveFit& c, const AlphaBetaFit& fit) {
  std::string out = fmt::format("{} x{} ({}): ", c.collective, c.group_size, c.level);
  if (fit.holds_to_bytes > 0)
    out += fmt::format("fit within ±{:.0f}% from {} to {}", kFitHoldsWithin * 100,
                       bytes_text(fit.holds_from_bytes), bytes_text(fit.holds_to_bytes));
  else
    out += fmt::format("fit within ±{:.0f}% at no measured size", kFitHoldsWithin * 100);
  const FitResidual* worst = &fit.residuals.front();
  for (const auto& r : fit.residuals)
    if (std::fabs(r.relative) > std::fabs(worst->relative)) worst = &r;
  out += fmt::format("; residuals {} (smallest), {} (largest), worst {}",
                     residual_text(fit.residuals.front()), residual_text(fit.residuals.back()),
                     residual_text(*worst));
  if (!fit.saturated)
    out += fmt::format(
        "; busbw extrapolated: the largest size, {}, is under {:.0f}x the "
        "half-peak size",
        bytes_text(fit.residuals.back().bytes), kSaturatedAtHalfPeaks);
  if (fit.capped_at_peak)
    out +=
        fmt::format("; busbw capped at the measured peak {:.2f} GB/s (unconstrained fit {:.2f})",
                    fit.peak_busbw_bytes_per_s * 1e-9, fit.unconstrained_busbw_bytes_per_s * 1e-9);
  return out;
}

}  // namespace meshplan::calibrate
