#include "core/attention_span.h"

#include <algorithm>

namespace meshplan {

double mean_keys_per_query(const ModelSpec& m, int64_t layer, double seq_len, bool causal) {
  const double scale = causal ? 1.0 : 2.0;
  if (!m.attends_locally(layer) || seq_len <= 0) return scale * seq_len / 2;
  const double w = static_cast<double>(m.window->tokens);
  if (seq_len <= w) return scale * seq_len / 2;
  double pairs = 0;
  if (m.window->kind == WindowKind::sliding) {
    pairs = seq_len * w - w * w / 2;
  } else {
    const double chunks = static_cast<double>(static_cast<int64_t>(seq_len / w));
    const double rest = seq_len - chunks * w;
    pairs = chunks * w * w / 2 + rest * rest / 2;
  }
  return scale * pairs / seq_len;
}

int64_t attention_kernel_span(const ModelSpec& m, int64_t layer, int64_t seq_len) {
  return m.attends_locally(layer) ? std::min(seq_len, m.window->tokens) : seq_len;
}

double local_attention_share(const ModelSpec& m, bool moe_layers) {
  if (!m.window) return 0;
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

}  // namespace meshplan
