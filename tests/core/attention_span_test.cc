// core/attention_span.h: keys per query of global, sliding-window and chunked attention, by hand.
#include "core/attention_span.h"

#include <doctest/doctest.h>

using namespace meshplan;

namespace {

ModelSpec windowed(int64_t layers, int64_t tokens, WindowKind kind, int64_t global_every) {
  ModelSpec m;
  m.layers = layers;
  m.window = AttentionWindow{tokens, kind, global_every};
  return m;
}

}  // namespace

TEST_CASE("global attention: s/2 keys per query under the causal mask, s by the full square") {
  ModelSpec m;
  m.layers = 2;
  CHECK(mean_keys_per_query(m, 0, 8192, true) == 4096);
  CHECK(mean_keys_per_query(m, 1, 8192, false) == 8192);
  CHECK(attention_kernel_span(m, 0, 8192) == 8192);
  CHECK(local_attention_share(m, false) == 0);
}

TEST_CASE("Gemma 2's sliding window: 4,096 keys at 8K tokens make 3,072 per query on even layers") {
  const ModelSpec m = windowed(42, 4096, WindowKind::sliding, 2);
  CHECK(m.attends_locally(0));
  CHECK_FALSE(m.attends_locally(1));
  // (8192·4096 − 4096²/2) / 8192 = 4096 − 1024.
  CHECK(mean_keys_per_query(m, 0, 8192, true) == 3072);
  CHECK(mean_keys_per_query(m, 0, 8192, false) == 6144);
  CHECK(mean_keys_per_query(m, 1, 8192, true) == 4096);
  // A sequence within the window is global attention.
  CHECK(mean_keys_per_query(m, 0, 4096, true) == 2048);
  CHECK(attention_kernel_span(m, 0, 8192) == 4096);
  CHECK(attention_kernel_span(m, 1, 8192) == 8192);
  CHECK(local_attention_share(m, false) == 0.5);
  CHECK(representative_layer(m, false, true) == 0);
  CHECK(representative_layer(m, false, false) == 1);
}

TEST_CASE("Gemma 3: five local layers in six, Mistral 7B: every layer local") {
  const ModelSpec gemma3 = windowed(26, 512, WindowKind::sliding, 6);
  CHECK(local_attention_share(gemma3, false) == doctest::Approx(22.0 / 26));  // 5, 11, 17, 23
  CHECK_FALSE(gemma3.attends_locally(5));
  const ModelSpec mistral = windowed(32, 4096, WindowKind::sliding, 0);
  CHECK(local_attention_share(mistral, false) == 1);
  CHECK(representative_layer(mistral, false, false) == -1);
}

TEST_CASE("Llama 4's chunks: 2 chunks of 8,192 and 3,616 tokens at 20,000") {
  const ModelSpec m = windowed(48, 8192, WindowKind::chunked, 4);
  // (2·8192²/2 + 3616²/2) / 20000 = (67,108,864 + 6,537,728) / 20,000.
  CHECK(mean_keys_per_query(m, 0, 20000, true) == doctest::Approx(3682.3296));
  CHECK(mean_keys_per_query(m, 3, 20000, true) == 10000);
  // Whole chunks: c/2 keys per query, however many chunks.
  CHECK(mean_keys_per_query(m, 0, 4 * 8192, true) == 4096);
}

TEST_CASE("serving: the keys one query reads, and their sum over a prompt chunk") {
  const AttentionWindow sliding{4, WindowKind::sliding, 0}, chunked{4, WindowKind::chunked, 0};
  // Positions 1..10 read 1 2 3 4 4 4 4 4 4 4 keys in a window of 4; 1 2 3 4 1 2 3 4 1 2 in chunks.
  CHECK(local_keys(sliding, 3) == 3);
  CHECK(local_keys(sliding, 10) == 4);
  CHECK(local_keys(chunked, 5) == 1);
  CHECK(local_keys(chunked, 10) == 2);
  CHECK(local_keys_sum(sliding, 0, 10) == 1 + 2 + 3 + 4 * 7);
  CHECK(local_keys_sum(sliding, 2, 3) == 3 + 4 + 4);
  CHECK(local_keys_sum(chunked, 0, 10) == 10 + 10 + 3);
  CHECK(local_keys_sum(chunked, 3, 4) == 4 + 1 + 2 + 3);
  const ModelSpec gemma2 = windowed(42, 4096, WindowKind::sliding, 2);
  CHECK(local_layer_share(gemma2) == 0.5);
}
