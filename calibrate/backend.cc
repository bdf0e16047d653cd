#include "calibrate/backend.h"

#include "calibrate/cpu_benchmarker.h"
#ifdef MESHPLAN_HAVE_CUDA
#include "calibrate/cuda/cuda_benchmarker.h"
#endif

namespace meshplan::calibrate {

std::vector<std::string> backend_names() {
#ifdef MESHPLAN_HAVE_CUDA
  return {"cuda", "cpu"};
#else
  return {"cpu"};
#endif
}

Result<std::shared_ptr<Benchmarker>> make_benchmarker(const std::string& name, int* argc,
                                                      char*** argv) {
  if (name == "cpu") return std::shared_ptr<Benchmarker>(std::make_shared<CpuBenchmarker>());
#ifdef MESHPLAN_HAVE_CUDA
  if (name == "cuda") {
    auto b = make_cuda_benchmarker(argc, argv);
    if (!b) return b.errors();
    return std::shared_ptr<Benchmarker>(std::move(b).value());
  }
#else
  (void)argc;
  (void)argv;
  if (name == "cuda")
    return Diagnostic{{},
                      "--backend",
                      name,
                      "this meshplan was built without CUDA (no nvcc found at configure time)"};
#endif
  return Diagnostic{{}, "--backend", name, "must be cuda or cpu"};
}

}  // namespace meshplan::calibrate
