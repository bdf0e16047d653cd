// LocalKeys: the keys a run of decode-only steps reads on a local-attention layer, summed
// without visiting each sequence at each step, against visiting each (core/attention_span.h
// local_keys of every sequence's context at every step).
#include "serving/local_keys.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace meshplan;
using namespace meshplan::serving;

TEST_CASE("local keys: a run's sums equal every sequence's keys asked at every step") {
  std::mt19937_64 rng(11);
  auto draw = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int64_t wraps = 0;
  for (int c = 0; c < 400; ++c) {
    CAPTURE(c);
    const AttentionWindow w{draw(1, 40),
                            draw(0, 1) == 1 ? WindowKind::sliding : WindowKind::chunked, 0};
    const int64_t steps = draw(1, 90);
    std::vector<int64_t> contexts(static_cast<size_t>(draw(0, 12)));
    for (int64_t& ctx : contexts) ctx = draw(1, 120);  // a sequence holds its prompt at least
    LocalKeys local(w, steps);
    for (const int64_t ctx : contexts) local.add(ctx);
    for (int64_t j = 1; j <= steps; ++j) {
      CAPTURE(j);
      double visited = 0;
      for (const int64_t ctx : contexts) visited += local_keys(w, ctx + j - 1);
      REQUIRE(static_cast<double>(local.at(j)) == visited);
    }
    for (const int64_t ctx : contexts) wraps += w.kind == WindowKind::chunked && ctx >= w.tokens;
  }
  CHECK(wraps > 100);  // chunks wrap within the cases, not only short contexts
}

TEST_CASE("local keys: a 4-token chunk read at contexts 3 and 8 over four steps, by hand") {
  // Contexts 3 and 8: 3 + 4 keys at step 1 (3 → 3 keys, 8 ends a chunk → 4); step 2: 4 + 1
  // (8 + 1 starts a chunk); step 3: 1 + 2 (3 + 2 = 5 starts one); step 4: 2 + 3.
  const AttentionWindow w{4, WindowKind::chunked, 0};
  LocalKeys local(w, 4);
  local.add(3);
  local.add(8);
  CHECK(local.at(1) == 7);
  CHECK(local.at(2) == 5);
  CHECK(local.at(3) == 3);
  CHECK(local.at(4) == 5);
}
