// The SVG charts of a scale sweep: throughput, MFU and time to train against the swept value
// (GPUs, sequence length or global batch). Pure functions of the sweep.
#pragma once

#include <string>

#include "planner/scale_sweep.h"

namespace meshplan {

// Tokens/s (millions) of each point's best layout on log-log axes; over GPUs also ideal linear
// scaling from the first point with a layout (dashed).
std::string sweep_throughput_chart(const SweepResult& s);
// MFU (%) of each point's best layout.
std::string sweep_mfu_chart(const SweepResult& s);
// Days to train the token budget, log-log. REQUIRES: the sweep had a budget (tokens > 0).
std::string sweep_time_to_train_chart(const SweepResult& s, double tokens);

}  // namespace meshplan
