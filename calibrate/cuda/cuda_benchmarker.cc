#include "calibrate/cuda/cuda_benchmarker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "calibrate/cuda/gemm_lt.h"
#include "calibrate/cuda/gpu_check.h"
#include "calibrate/cuda/kernels.h"
#include "calibrate/cuda/nccl_bench.h"
#include "calibrate/timing_stats.h"

extern char** environ;

namespace meshplan::calibrate {
namespace {

using gpu::GpuError;

// Dense peaks (REFERENCE.md §2, datasheets; never the 2:4-sparse figures), by device name.
double datasheet_peak(const std::string& name, const std::string& dtype) {
  const bool fp8 = dtype == "fp8";
  if (name.find("H100") != std::string::npos || name.find("H200") != std::string::npos ||
      name.find("H800") != std::string::npos)
    return fp8 ? 1979e12 : 989e12;  // SXM; PCIe parts are lower (efficiency then reads low)
  if (name.find("B200") != std::string::npos) return fp8 ? 4500e12 : 2250e12;
  if (name.find("A100") != std::string::npos) return fp8 ? 0 : 312e12;
  return 0;
}

std::string version_text(int v, int major_div, int minor_div) {
  return fmt::format("{}.{}", v / major_div, v % major_div / minor_div);
}

class CudaBenchmarker : public Benchmarker {
 public:
  CudaBenchmarker(int* argc, char*** argv) {
    layout_ = gpu::bootstrap(argc, argv);
    int count = 0;
    MP_CUDA(cudaGetDeviceCount(&count));
    if (count == 0) throw GpuError{"no CUDA device visible"};
    if (layout_.multi_process)
      devices_ = {layout_.local_rank % count};
    else
      for (int d = 0; d < count; ++d) devices_.push_back(d);
    for (int d : devices_) {
      MP_CUDA(cudaSetDevice(d));
      cudaStream_t s = nullptr;
      MP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      streams_.push_back(s);
    }
    MP_CUDA(cudaSetDevice(devices_[0]));
    MP_CUDA(cudaGetDeviceProperties(&props_, devices_[0]));
    init_lt();
  }
  ~CudaBenchmarker() override {
    nccl_.reset();
    cudaSetDevice(devices_[0]);
    cudaFree(lt_.workspace);
    cudaFree(lt_.flush);
    cudaFree(lt_.scale_one);
    if (lt_.handle) cublasLtDestroy(lt_.handle);
    for (size_t i = 0; i < streams_.size(); ++i) {
      cudaSetDevice(devices_[i]);
      cudaStreamDestroy(streams_[i]);
    }
    gpu::finish(layout_);
  }

  Provenance describe() const override;
  std::vector<std::string> gemm_dtypes() const override {
    if (props_.major >= 9 || (props_.major == 8 && props_.minor == 9))
      return {"bf16", "fp16", "fp8"};
    return {"bf16", "fp16"};
  }
  double peak_flops(const std::string& dtype) const override {
    return datasheet_peak(props_.name, dtype);
  }
  Result<GemmResult> gemm(const GemmShape& shape, const std::string& dtype,
                          const TimingOptions& timing) override {
    return guarded([&] {
      MP_CUDA(cudaSetDevice(devices_[0]));
      if (!verified_.count(dtype)) {  // once per dtype, before any timing is trusted
        gpu::verify_gemm(lt_, dtype);
        verified_.insert(dtype);
      }
      return gpu::time_gemm(lt_, shape, dtype, timing);
    });
  }
  Result<SustainedResult> sustained_gemm(const GemmShape& shape, const std::string& dtype,
                                         double seconds) override {
    return guarded([&] {
      MP_CUDA(cudaSetDevice(devices_[0]));
      return gpu::time_sustained(lt_, shape, dtype, seconds);
    });
  }
  Result<HbmResult> hbm(int64_t bytes, const TimingOptions& timing) override {
    return guarded([&] { return measure_hbm(bytes, timing); });
  }
  std::vector<int64_t> collective_group_sizes() const override {
    return nccl() ? nccl()->group_sizes() : std::vector<int64_t>{};
  }
  std::string level_for_group(int64_t group) const override {
    int per_node =
        layout_.multi_process ? layout_.ranks_per_node : static_cast<int>(devices_.size());
    return group <= per_node ? "nvlink" : "ib";
  }
  int64_t max_collective_bytes(const std::string&) const override {
    return nccl() ? nccl()->buffer_bytes() : 0;
  }
  Result<CollectiveResult> collective(const CollectiveRequest& request) override {
    return guarded([&] {
      if (!nccl()) throw GpuError{"NCCL could not be initialised"};
      return nccl()->run(request);
    });
  }
  bool captures_graphs() const override { return true; }
  bool is_reporting_rank() const override { return layout_.rank == 0; }

 private:
  template <class F>
  auto guarded(F&& f) -> Result<decltype(f())> {
    try {
      return f();
    } catch (const GpuError& e) {
      return gpu::to_diagnostic(e);
    }
  }
  void init_lt();
  HbmResult measure_hbm(int64_t bytes, const TimingOptions& timing);
  gpu::NcclBench* nccl() const;

  gpu::RankLayout layout_;
  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  cudaDeviceProp props_{};
  gpu::LtContext lt_;
  std::set<std::string> verified_;
  mutable std::unique_ptr<gpu::NcclBench> nccl_;
  mutable bool nccl_tried_ = false;
};

void CudaBenchmarker::init_lt() {
  lt_.stream = streams_[0];
  MP_CUBLAS(cublasLtCreate(&lt_.handle));
  MP_CUDA(cudaMalloc(&lt_.workspace, gpu::kWorkspaceBytes));
  lt_.flush_bytes = std::max<size_t>(2 * static_cast<size_t>(props_.l2CacheSize), 64 << 20);
  MP_CUDA(cudaMalloc(&lt_.flush, lt_.flush_bytes));
  MP_CUDA(cudaMalloc(&lt_.scale_one, sizeof(float)));
  MP_CUDA(gpu::fill_constant(lt_.scale_one, 1, 1.0f, lt_.stream));
  MP_CUDA(cudaStreamSynchronize(lt_.stream));
}

// NCCL starts on first use (communicators only; buffers are allocated at the first collective,
// after GEMM and HBM have freed theirs); buffers take at most
// 35% of free memory each, rounded down to a power of two, capped at 8 GiB (nccl-tests -e 8G).
gpu::NcclBench* CudaBenchmarker::nccl() const {
  if (nccl_tried_) return nccl_.get();
  nccl_tried_ = true;
  int world = layout_.multi_process ? layout_.size : static_cast<int>(devices_.size());
  if (world < 2) return nullptr;
  size_t free = 0, total = 0;
  MP_CUDA(cudaSetDevice(devices_[0]));
  MP_CUDA(cudaMemGetInfo(&free, &total));
  int64_t cap = int64_t{8} << 30;
  while (cap > 8 && static_cast<double>(cap) > 0.35 * static_cast<double>(free)) cap /= 2;
  nccl_ = std::make_unique<gpu::NcclBench>(layout_, devices_, streams_, cap);
  return nccl_.get();
}

HbmResult CudaBenchmarker::measure_hbm(int64_t bytes, const TimingOptions& timing) {
  MP_CUDA(cudaSetDevice(devices_[0]));
  size_t free = 0, total = 0;
  MP_CUDA(cudaMemGetInfo(&free, &total));
  size_t n = static_cast<size_t>(std::min<int64_t>(bytes, static_cast<int64_t>(free / 4))) / 4;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  cudaStream_t s = streams_[0];
  MP_CUDA(cudaMalloc(&a, n * 4));
  MP_CUDA(cudaMalloc(&b, n * 4));
  MP_CUDA(cudaMalloc(&c, n * 4));
  MP_CUDA(gpu::fill_constant(b, static_cast<int64_t>(n), 1.0f, s));
  MP_CUDA(gpu::fill_constant(c, static_cast<int64_t>(n), 2.0f, s));
  cudaEvent_t e0, e1;
  MP_CUDA(cudaEventCreate(&e0));
  MP_CUDA(cudaEventCreate(&e1));
  auto time_op = [&](auto&& op) {
    for (int i = 0; i < timing.warmup; ++i) op();
    std::vector<double> t;
    for (int i = 0; i < timing.iterations; ++i) {
      MP_CUDA(cudaEventRecord(e0, s));
      op();
      MP_CUDA(cudaEventRecord(e1, s));
      MP_CUDA(cudaEventSynchronize(e1));
      float ms = 0;
      MP_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1e-3);
    }
    return summarize(t).median_s;
  };
  double copy =
      time_op([&] { MP_CUDA(cudaMemcpyAsync(a, b, n * 4, cudaMemcpyDeviceToDevice, s)); });
  double tri = time_op([&] { MP_CUDA(gpu::triad(a, b, c, 3.0f, static_cast<int64_t>(n), s)); });
  float probe = 0;
  MP_CUDA(cudaMemcpyAsync(&probe, a + n / 2, sizeof(float), cudaMemcpyDeviceToHost, s));
  MP_CUDA(cudaStreamSynchronize(s));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  if (probe != 7.0f) throw GpuError{fmt::format("triad check failed: {} instead of 7", probe)};
  const double moved = static_cast<double>(n) * 4;
  return HbmResult{2 * moved / copy, 3 * moved / tri};
}

Provenance CudaBenchmarker::describe() const {
  Provenance p;
  p.how = "measured";
  p.gpu = props_.name;
  p.gpu_count = layout_.multi_process ? layout_.size : static_cast<int64_t>(devices_.size());
  p.nodes = layout_.nodes;
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  p.driver = fmt::format("CUDA driver API {}", version_text(driver, 1000, 10));
  p.cuda = version_text(runtime, 1000, 10);
  size_t lt = cublasLtGetVersion();
  p.cublas = fmt::format("{}.{}.{}", lt / 10000, lt / 100 % 100, lt % 100);
  p.nccl = fmt::format("{}.{}.{}", nccl / 10000, nccl / 100 % 100, nccl % 100);
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (kv.rfind("NCCL_", 0) == 0 && eq != std::string::npos)
      p.nccl_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return p;
}

}  // namespace

Result<std::unique_ptr<Benchmarker>> make_cuda_benchmarker(int* argc, char*** argv) {
  try {
    return std::unique_ptr<Benchmarker>(std::make_unique<CudaBenchmarker>(argc, argv));
  } catch (const GpuError& e) {
    return gpu::to_diagnostic(e);
  }
}

}  // namespace meshplan::calibrate
