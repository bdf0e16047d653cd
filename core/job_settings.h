// What a training job sets beside its layout that both the cost model prices (CostOptions::job)
// and the launchers write (launchers/launcher_export.h), so that an exported job runs what was
// priced.
#pragma once

#include <string>

#include "core/model_spec.h"

namespace meshplan {

struct JobSettings {
  // FP8 parameters (MemoryOptions::fp8_params): stored, and gathered by ZeRO, in FP8.
  bool fp8_params = false;
  // The dtype gradients are reduced in where it departs from the framework's default
  // (CostOptions::grad_reduce_dtype: bf16, fp16 or fp32); "" for the default.
  std::string grad_reduce_dtype;

  // Whether a job of `precision` stores FP8 parameters: only FP8 training has them.
  bool fp8_params_in(Precision precision) const {
    return fp8_params && precision == Precision::fp8;
  }
};

}  // namespace meshplan
