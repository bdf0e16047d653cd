// Entry point of the CUDA backend module (libmeshplan_cuda.so). The meshplan executable does not
// link CUDA, cuBLASLt or NCCL (their initialisers cost every command ~0.33 s and ~200 MB before
// main, issue 13); calibrate/backend.cc loads this module with dlopen for `--backend cuda` only
// and looks this function up with dlsym. C linkage keeps the name stable; the benchmarker crosses
// as a raw pointer the caller owns (module and executable are built together, one compiler and
// one libstdc++), and failures come back as text in `*error` with a null result.
#include <string>

#include "calibrate/cuda/cuda_benchmarker.h"

extern "C" __attribute__((visibility("default"))) meshplan::calibrate::Benchmarker*
meshplan_cuda_benchmarker(int* argc, char*** argv, std::string* error) {
  auto made = meshplan::calibrate::make_cuda_benchmarker(argc, argv);
  if (!made) {
    *error = made.errors().front().rule;
    return nullptr;
  }
  return std::move(made).value().release();
}
