#include "reports/layer_ops_render.h"

#include <fmt/format.h>

#include <cmath>

#include "planner/straggler.h"
#include "reports/text_format.h"

namespace meshplan {
namespace {

// The backward's FLOPs per forward FLOP: a GEMM's input and weight gradients (2), flash
// attention's backward (2.5, AttentionModel::time's convention).
double backward_flop_ratio(const OpCost& op) { return op.kind == OpKind::gemm ? 2.0 : 2.5; }

std::string kind_label(const OpCost& op, const CostModel& model) {
  switch (op.kind) {
    case OpKind::gemm:
      return "GEMM " + (op.bf16 ? std::string("bf16") : model.calibration().gemm_dtype);
    case OpKind::attention:
      return model.attention().kernel().empty() ? "attention"
                                                : "attention " + model.attention().kernel();
    case OpKind::memory_bound:
      return "HBM";
  }
  return "";
}

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::gemm:
      return "gemm";
    case OpKind::attention:
      return "attention";
    case OpKind::memory_bound:
      return "memory_bound";
  }
  return "";
}

std::string count_text(double n) {
  const double whole = std::round(n);
  const std::string digits = with_commas(static_cast<int64_t>(whole));
  return whole == n ? digits : fmt::format("~{}", digits);
}

std::string shape_text(const OpCost& op) {
  if (op.kind != OpKind::gemm) return "";
  std::string s =
      fmt::format("{} × {} × {}", count_text(op.rows), count_text(op.cols), count_text(op.inner));
  if (op.count > 1) s += " ×" + count_text(op.count);
  return s;
}

std::string work_text(const OpCost& op) {
  if (op.kind == OpKind::memory_bound)
    return op.forward_bytes >= 1e9 ? fmt::format("{:.2f} GB", op.forward_bytes / 1e9)
                                   : fmt::format("{:.1f} MB", op.forward_bytes / 1e6);
  return op.forward_flops >= 1e12 ? fmt::format("{:.2f} TFLOP", op.forward_flops / 1e12)
                                  : fmt::format("{:.1f} GFLOP", op.forward_flops / 1e9);
}

std::string tflops_text(double flops, double s) {
  return flops > 0 && s > 0 ? fmt::format("{:.0f}", flops / s / 1e12) : "-";
}

std::string share_text(double s, double total) {
  return total > 0 ? fmt::format("{:.1f}%", 100 * s / total) : "-";
}

std::vector<std::string> op_row(const OpCost& op, const CostModel& model, double total_s) {
  const bool flops = op.kind != OpKind::memory_bound;
  return {op.name,
          kind_label(op, model),
          shape_text(op),
          work_text(op),
          seconds(op.forward_s),
          seconds(op.backward_s),
          op.kind == OpKind::gemm ? seconds(op.weight_grad_s) : "",
          flops ? tflops_text(op.forward_flops, op.forward_s) : "",
          flops ? tflops_text(backward_flop_ratio(op) * op.forward_flops, op.backward_s) : "",
          share_text(op.forward_s + op.backward_s, total_s)};
}

std::vector<std::string> sum_row(const char* label, double forward_s, double backward_s,
                                 double total_s) {
  return {label,
          "",
          "",
          "",
          seconds(forward_s),
          seconds(backward_s),
          "",
          "",
          "",
          share_text(forward_s + backward_s, total_s)};
}

const std::vector<std::string> kHeader = {
    "op",       "kind",        "rows × cols × inner", "forward work", "forward",
    "backward", "of it wgrad", "TFLOP/s fwd",         "TFLOP/s bwd",  "share"};

std::string layer_section(const char* title, const std::vector<OpCost>& ops, const LayerCost& c,
                          const CostModel& model) {
  const double comm_forward = c.tp_forward_s + c.cp_forward_s + c.ep_forward_s;
  const double comm_backward = c.tp_backward_s + c.cp_backward_s + c.ep_backward_s;
  const double total = c.forward_s + c.backward_s + comm_forward + comm_backward;
  std::vector<std::vector<std::string>> rows;
  for (const OpCost& op : ops) rows.push_back(op_row(op, model, total));
  rows.push_back(sum_row("compute", c.forward_s, c.backward_s, total));
  if (c.tp_forward_s + c.tp_backward_s > 0)
    rows.push_back(sum_row("TP (exposed)", c.tp_forward_s, c.tp_backward_s, total));
  if (c.cp_forward_s + c.cp_backward_s > 0)
    rows.push_back(sum_row("CP (exposed)", c.cp_forward_s, c.cp_backward_s, total));
  if (c.ep_forward_s + c.ep_backward_s > 0)
    rows.push_back(sum_row("EP (exposed)", c.ep_forward_s, c.ep_backward_s, total));
  rows.push_back(sum_row("layer", c.forward_s + comm_forward, c.backward_s + comm_backward, total));
  return fmt::format("{}\n{}\n", title, text_table(kHeader, rows));
}

nlohmann::ordered_json op_json(const OpCost& op, const CostModel& model) {
  nlohmann::ordered_json j = {{"name", op.name}, {"kind", kind_name(op.kind)}};
  if (op.kind == OpKind::gemm) {
    j["dtype"] = op.bf16 ? "bf16" : model.calibration().gemm_dtype;
    j["rows"] = op.rows;
    j["cols"] = op.cols;
    j["inner"] = op.inner;
    j["count"] = op.count;
  }
  if (op.kind == OpKind::memory_bound) {
    j["forward_bytes"] = op.forward_bytes;
    j["backward_bytes"] = op.backward_bytes;
  } else {
    j["forward_flops"] = op.forward_flops;
  }
  j["forward_s"] = op.forward_s;
  j["backward_s"] = op.backward_s;
  if (op.kind == OpKind::gemm) j["weight_grad_s"] = op.weight_grad_s;
  return j;
}

nlohmann::ordered_json ops_json(const std::vector<OpCost>& ops, const CostModel& model) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const OpCost& op : ops) a.push_back(op_json(op, model));
  return a;
}

nlohmann::ordered_json layer_json(const std::vector<OpCost>& ops, const LayerCost& c,
                                  const CostModel& model) {
  return {{"ops", ops_json(ops, model)},        {"compute_forward_s", c.forward_s},
          {"compute_backward_s", c.backward_s}, {"tp_forward_s", c.tp_forward_s},
          {"tp_backward_s", c.tp_backward_s},   {"cp_forward_s", c.cp_forward_s},
          {"cp_backward_s", c.cp_backward_s},   {"ep_forward_s", c.ep_forward_s},
          {"ep_backward_s", c.ep_backward_s}};
}

int64_t micro_batch_tokens(const CostModel& model, const Layout& l) {
  return l.mbs * model.training().seq_len / l.cp;
}

}  // namespace

std::string layer_ops_table(CostModel& model, const Layout& l) {
  const CostModel::LayerOps ops = model.layer_ops(l);
  const CostModel::LayerPair& costs = model.layer_costs(l);
  const ModelSpec& m = model.model();
  std::string out = fmt::format(
      "\nlayer ops: one micro-batch ({} tokens on this GPU: mbs {} × sequence {}{}), tp {}{}\n",
      with_commas(micro_batch_tokens(model, l)), l.mbs, with_commas(model.training().seq_len),
      l.cp > 1 ? fmt::format(" / cp {}", l.cp) : "", l.tp,
      l.ep > 1 ? fmt::format(", ep {}", l.ep) : "");
  if (!ops.dense.empty())
    out += layer_section(fmt::format("dense layer ({} of {})", m.dense_layers(), m.layers).c_str(),
                         ops.dense, costs.dense, model);
  if (!ops.moe.empty())
    out += layer_section(fmt::format("MoE layer ({} of {})", m.moe_layers(), m.layers).c_str(),
                         ops.moe, costs.moe, model);
  std::vector<std::vector<std::string>> head;
  const double head_total = costs.head.forward_s + costs.head.backward_s;
  for (const OpCost& op : ops.head) head.push_back(op_row(op, model, head_total));
  head.push_back(sum_row("head", costs.head.forward_s, costs.head.backward_s, head_total));
  out += fmt::format("LM head and loss (last stage)\n{}\n", text_table(kHeader, head));
  const Calibrated& q = model.calibration().fp8_quantization_overhead;
  if (model.calibration().gemm_dtype == "fp8")
    out += fmt::format(
        "FP8 GEMM seconds include the scaling recipe's casts: × {:.3f} ({} fp8_quantization_"
        "overhead, {}); BF16 GEMMs none.\n",
        1 + q.value, model.options().fp8_recipe, origin_tag(q));
  out += fmt::format(
      "Each stage runs these × {:.4f}, at the pace of its slowest of {} GPUs "
      "(gpu_compute_spread).\n",
      straggler_slowdown(model.calibration().gpu_compute_spread.value, l.gpus()),
      with_commas(l.gpus()));
  return out;
}

nlohmann::ordered_json layer_ops_json(CostModel& model, const Layout& l) {
  const CostModel::LayerOps ops = model.layer_ops(l);
  const CostModel::LayerPair& costs = model.layer_costs(l);
  nlohmann::ordered_json j;
  j["micro_batch_tokens"] = micro_batch_tokens(model, l);
  if (!ops.dense.empty()) j["dense"] = layer_json(ops.dense, costs.dense, model);
  if (!ops.moe.empty()) j["moe"] = layer_json(ops.moe, costs.moe, model);
  j["head"] = {{"ops", ops_json(ops.head, model)},
               {"forward_s", costs.head.forward_s},
               {"backward_s", costs.head.backward_s}};
  j["gemm_dtype"] = model.calibration().gemm_dtype;
  j["fp8_quantization_overhead"] = model.calibration().gemm_dtype == "fp8"
                                       ? model.calibration().fp8_quantization_overhead.value
                                       : 0.0;
  j["attention_kernel"] = model.attention().kernel();
  j["straggler_slowdown"] =
      straggler_slowdown(model.calibration().gpu_compute_spread.value, l.gpus());
  return j;
}

}  // namespace meshplan
