// Two calibration profiles side by side (`meshplan calibrate compare BASE OTHER`): a calibration
// repeated on another machine against the first, or a measured profile against the published
// one it overlays. Every ratio is OTHER over BASE, of throughputs (above 1: OTHER measured
// faster), taken only where both profiles measured the same thing: GEMM samples of one dtype at
// the same m, n, k (status ok in both), attention samples of one kernel at the same head dim,
// sequence length and mask, collective fits of one collective, level and group size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile.h"

namespace meshplan {

// The distribution of a set of ratios. Quantiles interpolate linearly between the sorted values
// (numpy's default: the q-quantile of n values sits at rank q·(n − 1)); the median of an even
// count is the mean of the middle two. All 0 when count is 0.
struct RatioSummary {
  int64_t count = 0;
  double geomean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
  std::string min_at, max_at;  // what the smallest and largest ratio belong to
};

// Summarizes `ratios` (each > 0), `labels[i]` naming ratios[i]. Ties for the smallest or largest
// go to the first listed. REQUIRES: labels.size() == ratios.size().
RatioSummary summarize_ratios(const std::vector<double>& ratios,
                              const std::vector<std::string>& labels);

// Ratios with what each belongs to, gathered for one summary. A ratio enters only where both
// sides are positive and their quotient is a finite positive number (a reader refuses the rest;
// this keeps summarize_ratios' sort strict).
class RatioSet {
 public:
  void add(double numerator, double denominator, const std::string& label);
  RatioSummary summary() const { return summarize_ratios(values_, labels_); }

 private:
  std::vector<double> values_;
  std::vector<std::string> labels_;
};

// A GEMM sample that measured something (status ok, positive throughput): the ones compared.
inline bool measured(const GemmSample& s) { return s.status == "ok" && s.flops_per_s > 0; }
// How a GEMM shape is named in a summary: "2048x4096x4096" (m x n x k).
std::string gemm_shape_label(int64_t m, int64_t n, int64_t k);

// One scalar both profiles may give (0: not given; ratio 0 unless both are).
struct ScalarComparison {
  std::string name;  // what it is, with its unit
  double base = 0, other = 0;
  double ratio() const { return base > 0 && other > 0 ? other / base : 0; }
};

struct GemmComparison {
  std::string dtype;
  int64_t base_samples = 0, other_samples = 0;  // measured ok in each
  RatioSummary throughput;                      // best algorithm, at the shapes both measured
  RatioSummary heuristic;  // the heuristic's first choice, where both measured it
  ScalarComparison max_efficiency, sustained_tflops;
};

struct AttentionComparison {
  std::string kernel;
  int64_t base_samples = 0, other_samples = 0;
  RatioSummary forward, backward;  // where both give the forward (backward) throughput
};

// The GEMM time meshplan's cost model prices from each profile (planner/gemm_model.h: the
// samples, the fallback curve, the sustained cap and wave quantization, for one GPU of the
// catalog) at every shape either profile measured: BASE's time over OTHER's (above 1: OTHER's
// prices run faster). What switching profiles changes in a plan's GEMMs, also where the two
// measured different shapes or one only publishes efficiencies.
struct GemmModelComparison {
  std::string dtype;  // bf16 | fp8 (the precisions the cost model prices)
  RatioSummary speedup;
};

struct ProfileComparison {
  std::string base_name, other_name;
  Provenance base_provenance, other_provenance;
  std::vector<ScalarComparison> scalars;       // HBM, sustained ratio, attention efficiency, ...
  std::vector<GemmComparison> gemm;            // every dtype either profile has, in name order
  std::vector<AttentionComparison> attention;  // every kernel either has, in name order
  int64_t base_collectives = 0, other_collectives = 0;
  RatioSummary collective_busbw;    // bus bandwidth of the fits both have
  RatioSummary collective_latency;  // base latency over other's (above 1: OTHER answers sooner)
  std::string model_gpu;            // the GPU the GEMM models price for; empty: not compared
  std::vector<GemmModelComparison> gemm_model;
};

ProfileComparison compare_profiles(const CalibrationProfile& base, const CalibrationProfile& other);

}  // namespace meshplan
