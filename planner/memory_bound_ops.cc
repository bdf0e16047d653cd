#include "planner/memory_bound_ops.h"

#include "core/layer_geometry.h"

namespace meshplan {
namespace {

// An element-wise op whose backward reads and writes twice what its forward does.
MemoryBoundOp elementwise(const char* name, double bytes) { return {name, bytes, 2 * bytes}; }

}  // namespace

double activation_bytes_per_element(const ModelSpec& model) {
  return model.mlp == MlpKind::swiglu ? 6 : 4;
}

std::vector<MemoryBoundOp> shared_memory_bound_ops(const ModelSpec& model,
                                                   const CostOptions& options,
                                                   const MemoryBoundShape& shape) {
  const double t = static_cast<double>(shape.tp), h = static_cast<double>(model.hidden);
  const double tokens = shape.tokens;
  const double rep_tokens = shape.sp ? tokens / t : tokens;
  std::vector<MemoryBoundOp> ops;
  ops.push_back(elementwise("norms, residuals, dropout",
                            rep_tokens * h *
                                (options.norm_residual_bytes_per_token_hidden +
                                 (model.dropout ? options.dropout_bytes_per_token_hidden : 0))));
  if (model.position_embedding == PositionEmbedding::rope) {
    ops.push_back(elementwise(
        "rope", 4 * tokens * static_cast<double>(model.q_width() + model.kv_width()) / t));
  }
  const double act = activation_bytes_per_element(model);
  if (!shape.moe_layer) {
    ops.push_back(
        elementwise("activation", act * tokens * static_cast<double>(model.ffn_hidden) / t));
    return ops;
  }
  const MoeSpec& e = *model.moe;
  const double routed = tokens * static_cast<double>(e.top_k) * e.capacity_factor;
  const double fe = static_cast<double>(e.expert_ffn_hidden);
  ops.push_back(elementwise(
      "activation", act * (routed + tokens * static_cast<double>(e.shared_experts)) * fe / t));
  return ops;
}

MemoryBoundOp moe_permute_op(const ModelSpec& model, const MemoryBoundShape& shape) {
  const double bytes = 2 * static_cast<double>(model.hidden) * moe_permuted_rows(model, shape);
  return {"moe permute", bytes, bytes};  // BF16 rows; the backward permutes the gradients
}

std::vector<MemoryBoundOp> layer_memory_bound_ops(const ModelSpec& model,
                                                  const CostOptions& options,
                                                  const MemoryBoundShape& shape) {
  std::vector<MemoryBoundOp> ops = shared_memory_bound_ops(model, options, shape);
  if (shape.moe_layer) ops.push_back(moe_permute_op(model, shape));
  return ops;
}

double moe_permuted_rows(const ModelSpec& model, const MemoryBoundShape& shape) {
  const MoeSpec& e = *model.moe;
  const double local = rank_tokens(shape.tokens, shape.tp, shape.sp);
  const double group = expert_group_tokens(shape.tokens, shape.tp, shape.etp, shape.sp);
  const double received = group * static_cast<double>(e.top_k) * e.capacity_factor;
  switch (shape.dispatch) {
    case Dispatch::alltoall: {
      const double sent = local * static_cast<double>(e.top_k) * e.capacity_factor;
      const double sort = e.experts / shape.ep > 1 ? 4 * received : 0;
      return 2 * (local + sent) + sort;
    }
    case Dispatch::deepep: {
      const double arrived = received * parts_per_token(e, shape.ep) / static_cast<double>(e.top_k);
      return 2 * (arrived + received);
    }
    case Dispatch::allgather:
      return 4 * received + group * static_cast<double>(shape.ep);
  }
  return 0;
}

std::vector<MemoryBoundOp> loss_memory_bound_ops(const ModelSpec& model, int64_t tp,
                                                 double tokens) {
  // Vocabulary-parallel cross entropy in fp32, pass by pass as Megatron-LM's
  // _VocabParallelCrossEntropy runs it (megatron/core/tensor_parallel/cross_entropy.py), bytes
  // per logit: forward upcast (read 2, write 4), max (4), subtract max (8), exp (8), sum (4),
  // normalise to the softmax kept for backward (8): 38; backward: scale the softmax by the
  // incoming gradient (8) and cast it to bf16 for the head's GEMMs (6): 14.
  const double logits = tokens * (static_cast<double>(model.vocab) / static_cast<double>(tp));
  return {{"cross entropy", 38 * logits, 14 * logits}};
}

double forward_bytes(const std::vector<MemoryBoundOp>& ops) {
  double bytes = 0;
  for (const MemoryBoundOp& op : ops) bytes += op.forward_bytes;
  return bytes;
}

double backward_bytes(const std::vector<MemoryBoundOp>& ops) {
  double bytes = 0;
  for (const MemoryBoundOp& op : ops) bytes += op.backward_bytes;
  return bytes;
}

}  // namespace meshplan
