#include "reports/step_ops_render.h"

#include <fmt/format.h>

#include <vector>

#include "reports/text_format.h"

namespace meshplan {
namespace {

const char* kind_name(serving::StepOpKind k) {
  switch (k) {
    case serving::StepOpKind::gemm:
      return "GEMM";
    case serving::StepOpKind::attention:
      return "attention";
    case serving::StepOpKind::memory:
      return "HBM";
    case serving::StepOpKind::communication:
      return "communication";
    case serving::StepOpKind::host:
      return "host";
  }
  return "";
}

std::string count_text(double n) {
  return n == static_cast<double>(static_cast<int64_t>(n)) ? with_commas(static_cast<int64_t>(n))
                                                           : fmt::format("{:.2f}", n);
}

struct Rows {
  std::vector<std::vector<std::string>> rows;
  double whole_s = 0;  // the step's time where one micro-batch on one stage is the step
  void add(const char* where, const serving::StepOp& op, double count) {
    const double s = op.seconds * count;
    rows.push_back({*op.of ? fmt::format("{} ({})", op.name, op.of) : op.name, where,
                    kind_name(op.kind), seconds(op.seconds), count_text(count), seconds(s),
                    whole_s > 0 ? fmt::format("{:.1f}%", 100 * s / whole_s) : ""});
  }
};

nlohmann::ordered_json ops_json(const std::vector<serving::StepOp>& ops) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const serving::StepOp& op : ops)
    a.push_back(
        {{"name", op.name}, {"of", op.of}, {"kind", kind_name(op.kind)}, {"seconds", op.seconds}});
  return a;
}

}  // namespace

std::string step_ops_table(const serving::StepOps& ops) {
  Rows r;
  if (ops.pp == 1 && ops.micro_batches == 1) r.whole_s = ops.total.total_s();
  for (const serving::StepOp& op : ops.dense) r.add("dense layer", op, ops.stage_dense_layers);
  for (const serving::StepOp& op : ops.moe) r.add("MoE layer", op, ops.stage_moe_layers);
  r.add("every layer",
        {"attention (the batch's KV cache)", serving::StepOpKind::attention, ops.attention_layer_s},
        ops.stage_dense_layers + ops.stage_moe_layers);
  for (const serving::StepOp& op : ops.head) r.add("LM head", op, 1);
  for (const serving::StepOp& op : ops.host) r.add("host", op, 1);
  r.rows.push_back(
      {"step", "", "", "", "", seconds(ops.total.total_s()), r.whole_s > 0 ? "100.0%" : ""});
  std::string out = fmt::format(
      "  op by op: {} tokens a micro-batch on the largest stage ({} dense, {} MoE layers){}\n",
      count_text(ops.tokens), count_text(ops.stage_dense_layers), count_text(ops.stage_moe_layers),
      r.whole_s > 0 ? ""
                    : fmt::format("; the step is a pipeline round of {} micro-batches over {} "
                                  "stages, plus the host",
                                  count_text(ops.micro_batches), count_text(ops.pp)));
  out += text_table({"op", "where", "kind", "each", "count", "on the stage", "share"}, r.rows);
  return out;
}

nlohmann::ordered_json step_ops_json(const serving::StepOps& ops) {
  return {{"tokens", ops.tokens},
          {"pp", ops.pp},
          {"micro_batches", ops.micro_batches},
          {"stage_dense_layers", ops.stage_dense_layers},
          {"stage_moe_layers", ops.stage_moe_layers},
          {"dense", ops_json(ops.dense)},
          {"moe", ops_json(ops.moe)},
          {"attention_layer_s", ops.attention_layer_s},
          {"head", ops_json(ops.head)},
          {"host", ops_json(ops.host)},
          {"total_s", ops.total.total_s()}};
}

}  // namespace meshplan
