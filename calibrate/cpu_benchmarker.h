// CPU backend: GEMM through Eigen (fp32) and memory bandwidth through a large copy. For tests
// and laptops; it has no collectives (the profile says so).
#pragma once

#include "calibrate/benchmarker.h"

namespace meshplan::calibrate {

class CpuBenchmarker : public Benchmarker {
 public:
  // Shapes above `max_flops` (2·m·n·k) fail instead of running for minutes.
  explicit CpuBenchmarker(double max_flops = 2e11) : max_flops_(max_flops) {}

  Provenance describe() const override;
  std::vector<std::string> gemm_dtypes() const override { return {"fp32"}; }
  double peak_flops(const std::string&) const override { return 0; }  // unknown on a CPU
  Result<GemmResult> gemm(const GemmShape& shape, const std::string& dtype,
                          const TimingOptions& timing) override;
  Result<HbmResult> hbm(int64_t bytes, const TimingOptions& timing) override;
  std::vector<int64_t> collective_group_sizes() const override { return {}; }
  std::string level_for_group(int64_t) const override { return ""; }
  int64_t max_collective_bytes(const std::string&) const override { return 0; }
  Result<CollectiveResult> collective(const CollectiveRequest& request) override;

 private:
  double max_flops_;
};

}  // namespace meshplan::calibrate
