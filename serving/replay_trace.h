// A replay's engine steps as a Chrome/Perfetto trace, through the simulator: the recorded steps
// (and the idle gaps between them, waiting for arrivals) become operations on one stream of a
// sim::OperationGraph, which sim::simulate() times and sim::chrome_trace_json() writes, the same
// path `meshplan simulate --trace` takes for a training step.
#pragma once

#include <string>

#include "core/result.h"
#include "serving/request_replay.h"

namespace meshplan::serving {

// REQUIRES: `replay.recorded` in time order (as replay_requests records it).
// Errors: none in practice (a chain on one stream cannot deadlock); the simulator's diagnostic
// is passed on if it ever reports one.
Result<std::string> replay_trace_json(const ReplayResult& replay);

}  // namespace meshplan::serving
