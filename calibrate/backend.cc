#include "calibrate/backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "calibrate/cpu_benchmarker.h"
#include "calibrate/launch_env.h"
#include "core/executable_dir.h"

namespace meshplan::calibrate {
namespace {

// A backend built as a module: its file, the entry point it exports, the environment variable
// that may name its path, and the option value that asks for it (for errors).
struct Module {
  const char* file;
  const char* entry;
  const char* env;
  const char* backend;
};
[[maybe_unused]] constexpr Module kCudaModule{"libmeshplan_cuda.so", "meshplan_cuda_benchmarker",
                                              "MESHPLAN_CUDA_BACKEND", "cuda"};
[[maybe_unused]] constexpr Module kMpiModule{"libmeshplan_mpi.so", "meshplan_mpi_benchmarker",
                                             "MESHPLAN_MPI_BACKEND", "cpu"};
using MakeFn = Benchmarker* (*)(int*, char***, std::string*);

// Where a module may be, in order: its environment variable, beside the executable (the build
// tree), <prefix>/lib/meshplan (cmake --install), then the dynamic loader's own search.
std::vector<std::string> module_candidates(const Module& m) {
  std::vector<std::string> out;
  if (const char* env = std::getenv(m.env); env && *env) out.push_back(env);
  if (const std::filesystem::path bin = executable_dir(); !bin.empty()) {
    out.push_back((bin / m.file).string());
    out.push_back((bin / ".." / "lib" / "meshplan" / m.file).lexically_normal().string());
  }
  out.push_back(m.file);
  return out;
}

// Loads the module (kept loaded for the process: the benchmarker's code lives there) and asks
// it for a benchmarker. Every place tried is named in the error, with the loader's reason.
[[maybe_unused]] Result<std::shared_ptr<Benchmarker>> load_benchmarker(const Module& m,
                                                                       const std::string& advice,
                                                                       int* argc, char*** argv) {
  std::string tried;
  for (const std::string& path : module_candidates(m)) {
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module) {
      const char* why = dlerror();  // names the file and the reason
      tried += "; " + (why ? std::string(why) : path + ": not loadable");
      continue;
    }
    auto make = reinterpret_cast<MakeFn>(dlsym(module, m.entry));
    if (!make)
      return Diagnostic{{}, "--backend", m.backend, path + " is not a meshplan backend module"};
    std::string error;
    Benchmarker* made = make(argc, argv, &error);
    if (!made) return Diagnostic{{}, "--backend", m.backend, error};
    return std::shared_ptr<Benchmarker>(made);
  }
  return Diagnostic{{},
                    "--backend",
                    m.backend,
                    std::string("the ") + m.file + " backend module could not be loaded (tried " +
                        tried.substr(2) + "); " + advice};
}

// "cpu": one process measures GEMMs and bandwidth only; several processes (mpirun, srun) load
// the MPI module, which adds collectives between them.
Result<std::shared_ptr<Benchmarker>> cpu_benchmarker(int* argc, char*** argv) {
  const int processes = launched_processes();
  if (processes <= 1) return std::shared_ptr<Benchmarker>(std::make_shared<CpuBenchmarker>());
#ifdef MESHPLAN_HAVE_MPI_MODULE
  return load_benchmarker(kMpiModule, "run one process, or a meshplan built where MPI is", argc,
                          argv);
#else
  (void)argc;
  (void)argv;
  return Diagnostic{{},
                    "--backend",
                    "cpu",
                    "launched as " + std::to_string(processes) +
                        " processes, but this meshplan was built without MPI (no MPI found at "
                        "configure time; scripts/install-deps.sh installs libopenmpi-dev): run "
                        "one process, or rebuild"};
#endif
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
  if (name == "cpu") return cpu_benchmarker(argc, argv);
#ifdef MESHPLAN_HAVE_CUDA
  if (name == "cuda")
    return load_benchmarker(
        kCudaModule, "use --backend cpu, or a meshplan built where nvcc and NCCL are", argc, argv);
#endif
  if (name == "cuda")
    return Diagnostic{{},
                      "--backend",
                      name,
                      "this meshplan was built without CUDA (no nvcc found at configure time)"};
  return Diagnostic{{}, "--backend", name, "must be cuda or cpu"};
}

}  // namespace meshplan::calibrate
