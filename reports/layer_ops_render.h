// `meshplan estimate --ops` and the report's "Where a layer's time goes": one micro-batch's
// layer costs op by op (CostModel::layer_ops), as a terminal table, Markdown and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "planner/cost_model.h"

namespace meshplan {

// What the renderings read: the ops and layer costs of one layout, and the profile values that
// explain them.
struct LayerOpsReport {
  CostModel::LayerOps ops;
  CostModel::LayerPair costs;
  Layout layout;
  int64_t seq_len = 0;
  int64_t layers = 0, dense_layers = 0, moe_layers = 0;
  std::string gemm_dtype;                // the linear layers' GEMMs: bf16 | fp8
  std::string attention_kernel;          // whose samples price core attention ("" for the fallback)
  std::string fp8_recipe;                // CostOptions::fp8_recipe
  Calibrated fp8_quantization_overhead;  // applies where gemm_dtype is fp8
  double straggler_slowdown = 1;         // each stage's compute factor (planner/straggler.h)
};
LayerOpsReport layer_ops_report(CostModel& model, const Layout& l);

// Each layer kind's ops (GEMM shapes, FLOPs, HBM bytes, forward, backward and weight-gradient
// seconds, achieved TFLOP/s, share of the layer), then its exposed TP, CP and EP seconds and its
// total; then the LM head and loss; then the profile values behind them.
std::string layer_ops_table(const LayerOpsReport& r);
std::string layer_ops_markdown(const LayerOpsReport& r);
// {"micro_batch_tokens", "dense": {"ops": [...], "compute_forward_s", "compute_backward_s",
// "tp_forward_s", …}, "moe": {...}, "head": {"ops": [...], "forward_s", "backward_s"},
// "gemm_dtype", "fp8_quantization_overhead", "attention_kernel", "straggler_slowdown"}; a kind
// the model lacks is absent.
nlohmann::ordered_json layer_ops_json(const LayerOpsReport& r);

}  // namespace meshplan
