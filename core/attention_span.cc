#include "core/attention_span.h"

#include <algorithm>

namespace meshplan {

double mean_keys_per_query(const ModelSpec& m, int64_t layer, double seq_len, bool causal) {
  const double scale = causal ? 1.0 : 2.0;
  if (!m.attends_locally(layer) || seq_len <= 0) return scale * seq_len / 2;
  const AttentionWindow window = *m.attended_window();
  const double w = static_cast<double>(window.tokens);
  if (seq_len <= w) return scale * seq_len / 2;
  double pairs = 0;
  if (window.kind == WindowKind::sliding) {
    pairs = seq_len * w - w * w / 2;
  } else {
    const double chunks = static_cast<double>(static_cast<int64_t>(seq_len / w));
    const double rest = seq_len - chunks * w;
    pairs = chunks * w * w / 2 + rest * rest / 2;
  }
  return scale * pairs / seq_len;
}

double indexer_flops_per_key(const ModelSpec& m) {
  if (!m.sparse_attention) return 0;
  return 2 * static_cast<double>(m.sparse_attention->index_heads) *
         static_cast<double>(m.sparse_attention->index_head_dim);
}

double indexer_flops_per_query(const ModelSpec& m, double seq_len, bool causal) {
  if (seq_len <= 0) return 0;
  return indexer_flops_per_key(m) * (causal ? 1.0 : 2.0) * seq_len / 2;
}

int64_t attention_kernel_span(const ModelSpec& m, int64_t layer, int64_t seq_len) {
  return m.attends_locally(layer) ? std::min(seq_len, m.attended_window()->tokens) : seq_len;
}

double local_attention_share(const ModelSpec& m, bool moe_layers) {
  if (!m.attended_window()) return 0;
  int64_t local = 0, all = 0;
  for (int64_t i = 0; i < m.layers; ++i) {
    if (m.is_moe_layer(i) != moe_layers) continue;
    ++all;
    if (m.attends_locally(i)) ++local;
  }
  return all == 0 ? 0 : static_cast<double>(local) / static_cast<double>(all);
}

int64_t representative_layer(const ModelSpec& m, bool moe_layers, bool local) {
  for (int64_t i = 0; i < m.layers; ++i)
    if (m.is_moe_layer(i) == moe_layers && m.attends_locally(i) == local) return i;
  return -1;
}

KindLayers kind_layers(const ModelSpec& m, bool moe_layers) {
  const int64_t local = representative_layer(m, moe_layers, true),
                global = representative_layer(m, moe_layers, false);
  if (local < 0 || global < 0) {
    const int64_t only = local >= 0 ? local : std::max<int64_t>(global, 0);
    return {only, only, 0};
  }
  return {global, local, local_attention_share(m, moe_layers)};
}

double local_keys(const AttentionWindow& w, int64_t position) {
  if (position <= 0) return 0;
  return static_cast<double>(w.kind == WindowKind::sliding ? std::min(position, w.tokens)
                                                           : (position - 1) % w.tokens + 1);
}

namespace {

// local_keys summed over positions 1 … n.
double keys_through(const AttentionWindow& w, int64_t n) {
  if (n <= 0) return 0;
  const auto tri = [](int64_t k) {
    return static_cast<double>(k) * static_cast<double>(k + 1) / 2;
  };
  if (w.kind == WindowKind::sliding)
    return n <= w.tokens
               ? tri(n)
               : tri(w.tokens) + static_cast<double>(n - w.tokens) * static_cast<double>(w.tokens);
  return static_cast<double>(n / w.tokens) * tri(w.tokens) + tri(n % w.tokens);
}

}  // namespace

double local_keys_sum(const AttentionWindow& w, int64_t first, int64_t count) {
  return keys_through(w, first + count) - keys_through(w, first);
}

int64_t local_layers(const ModelSpec& m) {
  int64_t local = 0;
  for (int64_t i = 0; i < m.layers; ++i) local += m.attends_locally(i) ? 1 : 0;
  return local;
}

double local_layer_share(const ModelSpec& m) {
  if (m.layers == 0) return 0;
  return static_cast<double>(local_layers(m)) / static_cast<double>(m.layers);
}

}  // namespace meshplan
