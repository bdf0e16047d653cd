// `meshplan serve --ops`: a serving step op by op (StepTimeModel::step_ops), as a terminal table
// and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "serving/step_time.h"

namespace meshplan {

// One row per op: its kind, seconds per layer (or per micro-batch for the head, per step for the
// host), how many the largest stage runs, their seconds on it, and their share of the step where
// one micro-batch on one stage is the whole step (pp 1); then the step's time.
std::string step_ops_table(const serving::StepOps& ops);
// {"tokens", "pp", "micro_batches", "stage_dense_layers", "stage_moe_layers",
// "dense": [{"name", "kind", "seconds"}...], "moe": [...], "attention_layer_s", "head": [...],
// "host": [...], "total_s"}.
nlohmann::ordered_json step_ops_json(const serving::StepOps& ops);

}  // namespace meshplan
