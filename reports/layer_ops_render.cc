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

std::string kind_label(const OpCost& op, const LayerOpsReport& r) {
  switch (op.kind) {
    case OpKind::gemm:
      return "GEMM " + (op.bf16 ? std::string("bf16") : r.gemm_dtype);
    case OpKind::attention:
      return r.attention_kernel.empty() ? "attention" : "attention " + r.attention_kernel;
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

std::vector<std::string> op_row(const OpCost& op, const LayerOpsReport& r, double total_s) {
  const bool flops = op.kind != OpKind::memory_bound;
  return {op.name,
          kind_label(op, r),
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

std::vector<std::vector<std::string>> layer_rows(const std::vector<OpCost>& ops, const LayerCost& c,
                                                 const LayerOpsReport& r) {
  const double comm_forward = c.tp_forward_s + c.cp_forward_s + c.ep_forward_s;
  const double comm_backward = c.tp_backward_s + c.cp_backward_s + c.ep_backward_s;
  const double total = c.forward_s + c.backward_s + comm_forward + comm_backward;
  std::vector<std::vector<std::string>> rows;
  for (const OpCost& op : ops) rows.push_back(op_row(op, r, total));
  rows.push_back(sum_row("compute", c.forward_s, c.backward_s, total));
  if (c.tp_forward_s + c.tp_backward_s > 0)
    rows.push_back(sum_row("TP (exposed)", c.tp_forward_s, c.tp_backward_s, total));
  if (c.cp_forward_s + c.cp_backward_s > 0)
    rows.push_back(sum_row("CP (exposed)", c.cp_forward_s, c.cp_backward_s, total));
  if (c.ep_forward_s + c.ep_backward_s > 0)
    rows.push_back(sum_row("EP (exposed)", c.ep_forward_s, c.ep_backward_s, total));
  rows.push_back(sum_row("layer", c.forward_s + comm_forward, c.backward_s + comm_backward, total));
  return rows;
}

std::vector<std::vector<std::string>> head_rows(const LayerOpsReport& r) {
  const double total = r.costs.head.forward_s + r.costs.head.backward_s;
  std::vector<std::vector<std::string>> rows;
  for (const OpCost& op : r.ops.head) rows.push_back(op_row(op, r, total));
  rows.push_back(sum_row("head", r.costs.head.forward_s, r.costs.head.backward_s, total));
  return rows;
}

int64_t micro_batch_tokens(const LayerOpsReport& r) {
  return r.layout.mbs * r.seq_len / r.layout.cp;
}

std::string intro(const LayerOpsReport& r) {
  const Layout& l = r.layout;
  return fmt::format("one micro-batch ({} tokens on this GPU: mbs {} × sequence {}{}), tp {}{}",
                     with_commas(micro_batch_tokens(r)), l.mbs, with_commas(r.seq_len),
                     l.cp > 1 ? fmt::format(" / cp {}", l.cp) : "", l.tp,
                     l.ep > 1 ? fmt::format(", ep {}", l.ep) : "");
}

std::string footnotes(const LayerOpsReport& r) {
  std::string out;
  if (r.gemm_dtype == "fp8")
    out += fmt::format(
        "FP8 GEMM seconds include the scaling recipe's casts: × {:.3f} ({} "
        "fp8_quantization_overhead, {}); BF16 GEMMs none.\n",
        1 + r.fp8_quantization_overhead.value, r.fp8_recipe,
        origin_tag(r.fp8_quantization_overhead));
  out += fmt::format(
      "Each stage runs these × {:.4f}, at the pace of its slowest of {} GPUs "
      "(gpu_compute_spread).\n",
      r.straggler_slowdown, with_commas(r.layout.gpus()));
  return out;
}

// The sections in `table`'s form, each under `title(text)`.
template <class Table, class Title>
std::string sections(const LayerOpsReport& r, Table table, Title title) {
  std::string out;
  if (!r.ops.dense.empty())
    out += title(fmt::format("dense layer ({} of {})", r.dense_layers, r.layers)) +
           table(kHeader, layer_rows(r.ops.dense, r.costs.dense, r));
  if (!r.ops.moe.empty())
    out += title(fmt::format("MoE layer ({} of {})", r.moe_layers, r.layers)) +
           table(kHeader, layer_rows(r.ops.moe, r.costs.moe, r));
  out += title("LM head and loss (last stage)") + table(kHeader, head_rows(r));
  return out;
}

nlohmann::ordered_json op_json(const OpCost& op, const LayerOpsReport& r) {
  nlohmann::ordered_json j = {{"name", op.name}, {"kind", kind_name(op.kind)}};
  if (op.kind == OpKind::gemm) {
    j["dtype"] = op.bf16 ? "bf16" : r.gemm_dtype;
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

nlohmann::ordered_json ops_json(const std::vector<OpCost>& ops, const LayerOpsReport& r) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const OpCost& op : ops) a.push_back(op_json(op, r));
  return a;
}

nlohmann::ordered_json layer_json(const std::vector<OpCost>& ops, const LayerCost& c,
                                  const LayerOpsReport& r) {
  return {{"ops", ops_json(ops, r)},
          {"compute_forward_s", c.forward_s},
          {"compute_backward_s", c.backward_s},
          {"tp_forward_s", c.tp_forward_s},
          {"tp_backward_s", c.tp_backward_s},
          {"cp_forward_s", c.cp_forward_s},
          {"cp_backward_s", c.cp_backward_s},
          {"ep_forward_s", c.ep_forward_s},
          {"ep_backward_s", c.ep_backward_s}};
}

}  // namespace

LayerOpsReport layer_ops_report(CostModel& model, const Layout& l) {
  LayerOpsReport r;
  r.ops = model.layer_ops(l);
  r.costs = model.layer_costs(l);
  r.layout = l;
  r.seq_len = model.training().seq_len;
  r.layers = model.model().layers;
  r.dense_layers = model.model().dense_layers();
  r.moe_layers = model.model().moe_layers();
  r.gemm_dtype = model.calibration().gemm_dtype;
  r.attention_kernel = model.attention().kernel();
  r.fp8_recipe = model.options().fp8_recipe;
  r.fp8_quantization_overhead = model.calibration().fp8_quantization_overhead;
  r.straggler_slowdown = straggler_slowdown(model.calibration().gpu_compute_spread.value, l.gpus());
  return r;
}

std::string layer_ops_table(const LayerOpsReport& r) {
  return fmt::format("\nlayer ops: {}\n", intro(r)) +
         sections(
             r,
             [](const auto& header, const auto& rows) { return text_table(header, rows) + "\n"; },
             [](const std::string& t) { return t + "\n"; }) +
         footnotes(r);
}

std::string layer_ops_markdown(const LayerOpsReport& r) {
  return fmt::format("{}.\n", intro(r)) +
         sections(
             r, [](const auto& header, const auto& rows) { return markdown_table(header, rows); },
             [](const std::string& t) { return fmt::format("\n#### {}\n\n", t); }) +
         "\n" + footnotes(r);
}

nlohmann::ordered_json layer_ops_json(const LayerOpsReport& r) {
  nlohmann::ordered_json j;
  j["micro_batch_tokens"] = micro_batch_tokens(r);
  if (!r.ops.dense.empty()) j["dense"] = layer_json(r.ops.dense, r.costs.dense, r);
  if (!r.ops.moe.empty()) j["moe"] = layer_json(r.ops.moe, r.costs.moe, r);
  j["head"] = {{"ops", ops_json(r.ops.head, r)},
               {"forward_s", r.costs.head.forward_s},
               {"backward_s", r.costs.head.backward_s}};
  j["gemm_dtype"] = r.gemm_dtype;
  j["fp8_quantization_overhead"] = r.gemm_dtype == "fp8" ? r.fp8_quantization_overhead.value : 0.0;
  j["attention_kernel"] = r.attention_kernel;
  j["straggler_slowdown"] = r.straggler_slowdown;
  return j;
}

}  // namespace meshplan
