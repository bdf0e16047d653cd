// Choosing a Benchmarker by name (the CLI's --backend).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "calibrate/benchmarker.h"
#include "core/result.h"

namespace meshplan::calibrate {

// "cpu" always: alone, GEMMs and bandwidth; launched as several processes (mpirun, srun), the
// module libmeshplan_mpi.so, which adds MPI collectives (built when MPI was found). "cuda" when
// built with CUDA: the module libmeshplan_cuda.so. Modules load on first use (beside the
// executable, in <prefix>/lib/meshplan, or $MESHPLAN_CUDA_BACKEND / $MESHPLAN_MPI_BACKEND),
// else an error saying what was tried.
// `argc/argv` reach MPI_Init for multi-process runs (ignored otherwise).
Result<std::shared_ptr<Benchmarker>> make_benchmarker(const std::string& name, int* argc,
                                                      char*** argv);
std::vector<std::string> backend_names();  // those built into this binary

}  // namespace meshplan::calibrate
