#include "calibrate/alpha_beta_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <set>

namespace meshplan::calibrate {
namespace {

Diagnostic fit_error(const std::string& what, const std::string& rule) {
  return Diagnostic{{}, what, "", rule};
}

}  // namespace

Result<AlphaBetaFit> fit_alpha_beta(const std::vector<CollectiveSample>& samples, double factor,
                                    const std::string& what) {
  if (!(factor > 0)) return fit_error(what, "bus factor must be positive (group of 1 rank?)");
  std::vector<const CollectiveSample*> used;
  std::set<int64_t> sizes;
  for (const auto& s : samples) {
    if (s.status != "ok" || !(s.time_s > 0)) continue;
    used.push_back(&s);
    sizes.insert(s.bytes);
  }
  if (sizes.size() < 2) return fit_error(what, "needs timings at two or more message sizes");
  const Eigen::Index n = static_cast<Eigen::Index>(used.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    double t = used[i]->time_s;
    a(i, 0) = 1.0 / t;                                           // coefficient of α
    a(i, 1) = static_cast<double>(used[i]->bytes) * factor / t;  // coefficient of 1/busbw
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
  fit.half_peak_bytes = fit.latency_s * fit.busbw_bytes_per_s / factor;
  return fit;
}

Result<bool> refit(CollectiveFit& c) {
  std::string what = fmt::format("{} over {} ranks ({})", c.collective, c.group_size, c.level);
  auto fit = fit_alpha_beta(c.samples, bus_factor(c.collective, c.group_size), what);
  if (!fit) return fit.errors();
  c.latency_s = fit->latency_s;
  c.busbw_bytes_per_s = fit->busbw_bytes_per_s;
  c.half_peak_bytes = fit->half_peak_bytes;
  return true;
}

}  // namespace meshplan::calibrate
