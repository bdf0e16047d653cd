// How many keys each query attends to, layer by layer: the whole causal prefix, or a local
// window (ModelSpec::window), or under sparse attention its top_k (ModelSpec::attended_window: as
// a sliding window of top_k keys counts them). One home for the count the FLOP model, the attention
// kernels' time and the reports share.
//
// Counts are per query, averaged over the `seq_len` positions of a sequence. Causal: the pairs
// under the mask, s/2 for global attention (FlashAttention's convention); a sliding window of w
// keys gives s·w − w²/2 pairs once s > w (the first w queries see their prefix); chunks of c give
// q·c²/2 + r²/2 for s = q·c + r. Not causal: twice that, the full-square convention (Megatron-LM
// and PaLM count s² for global attention, and a local layer the same twice its masked pairs).
// Every formula equals global attention's while the sequence fits in one window or chunk.
#pragma once

#include <cstdint>

#include "core/model_spec.h"

namespace meshplan {

// Mean keys per query on `layer` for sequences of `seq_len` tokens (see above).
double mean_keys_per_query(const ModelSpec& m, int64_t layer, double seq_len, bool causal);

// A sparse-attention indexer's forward FLOPs for one key it scores (ModelSpec::sparse_attention;
// 0 without): 2 · index heads · index head dim.
double indexer_flops_per_key(const ModelSpec& m);

// A sparse-attention indexer's forward FLOPs per query (ModelSpec::sparse_attention; 0 without):
// 2 · index heads · index head dim for each key of its whole prefix, which it scores to choose
// the top_k: the causal mean seq_len/2 keys (twice that not causal, as above). Every TP rank runs
// the whole indexer for its tokens (its weights are replicated).
double indexer_flops_per_query(const ModelSpec& m, double seq_len, bool causal);

// The keys one attention kernel call spans on `layer`: the sequence, or the window or chunk when
// shorter (what its efficiency follows).
int64_t attention_kernel_span(const ModelSpec& m, int64_t layer, int64_t seq_len);

// Of the layers of one kind (MoE or dense), the share that attend locally (0 without a window).
double local_attention_share(const ModelSpec& m, bool moe_layers);

// A local layer of the kind, or a global one (`local` false); -1 when the kind has none.
int64_t representative_layer(const ModelSpec& m, bool moe_layers, bool local);

// The layers a kind (MoE or dense) is priced by: a global and a local one, blended by the local
// share; a kind of one sort only (or none: layer 0) has both fields on that layer and share 0.
struct KindLayers {
  int64_t global = 0, local = 0;
  double local_share = 0;
};
KindLayers kind_layers(const ModelSpec& m, bool moe_layers);

// Serving counts per query: the keys the query at 1-based position `position` (itself and the
// tokens before it) reads on a local layer: min(position, w) in a sliding window, its place in its
// chunk ((position − 1) mod c) + 1 in chunked attention.
double local_keys(const AttentionWindow& w, int64_t position);
// The sum of local_keys over the queries at positions first + 1 … first + count.
double local_keys_sum(const AttentionWindow& w, int64_t first, int64_t count);
// The model's layers that attend locally (0 without a window), and their share of all layers.
int64_t local_layers(const ModelSpec& m);
double local_layer_share(const ModelSpec& m);

}  // namespace meshplan
