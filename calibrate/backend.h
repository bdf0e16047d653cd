// Choosing a Benchmarker by name (the CLI's --backend).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "calibrate/benchmarker.h"
#include "core/result.h"

namespace meshplan::calibrate {

// "cpu" always; "cuda" when built with CUDA: the module libmeshplan_cuda.so, loaded on first use
// (beside the executable, in <prefix>/lib/meshplan, or $MESHPLAN_CUDA_BACKEND), else an error
// saying what was tried.
// `argc/argv` reach MPI_Init for multi-node runs (ignored otherwise).
Result<std::shared_ptr<Benchmarker>> make_benchmarker(const std::string& name, int* argc,
                                                      char*** argv);
std::vector<std::string> backend_names();  // those built into this binary

}  // namespace meshplan::calibrate
