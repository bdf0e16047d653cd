#include "calibrate/cuda/gemm_lt.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "calibrate/cuda/gpu_check.h"
#include "calibrate/cuda/kernels.h"
#include "calibrate/timing_stats.h"

namespace meshplan::calibrate::gpu {
namespace {

struct Types {
  cudaDataType_t ab, cd;
  ElemType ab_elem, cd_elem;
  size_t ab_size, cd_size;
  bool fp8;
};

Types types_for(const std::string& dtype) {
  if (dtype == "bf16")
    return {CUDA_R_16BF, CUDA_R_16BF, ElemType::bf16, ElemType::bf16, 2, 2, false};
  if (dtype == "fp16") return {CUDA_R_16F, CUDA_R_16F, ElemType::f16, ElemType::f16, 2, 2, false};
  if (dtype == "fp8")
    return {CUDA_R_8F_E4M3, CUDA_R_16BF, ElemType::fp8_e4m3, ElemType::bf16, 1, 2, true};
  throw GpuError{"unsupported GEMM dtype " + dtype};
}

// Device buffers and descriptors of one problem; released by the destructor.
struct Problem {
  Types t;
  int64_t m, n, k;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cudaStream_t stream_ = nullptr;

  Problem(LtContext& ctx, const GemmShape& s, const std::string& dtype, Fill fill)
      : t(types_for(dtype)), m(s.m), n(s.n), k(s.k), stream_(ctx.stream) {
    try {
      init(ctx, fill);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Problem() { release(); }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void init(LtContext& ctx, Fill fill) {
    MP_CUDA(cudaMallocAsync(&a, t.ab_size * m * k, ctx.stream));
    MP_CUDA(cudaMallocAsync(&b, t.ab_size * k * n, ctx.stream));
    MP_CUDA(cudaMallocAsync(&c, t.cd_size * m * n, ctx.stream));
    MP_CUDA(fill_values(a, t.ab_elem, m * k, 1, fill, ctx.stream));
    MP_CUDA(fill_values(b, t.ab_elem, k * n, 2, fill, ctx.stream));
    MP_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    MP_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    MP_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (t.fp8) {  // per-tensor scales (1.0): required inputs of the fp8 kernels
      MP_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                               &ctx.scale_one, sizeof(ctx.scale_one)));
      MP_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                               &ctx.scale_one, sizeof(ctx.scale_one)));
    }
    MP_CUBLAS(cublasLtMatrixLayoutCreate(&la, t.ab, k, m, k));
    MP_CUBLAS(cublasLtMatrixLayoutCreate(&lb, t.ab, k, n, k));
    MP_CUBLAS(cublasLtMatrixLayoutCreate(&lc, t.cd, m, n, m));
  }
  void release() {
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    for (void* p : {a, b, c})
      if (p) cudaFreeAsync(p, stream_);
  }

  std::vector<cublasLtMatmulHeuristicResult_t> algorithms(LtContext& ctx) const {
    cublasLtMatmulPreference_t pref = nullptr;
    MP_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = kWorkspaceBytes;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    std::vector<cublasLtMatmulHeuristicResult_t> r(kAlgorithms);
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(ctx.handle, op, la, lb, lc, lc, pref, kAlgorithms,
                                          r.data(), &found);
    cublasLtMatmulPreferenceDestroy(pref);
    MP_CUBLAS(st);
    r.resize(static_cast<size_t>(found));
    if (r.empty()) throw GpuError{"cuBLASLt heuristic returned no algorithm"};
    return r;
  }

  void run(LtContext& ctx, const cublasLtMatmulAlgo_t* algo) const {
    const float alpha = 1.0f, beta = 0.0f;
    MP_CUBLAS(cublasLtMatmul(ctx.handle, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc, algo,
                             ctx.workspace, kWorkspaceBytes, ctx.stream));
  }
};

// Events created and destroyed with the scope.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    MP_CUDA(cudaEventCreate(&start));
    if (cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
      cudaEventDestroy(start);
      MP_CUDA(e);
    }
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

// Seconds of `runs` back-to-back runs on the stream, between the pair's events (L2 not flushed).
double time_runs(LtContext& ctx, const Problem& p, const cublasLtMatmulAlgo_t* algo,
                 const EventPair& ev, int runs = 1) {
  MP_CUDA(cudaEventRecord(ev.start, ctx.stream));
  for (int i = 0; i < runs; ++i) p.run(ctx, algo);
  MP_CUDA(cudaEventRecord(ev.stop, ctx.stream));
  MP_CUDA(cudaEventSynchronize(ev.stop));
  float ms = 0;
  MP_CUDA(cudaEventElapsedTime(&ms, ev.start, ev.stop));
  return ms * 1e-3;
}

// Per-iteration times of one algorithm; the L2 flush sits outside the events. The first warm-up
// run is timed (`first_s`) to size the rest within `budget_s` (at least 1 warm-up, 3 samples).
std::vector<double> time_algorithm(LtContext& ctx, const Problem& p,
                                   const cublasLtMatmulAlgo_t* algo, const TimingOptions& t,
                                   double budget_s, double& first_s) {
  EventPair ev;
  first_s = time_runs(ctx, p, algo, ev);
  const int warmup = runs_within(t.warmup, budget_s / 4, first_s, 1);
  for (int i = 1; i < warmup; ++i) p.run(ctx, algo);
  const int iterations = runs_within(t.iterations, budget_s, first_s, 3);
  std::vector<double> out;
  for (int i = 0; i < iterations; ++i) {
    MP_CUDA(cudaMemsetAsync(ctx.flush, i & 0xff, ctx.flush_bytes, ctx.stream));
    out.push_back(time_runs(ctx, p, algo, ev));
  }
  return out;
}

}  // namespace

SustainedResult time_sustained(LtContext& ctx, const GemmShape& shape, const std::string& dtype,
                               double seconds) {
  Problem p(ctx, shape, dtype, Fill::random);
  auto algos = p.algorithms(ctx);
  const cublasLtMatmulAlgo_t* algo = &algos[0].algo;
  EventPair ev;
  const double each_s = time_runs(ctx, p, algo, ev);
  // Windows of about 50 ms: long against the event resolution, short against clock changes.
  const int runs = std::max(1, static_cast<int>(0.05 / std::max(each_s, 1e-7)));
  SustainedResult out;
  std::vector<double> window_s;
  const auto begin = std::chrono::steady_clock::now();
  for (;;) {
    window_s.push_back(time_runs(ctx, p, algo, ev, runs));
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (out.seconds >= seconds) break;
  }
  const double work = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                      static_cast<double>(shape.k) * runs;
  const SustainedSplit split = split_sustained(window_s, work, 1.0);
  out.burst_flops_per_s = split.burst_per_s;
  out.sustained_flops_per_s = split.sustained_per_s;
  for (double w : window_s) out.window_flops_per_s.push_back(w > 0 ? work / w : 0);
  return out;
}

GemmResult time_gemm(LtContext& ctx, const GemmShape& shape, const std::string& dtype,
                     const TimingOptions& timing) {
  Problem p(ctx, shape, dtype, Fill::random);
  auto algos = p.algorithms(ctx);
  if (timing.max_algorithms > 0 && algos.size() > static_cast<size_t>(timing.max_algorithms))
    algos.resize(static_cast<size_t>(timing.max_algorithms));
  // The shape's budget is shared by its algorithms; the next one is tried only while its
  // shortest measurement (1 warm-up, 3 samples, at the heuristic's speed) still fits.
  const double per_algorithm_s = timing.budget_s / static_cast<double>(algos.size());
  double spent_s = 0, heuristic_s = 0;
  GemmResult best;
  for (size_t i = 0; i < algos.size(); ++i) {
    if (algos[i].state != CUBLAS_STATUS_SUCCESS) continue;
    if (i > 0 && timing.budget_s > 0 && spent_s + 4 * heuristic_s > timing.budget_s) break;
    std::vector<double> times;
    double first_s = 0;
    try {
      times = time_algorithm(ctx, p, &algos[i].algo, timing, per_algorithm_s, first_s);
    } catch (const GpuError&) {
      if (i == 0) throw;  // the heuristic's own choice must run; later ones may not
      continue;
    }
    TimingStats st = summarize(times);
    for (double x : times) spent_s += x;
    spent_s += first_s;
    ++best.algorithms_tried;
    if (i == 0) best.heuristic_median_s = heuristic_s = st.median_s;
    if (best.median_s == 0 || st.median_s < best.median_s) {
      best.median_s = st.median_s;
      best.p95_s = st.p95_s;
    }
  }
  MP_CUDA(cudaStreamSynchronize(ctx.stream));
  return best;
}

void verify_gemm(LtContext& ctx, const std::string& dtype) {
  const GemmShape s{128, 96, 64, "check"};
  Problem p(ctx, s, dtype, Fill::exact_pattern);
  auto algos = p.algorithms(ctx);
  p.run(ctx, &algos[0].algo);
  float* d = nullptr;
  MP_CUDA(cudaMallocAsync(&d, sizeof(float) * s.m * s.n, ctx.stream));
  MP_CUDA(to_float(p.c, p.t.cd_elem, d, s.m * s.n, ctx.stream));
  std::vector<float> got(static_cast<size_t>(s.m * s.n));
  MP_CUDA(cudaMemcpyAsync(got.data(), d, sizeof(float) * got.size(), cudaMemcpyDeviceToHost,
                          ctx.stream));
  MP_CUDA(cudaStreamSynchronize(ctx.stream));
  MP_CUDA(cudaFree(d));
  for (int64_t j = 0; j < s.n; ++j)
    for (int64_t i = 0; i < s.m; ++i) {
      double ref = 0;  // D[i][j] = Σ_l A_store[l + i·k] · B_store[l + j·k]
      for (int64_t l = 0; l < s.k; ++l)
        ref += double{pattern_value(static_cast<uint64_t>(l + i * s.k), 1)} *
               double{pattern_value(static_cast<uint64_t>(l + j * s.k), 2)};
      double v = got[static_cast<size_t>(i + j * s.m)];
      if (std::fabs(v - ref) > 0.02 + 0.01 * std::fabs(ref))
        throw GpuError{fmt::format("{} GEMM check failed at ({}, {}): got {}, CPU reference {}",
                                   dtype, i, j, v, ref)};
    }
}

}  // namespace meshplan::calibrate::gpu
