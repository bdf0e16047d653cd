// zero_sharding() is defined inline in the header (it sits on the search's hot path).
#include "planner/zero_sharding.h"
