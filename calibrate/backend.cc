#include "calibrate/backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "calibrate/cpu_benchmarker.h"

namespace meshplan::calibrate {
namespace {

constexpr const char* kCudaModule = "libmeshplan_cuda.so";
using MakeCudaFn = Benchmarker* (*)(int*, char***, std::string*);

// Where the CUDA module may be, in order: $MESHPLAN_CUDA_BACKEND, beside the executable (the
// build tree), <prefix>/lib/meshplan (cmake --install), then the dynamic loader's own search.
std::vector<std::string> cuda_module_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("MESHPLAN_CUDA_BACKEND"); env && *env) out.push_back(env);
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / kCudaModule).string());
    out.push_back(
        (exe.parent_path() / ".." / "lib" / "meshplan" / kCudaModule).lexically_normal().string());
  }
  out.push_back(kCudaModule);
  return out;
}

// Loads the module (kept loaded for the process: the benchmarker's code lives there) and asks
// it for a benchmarker. Every place tried is named in the error, with the loader's reason.
Result<std::shared_ptr<Benchmarker>> load_cuda_benchmarker(int* argc, char*** argv) {
  std::string tried;
  for (const std::string& path : cuda_module_candidates()) {
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module) {
      const char* why = dlerror();  // names the file and the reason
      tried += "; " + (why ? std::string(why) : path + ": not loadable");
      continue;
    }
    auto make = reinterpret_cast<MakeCudaFn>(dlsym(module, "meshplan_cuda_benchmarker"));
    if (!make)
      return Diagnostic{{}, "--backend", "cuda", path + " is not a meshplan CUDA backend module"};
    std::string error;
    Benchmarker* made = make(argc, argv, &error);
    if (!made) return Diagnostic{{}, "--backend", "cuda", error};
    return std::shared_ptr<Benchmarker>(made);
  }
  return Diagnostic{{},
                    "--backend",
                    "cuda",
                    "the CUDA backend module could not be loaded (tried " + tried.substr(2) +
                        "); use --backend cpu, or a meshplan built where nvcc and NCCL are"};
}

}  // namespace

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
  if (name == "cuda") return load_cuda_benchmarker(argc, argv);
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
