#include "serving/serving_memory.h"

#include <algorithm>
#include <cmath>

#include "core/layer_geometry.h"
#include "serving/kv_cache.h"

namespace meshplan::serving {
namespace {

constexpr double kBf16Bytes = 2;
constexpr double kLogitBytes = 4;  // FP32 logits

// Parameters of one linear map on one GPU: routed experts split over all tp ranks, the rest
// over the dense TP degree (1 under attention-DP).
double rank_params(const LinearMap& m, const ServingLayout& layout) {
  const double copies = static_cast<double>(m.copies);
  if (m.role == LinearRole::expert)
    return copies * static_cast<double>(m.weights()) / static_cast<double>(layout.tp);
  return copies * m.rank_in(layout.dense_tp()) * m.rank_out(layout.dense_tp());
}

// Bias elements of one linear map on one GPU (BF16 in every weight format): a column-parallel
// map's split with its output, a row-parallel or replicated map's whole on every rank; routed
// experts' over all tp ranks with the experts.
double rank_biases(const LinearMap& m, const ServingLayout& layout) {
  if (!m.bias) return 0;
  const double copies = static_cast<double>(m.copies);
  if (m.role == LinearRole::expert)
    return copies * static_cast<double>(m.out) / static_cast<double>(layout.tp);
  if (m.split == TpSplit::column) return copies * m.rank_out(layout.dense_tp());
  return copies * static_cast<double>(m.out);
}

double layer_weight_bytes(const ModelSpec& model, int64_t layer, const ServingLayout& layout,
                          WeightFormat w) {
  double bytes = 2 * static_cast<double>(model.hidden) * kBf16Bytes;  // two norms
  for (const LinearMap& m : layer_linears(model, layer))
    bytes += rank_params(m, layout) * bytes_per_weight(w, m) + rank_biases(m, layout) * kBf16Bytes;
  return bytes;
}

}  // namespace

double weight_bytes_per_gpu(const ModelSpec& model, const ServingLayout& layout, WeightFormat w) {
  const int64_t per_stage = stage_layers(model, layout.pp);
  double first = 0, last = 0;
  for (int64_t l = 0; l < std::min(per_stage, model.layers); ++l)
    first += layer_weight_bytes(model, l, layout, w);
  for (int64_t l = std::max<int64_t>(0, model.layers - per_stage); l < model.layers; ++l)
    last += layer_weight_bytes(model, l, layout, w);
  const LinearMap emb = embedding_linear(model), head = lm_head_linear(model);
  const int64_t tp = layout.dense_tp();
  const double emb_bytes = emb.rank_in(tp) * emb.rank_out(tp) * kBf16Bytes;
  const double head_bytes = head.rank_in(tp) * head.rank_out(tp) * kBf16Bytes;
  const double final_norm = static_cast<double>(model.hidden) * kBf16Bytes;
  if (layout.pp == 1) return first + emb_bytes + head_bytes + final_norm;
  return std::max(first + emb_bytes, last + head_bytes + final_norm);
}

double activation_bytes_per_gpu(const ModelSpec& model, int64_t tp, int64_t step_tokens,
                                int64_t batch) {
  const double t = static_cast<double>(tp);
  const double ffn = static_cast<double>(
      model.moe ? std::max(model.ffn_hidden, model.moe->expert_ffn_hidden) : model.ffn_hidden);
  const double up = (model.mlp == MlpKind::swiglu ? 2 : 1) * ffn / t;
  const double per_token = (static_cast<double>(model.hidden) + up + ffn / t) * kBf16Bytes;
  const double logits =
      static_cast<double>(batch) * static_cast<double>(model.vocab) / t * kLogitBytes;
  return static_cast<double>(step_tokens) * per_token + logits;
}

double memory_fraction(const ServingOptions& options) {
  return options.memory_fraction > 0 ? options.memory_fraction
                                     : engine_preset(options.engine).memory_fraction;
}

double signed_kv_budget_bytes(const EnginePreset& engine, double fraction, double capacity_bytes,
                              double weight_bytes, double activation_bytes, double reserved_bytes) {
  switch (engine.budget) {
    case BudgetRule::fraction_of_total:
      return fraction * capacity_bytes - weight_bytes - activation_bytes - reserved_bytes;
    case BudgetRule::static_fraction:
      return fraction * capacity_bytes - weight_bytes;
    case BudgetRule::fraction_of_free:
      return fraction * (capacity_bytes - weight_bytes - activation_bytes - reserved_bytes);
  }
  return 0;
}

double kv_budget_bytes(const EnginePreset& engine, double fraction, double capacity_bytes,
                       double weight_bytes, double activation_bytes, double reserved_bytes) {
  return std::max(0.0, signed_kv_budget_bytes(engine, fraction, capacity_bytes, weight_bytes,
                                              activation_bytes, reserved_bytes));
}

ServingMemory serving_memory(const ModelSpec& model, const GpuSpec& gpu,
                             const ServingLayout& layout, const ServingOptions& options,
                             int64_t isl, int64_t osl, int64_t prefix_tokens) {
  const EnginePreset& engine = engine_preset(options.engine);
  ServingMemory m;
  m.capacity_bytes = static_cast<double>(gpu.hbm_bytes);
  m.weight_bytes = weight_bytes_per_gpu(model, layout, options.weights);
  m.activation_bytes =
      activation_bytes_per_gpu(model, layout.dense_tp(), step_tokens(options), layout.max_batch);
  m.reserved_bytes = kReservedBytes;
  m.kv_budget_bytes = kv_budget_bytes(engine, memory_fraction(options), m.capacity_bytes,
                                      m.weight_bytes, m.activation_bytes, m.reserved_bytes);
  m.kv_bytes_per_token = kv_bytes_per_token(model, layout.dense_tp(), layout.pp, options.kv);
  m.block_tokens = engine.block_tokens;
  const int64_t raw = static_cast<int64_t>(std::floor(m.kv_budget_bytes / m.kv_bytes_per_token));
  // Under attention-DP each of the tp ranks caches its own sequences.
  m.kv_tokens = raw / m.block_tokens * m.block_tokens * layout.data_ranks();
  m.prefix = prefix_reuse(prefix_tokens, m.block_tokens, engine.reuses_partial_blocks);
  m.prefix_resident_tokens = m.prefix.shared_tokens * layout.data_ranks();
  m.tokens_per_request = request_cache_tokens(model, isl + osl - m.prefix.shared_tokens,
                                              m.block_tokens, engine.drops_sliding_window_kv);
  m.max_concurrency = std::max<int64_t>(0, m.kv_tokens - m.prefix_resident_tokens) /
                      std::max<int64_t>(1, m.tokens_per_request);
  return m;
}

}  // namespace meshplan::serving
