#include "calibrate/cpu_benchmarker.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "calibrate/timing_stats.h"

namespace meshplan::calibrate {
namespace {

Diagnostic failure(const std::string& rule) { return Diagnostic{{}, "", "", rule}; }

template <class F>
std::vector<double> time_runs(const TimingOptions& timing, F&& f) {
  for (int i = 0; i < timing.warmup; ++i) f();
  std::vector<double> out;
  for (int i = 0; i < timing.iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

Provenance CpuBenchmarker::describe() const {
  Provenance p;
  p.how = "measured";
  p.gpu =
      fmt::format("cpu: {} ({} threads)", cpu_model_name(), std::thread::hardware_concurrency());
  p.gpu_count = 1;
  p.nodes = 1;
  p.sources = {"meshplan calibrate --backend cpu (Eigen fp32 GEMM, memcpy bandwidth)"};
  return p;
}

Result<GemmResult> CpuBenchmarker::gemm(const GemmShape& s, const std::string& dtype,
                                        const TimingOptions& timing) {
  if (dtype != "fp32") return failure(fmt::format("cpu backend has no {} GEMM", dtype));
  double flops =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  if (flops > max_flops_) return failure("shape too large for the cpu backend");
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(s.m, s.k);
  Eigen::MatrixXf b = Eigen::MatrixXf::Random(s.k, s.n);
  Eigen::MatrixXf c(s.m, s.n);
  auto times = time_runs(timing, [&] { c.noalias() = a * b; });
  // Check one element against a plain dot product (guards against a broken BLAS path).
  double ref = 0;
  for (int64_t i = 0; i < s.k; ++i) ref += double{a(0, i)} * double{b(i, 0)};
  if (std::abs(ref - c(0, 0)) > 1e-3 * (1 + std::abs(ref)) + 1e-4 * static_cast<double>(s.k))
    return failure("GEMM result check failed");
  TimingStats st = summarize(times);
  return GemmResult{st.median_s, st.p95_s, 0, 1};
}

Result<HbmResult> CpuBenchmarker::hbm(int64_t bytes, const TimingOptions& timing) {
  size_t n = static_cast<size_t>(bytes) / sizeof(float);
  if (n == 0) return failure("hbm buffer must hold at least one float");
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 3.0f);
  auto copy = summarize(time_runs(timing, [&] { std::memcpy(a.data(), b.data(), n * 4); }));
  auto triad = summarize(time_runs(timing, [&] {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
  }));
  if (a[n / 2] != 2.0f + 9.0f) return failure("triad result check failed");
  double moved = static_cast<double>(n * sizeof(float));
  return HbmResult{2 * moved / copy.median_s, 3 * moved / triad.median_s};
}

Result<CollectiveResult> CpuBenchmarker::collective(const CollectiveRequest&) {
  return failure("cpu backend has no collectives");
}

}  // namespace meshplan::calibrate
