// Entry point of the MPI module (libmeshplan_mpi.so), loaded by calibrate/backend.cc with
// dlopen when `calibrate --backend cpu` runs as several processes: the executable links no MPI
// library. Same contract as the CUDA module (cuda/module.cc): C linkage, the benchmarker as a
// raw pointer the caller owns, failures as text in `*error` with a null result.
#include <string>

#include "calibrate/mpi/mpi_benchmarker.h"

extern "C" __attribute__((visibility("default"))) meshplan::calibrate::Benchmarker*
meshplan_mpi_benchmarker(int* argc, char*** argv, std::string* error) {
  auto made = meshplan::calibrate::MpiCpuBenchmarker::create(argc, argv);
  if (!made) {
    *error = made.errors().front().rule;
    return nullptr;
  }
  return std::move(made).value().release();
}
