// Time to train a token budget as text and JSON (`sweep`, and `estimate` / `plan` with
// --tokens).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "planner/cost_model.h"
#include "planner/training_time.h"

namespace meshplan {

// "2,701 days" (from 100 days), "23.4 days", "5.2 h": a training duration for tables.
std::string duration_text(double seconds);
// "time to train 15.00 T tokens: 23.4 days, 1,234,567 GPU-hours\n" (estimate and plan with
// --tokens).
std::string time_to_train_line(double tokens, const TrainingTime& t);
// {tokens, seconds, gpu_hours} of training `tokens` at `e`'s throughput on `gpus` GPUs.
nlohmann::ordered_json time_to_train_json(double tokens, const Estimate& e, int64_t gpus);

}  // namespace meshplan
