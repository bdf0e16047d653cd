#include "planner/model_flops_eq3.h"

namespace meshplan {

double eq3_flops_per_step(const ModelSpec& m, int64_t global_batch) {
  const double B = static_cast<double>(global_batch), s = static_cast<double>(m.training.seq_len);
  const double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double V = static_cast<double>(m.vocab);
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

}  // namespace meshplan
