// Latency-bandwidth fit of collective timings: t(n) = α + n·factor/busbw, with `factor` the
// nccl-tests bus factor (core/profile.h bus_factor), so busbw is comparable with nccl-tests.
#pragma once

#include <vector>

#include "core/profile.h"
#include "core/result.h"

namespace meshplan::calibrate {

struct AlphaBetaFit {
  double latency_s = 0;          // α ≥ 0
  double busbw_bytes_per_s = 0;  // > 0
  double half_peak_bytes = 0;    // n where n·factor/t(n) = busbw/2, i.e. α·busbw/factor
};

// Least squares on relative residuals (t_i − α − x_i/busbw)/t_i with x_i = bytes_i·factor,
// so microsecond and second timings weigh alike. α is clamped at 0 (then busbw is refitted).
// Uses samples with status "ok" and time_s > 0. Fails (Diagnostic naming `what`) with fewer
// than two distinct sizes, factor ≤ 0, or a non-positive bandwidth slope.
Result<AlphaBetaFit> fit_alpha_beta(const std::vector<CollectiveSample>& samples, double factor,
                                    const std::string& what);

// Fills fit fields of `c` from its samples (factor from c.collective and c.group_size).
Result<bool> refit(CollectiveFit& c);

}  // namespace meshplan::calibrate
