// CUDA backend of the Benchmarker (built when CUDA and NCCL are found): cuBLASLt GEMMs
// (gemm_lt.h) and HBM copy/triad on the first GPU of this process, NCCL collectives over all
// of them (nccl_bench.h), several nodes through MPI (rank_bootstrap.h).
#pragma once

#include <memory>

#include "calibrate/benchmarker.h"
#include "core/result.h"

namespace meshplan::calibrate {

// Initialises CUDA, cuBLASLt and NCCL (MPI when launched as several processes). Errors say
// which call failed, where, and the API's error string.
Result<std::unique_ptr<Benchmarker>> make_cuda_benchmarker(int* argc, char*** argv);

}  // namespace meshplan::calibrate
