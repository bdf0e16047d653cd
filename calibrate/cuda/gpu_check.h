// Return-code checks for CUDA runtime, cuBLASLt and NCCL calls. A failing call throws GpuError
// whose message names file:line, the call and the API's own error string; the Benchmarker
// methods catch it at their boundary and return it as a Diagnostic (libraries never exit).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "core/diagnostic.h"

namespace meshplan::calibrate::gpu {

struct GpuError {
  std::string message;
};

inline std::string gpu_error_text(const char* file, int line, const char* call, const char* what) {
  std::string f = file;
  size_t slash = f.rfind("calibrate/");
  if (slash != std::string::npos) f = f.substr(slash);
  return f + ":" + std::to_string(line) + ": " + call + ": " + what;
}

inline Diagnostic to_diagnostic(const GpuError& e) { return Diagnostic{{}, "", "", e.message}; }

}  // namespace meshplan::calibrate::gpu

#define MP_CUDA(call)                                                                        \
  do {                                                                                       \
    cudaError_t mp_err_ = (call);                                                            \
    if (mp_err_ != cudaSuccess)                                                              \
      throw ::meshplan::calibrate::gpu::GpuError{::meshplan::calibrate::gpu::gpu_error_text( \
          __FILE__, __LINE__, #call, cudaGetErrorString(mp_err_))};                          \
  } while (0)

#define MP_CUBLAS(call)                                                                      \
  do {                                                                                       \
    cublasStatus_t mp_st_ = (call);                                                          \
    if (mp_st_ != CUBLAS_STATUS_SUCCESS)                                                     \
      throw ::meshplan::calibrate::gpu::GpuError{::meshplan::calibrate::gpu::gpu_error_text( \
          __FILE__, __LINE__, #call, cublasLtGetStatusString(mp_st_))};                      \
  } while (0)

#define MP_NCCL(call)                                                                        \
  do {                                                                                       \
    ncclResult_t mp_nr_ = (call);                                                            \
    if (mp_nr_ != ncclSuccess)                                                               \
      throw ::meshplan::calibrate::gpu::GpuError{::meshplan::calibrate::gpu::gpu_error_text( \
          __FILE__, __LINE__, #call,                                                         \
          (std::string(ncclGetErrorString(mp_nr_)) + " (" + ncclGetLastError(nullptr) + ")") \
              .c_str())};                                                                    \
  } while (0)
