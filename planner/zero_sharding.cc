#include "planner/zero_sharding.h"

#include <cassert>

namespace meshplan {

ZeroSharding zero_sharding(int zero) {
  assert(zero >= 0 && zero <= 3);
  return {.optimizer = zero >= 1, .grads = zero >= 2, .weights = zero >= 3};
}

}  // namespace meshplan
