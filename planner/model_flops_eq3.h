// Megatron-LM's closed-form FLOP count (Narayanan et al. 2021, eq. 3), which published runs
// use to report TFLOP/s: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) per step, i.e. full activation
// recompute counted. For GPT-style models it equals step_flops(..., recompute=full).hardware.
#pragma once

#include <cstdint>

#include "core/model_spec.h"

namespace meshplan {

double eq3_flops_per_step(const ModelSpec& m, int64_t global_batch);

}  // namespace meshplan
