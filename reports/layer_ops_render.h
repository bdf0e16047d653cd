// `meshplan estimate --ops`: one micro-batch's layer costs op by op (CostModel::layer_ops), as a
// terminal table and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "planner/cost_model.h"

namespace meshplan {

// Each layer kind's ops (GEMM shapes, FLOPs, HBM bytes, forward, backward and weight-gradient
// seconds, achieved TFLOP/s), then its exposed TP, CP and EP seconds and its total, as the cost
// model prices layout `l`; then the LM head and loss.
std::string layer_ops_table(CostModel& model, const Layout& l);
// {"dense": {"ops": [...], "compute_forward_s", "compute_backward_s", "tp_forward_s", …},
//  "moe": {...}, "head": {"ops": [...], "forward_s", "backward_s"}, "gemm_dtype",
//  "fp8_quantization_overhead", "attention_kernel", "straggler_slowdown"}; a kind the model
// lacks is absent.
nlohmann::ordered_json layer_ops_json(CostModel& model, const Layout& l);

}  // namespace meshplan
