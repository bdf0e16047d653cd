// Renderings of a MemoryEstimate: terminal table and the stable JSON of `meshplan memory`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/cluster_spec.h"
#include "core/layout.h"
#include "core/model_spec.h"
#include "planner/memory_model.h"

namespace meshplan {

// JSON fields (stable interface, bytes as integers): params_total, stages[] {stage, layers,
// params, params_bytes, grads_bytes, optimizer_bytes, activations_bytes,
// activations_per_layer_bytes, in_flight_micro_batches, other_bytes, other{...}, total_bytes},
// peak_bytes, peak_stage, capacity_bytes, fits. other{} holds logits_bytes,
// zero3_buffer_bytes, fp8_weight_cache_bytes, fp8_scaling_bytes, cuda_context_bytes,
// nccl_bytes, allocator_slack_bytes.
nlohmann::ordered_json memory_json(const MemoryEstimate& e);

std::string memory_table(const MemoryEstimate& e, const ModelSpec& model,
                         const ClusterSpec& cluster, const Layout& layout,
                         const TrainingSpec& training);

}  // namespace meshplan
