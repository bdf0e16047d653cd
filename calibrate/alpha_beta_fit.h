// Latency-bandwidth fit of collective timings: t(n) = α + n·factor/busbw, with `factor` the
// nccl-tests bus factor (core/profile.h bus_factor), so busbw is comparable with nccl-tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile.h"
#include "core/result.h"

namespace meshplan::calibrate {

// A fit is said to hold at a size when it predicts the measured time within this fraction.
inline constexpr double kFitHoldsWithin = 0.10;
// A sweep has reached bandwidth saturation when its largest size is at least this many times the
// fit's half-peak size (there an α-β curve runs at ≥ 10/11 = 91% of busbw).
inline constexpr double kSaturatedAtHalfPeaks = 10;

// How far the fit is from one measured size: fit time / measured time − 1.
struct FitResidual {
  int64_t bytes = 0;
  double relative = 0;
};

struct AlphaBetaFit {
  double latency_s = 0;          // α ≥ 0
  double busbw_bytes_per_s = 0;  // > 0, never above peak_busbw_bytes_per_s
  double half_peak_bytes = 0;    // n where n·factor/t(n) = busbw/2, i.e. α·busbw/factor
  // Diagnostics.
  double peak_busbw_bytes_per_s = 0;           // highest bytes·factor/time among the samples
  double unconstrained_busbw_bytes_per_s = 0;  // the least-squares slope before capping
  // The largest size is ≥ kSaturatedAtHalfPeaks half-peak sizes of the unconstrained fit.
  bool saturated = false;
  bool capped_at_peak = false;  // saturated, and the slope exceeded the measured peak: busbw =
                                // peak, α refitted
  std::vector<FitResidual> residuals;  // one per sample used, in ascending size
  // Largest run of consecutive sizes (ties: the larger sizes) whose |residual| ≤ kFitHoldsWithin;
  // both 0 when no size is fitted that well.
  int64_t holds_from_bytes = 0, holds_to_bytes = 0;
};

// Least squares on relative residuals (t_i − α − x_i/busbw)/t_i with x_i = bytes_i·factor,
// so microsecond and second timings weigh alike. α is clamped at 0 (then busbw is refitted).
// When the sweep reached saturation (see kSaturatedAtHalfPeaks), busbw is capped at the highest
// bus bandwidth measured (then α is refitted): a line steeper than the saturated samples
// promises bandwidth the hardware never showed. A sweep that stops short of saturation (a quick
// calibration to 4 KiB) is left to extrapolate, and describe_fit says so.
// Uses samples with status "ok", time_s > 0 and bytes > 0. Fails (Diagnostic naming `what`) with
// fewer than two distinct sizes, factor ≤ 0, or a non-positive bandwidth slope.
Result<AlphaBetaFit> fit_alpha_beta(const std::vector<CollectiveSample>& samples, double factor,
                                    const std::string& what);

// Fills fit fields of `c` from its samples (factor from c.collective and c.group_size) and
// returns the fit with its diagnostics.
Result<AlphaBetaFit> refit(CollectiveFit& c);

// One line for a profile's notes: where the fit holds, its worst residuals and any capping, e.g.
// "all_reduce x2 (ib): fit within ±10% from 4 MiB to 32 MiB; residuals +21.4% at 2 MiB ...".
std::string describe_fit(const CollectiveFit& c, const AlphaBetaFit& fit);

}  // namespace meshplan::calibrate
