#include "planner/memory_model.h"

#include <algorithm>

#include "planner/activation_memory.h"
#include "planner/param_count.h"

namespace meshplan {

ModelStateBytes model_state_bytes(double params, int zero, int64_t shards, const MemoryOptions& o) {
  const double d = static_cast<double>(shards);
  ModelStateBytes b;
  b.params = o.weight_bytes_per_param * params / (zero >= 3 ? d : 1.0);
  b.grads = o.grad_bytes_per_param * params / (zero >= 2 ? d : 1.0);
  b.optimizer = o.optimizer_bytes_per_param * params / (zero >= 1 ? d : 1.0);
  return b;
}

double in_flight_micro_batches(const Layout& l, int64_t micro_batches, int64_t stage) {
  const int64_t p = l.pp, m = micro_batches;
  switch (l.schedule) {
    case Schedule::gpipe: return static_cast<double>(m);
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: return static_cast<double>(std::min(m, p - stage));
    case Schedule::interleaved: {
      const int64_t v = l.vpp;
      int64_t chunks = std::min(m * v, 2 * (p - stage - 1) + (v - 1) * p + 1);
      return static_cast<double>(chunks) / static_cast<double>(v);
    }
  }
  return static_cast<double>(m);
}

namespace {

int64_t communicators(const Layout& l) {
  int64_t n = 0;
  for (int64_t degree : {l.tp, l.cp, l.pp, l.dp, l.ep}) n += degree > 1 ? 1 : 0;
  return n;
}

// Activations of one micro-batch over the stage's layers, with `full` of them fully recomputed,
// and the largest single layer as stored without recompute (rebuilt during its backward).
struct StageActivations {
  double per_micro_batch = 0;
  double largest_layer_full = 0;
  double first_layer_stored = 0;
};

StageActivations stage_activations(const ModelSpec& m, const Layout& l, const TrainingSpec& t,
                                   const std::vector<int64_t>& layer_ids) {
  ActivationShape shape = activation_shape(l, t.seq_len);
  StageActivations s;
  const int64_t full = l.recompute == Recompute::full
                           ? static_cast<int64_t>(layer_ids.size())
                           : std::min<int64_t>(l.recompute_layers, static_cast<int64_t>(layer_ids.size()));
  for (size_t i = 0; i < layer_ids.size(); ++i) {
    LayerActivations a = layer_activations(m, layer_ids[i], shape);
    Recompute policy = static_cast<int64_t>(i) < full ? Recompute::full : l.recompute;
    double stored = a.stored(policy);
    if (i == 0) s.first_layer_stored = stored;
    s.per_micro_batch += stored;
    if (policy != Recompute::none) s.largest_layer_full = std::max(s.largest_layer_full, a.no_recompute());
  }
  return s;
}

std::vector<int64_t> layers_of_stage(const ModelSpec& m, const Layout& l, int64_t stage) {
  std::vector<int64_t> bounds = chunk_boundaries(m, l);
  std::vector<int64_t> ids;
  for (size_t c = static_cast<size_t>(stage); c + 1 < bounds.size(); c += static_cast<size_t>(l.pp))
    for (int64_t i = bounds[c]; i < bounds[c + 1]; ++i) ids.push_back(i);
  return ids;
}

}  // namespace

MemoryEstimate estimate_memory(const ModelSpec& m, const GpuSpec& gpu, const Layout& l,
                               const TrainingSpec& t, const MemoryOptions& o) {
  MemoryEstimate est;
  est.params_total = total_params(m);
  est.capacity_bytes = static_cast<double>(gpu.hbm_bytes);
  const int64_t micro_batches = t.global_batch / (l.dp * l.mbs);
  const int64_t dense_shards = l.dp * l.cp;
  const int64_t expert_shards = std::max<int64_t>(1, l.dp * l.cp / l.ep);
  ActivationShape shape = activation_shape(l, t.seq_len);
  for (const StageParams& sp : stage_params(m, l)) {
    StageMemory s;
    s.stage = sp.stage;
    s.layers = sp.layers;
    s.params = sp.per_gpu();
    ModelStateBytes dense = model_state_bytes(static_cast<double>(sp.dense_per_gpu), l.zero, dense_shards, o);
    ModelStateBytes expert = model_state_bytes(static_cast<double>(sp.expert_per_gpu), l.zero, expert_shards, o);
    s.params_bytes = dense.params + expert.params;
    s.grads_bytes = dense.grads + expert.grads;
    s.optimizer_bytes = dense.optimizer + expert.optimizer;
    StageActivations a = stage_activations(m, l, t, layers_of_stage(m, l, sp.stage));
    s.in_flight_micro_batches = in_flight_micro_batches(l, micro_batches, sp.stage);
    s.activations_per_layer_bytes = a.first_layer_stored;
    s.activations_bytes = a.per_micro_batch * s.in_flight_micro_batches + a.largest_layer_full;
    if (sp.stage == l.pp - 1) s.logits_bytes = logits_bytes(m, shape);
    if (l.zero >= 3 && sp.layers > 0) {
      s.zero3_buffer_bytes = 2.0 * o.weight_bytes_per_param * static_cast<double>(sp.per_gpu()) /
                             static_cast<double>(sp.layers);
    }
    s.cuda_context_bytes = static_cast<double>(o.cuda_context_bytes);
    s.nccl_bytes = static_cast<double>(o.nccl_bytes_per_communicator * communicators(l));
    double tensors = s.params_bytes + s.grads_bytes + s.optimizer_bytes + s.activations_bytes +
                     s.logits_bytes + s.zero3_buffer_bytes;
    s.allocator_slack_bytes = o.allocator_slack_fraction * tensors;
    if (s.total_bytes() > est.peak_bytes) {
      est.peak_bytes = s.total_bytes();
      est.peak_stage = s.stage;
    }
    est.stages.push_back(s);
  }
  return est;
}

}  // namespace meshplan
