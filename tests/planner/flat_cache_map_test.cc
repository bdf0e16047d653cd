// planner/flat_cache_map.h: the layer costs' bounded cache map.
#include "planner/flat_cache_map.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>

#include "planner/last_key_cache.h"

using namespace meshplan;

namespace {

// Every key in one slot: each lookup walks the probe sequence.
struct CollidingHash {
  uint64_t operator()(int64_t) const { return 7; }
};
struct PlainHash {
  uint64_t operator()(int64_t k) const { return static_cast<uint64_t>(k); }
};

}  // namespace

TEST_CASE("a flat cache map finds what it holds, even when every key hashes alike") {
  FlatCacheMap<int64_t, double, CollidingHash, 8> m;
  CHECK(m.find(1) == m.end());
  for (int64_t k = 0; k < 8; ++k) {
    const auto [it, inserted] = m.emplace(k, 10.0 * static_cast<double>(k));
    CHECK(inserted);
    CHECK(it->second == 10.0 * static_cast<double>(k));
  }
  CHECK(m.size() == 8);
  for (int64_t k = 0; k < 8; ++k) {
    REQUIRE(m.find(k) != m.end());
    CHECK(m.find(k)->first == k);
    CHECK(m.find(k)->second == 10.0 * static_cast<double>(k));
  }
  CHECK(m.find(8) == m.end());
  m.clear();
  CHECK(m.size() == 0);
  for (int64_t k = 0; k < 8; ++k) CHECK(m.find(k) == m.end());
  m.emplace(3, 1.5);
  CHECK(m.find(3)->second == 1.5);
  // Full, it empties itself before the next entry instead of moving its entries.
  for (int64_t k = 10; k < 17; ++k) m.emplace(k, 0.0);
  REQUIRE(m.size() == 8);
  const double* first = &m.find(3)->second;
  m.emplace(99, 9.0);
  CHECK(m.size() == 1);
  CHECK(m.find(3) == m.end());
  CHECK(m.find(99)->second == 9.0);
  CHECK(&m.find(99)->second == first);  // the same storage, reused
}

TEST_CASE("behind LastKeyCache a full flat map is emptied and refilled, its answers the same") {
  LastKeyCache<FlatCacheMap<int64_t, int64_t, PlainHash, 4>> cache(4);
  int64_t made = 0;
  auto square = [&](int64_t k) {
    return cache.get(k, [&] {
      ++made;
      return k * k;
    });
  };
  for (int64_t k = 0; k < 4; ++k) CHECK(square(k) == k * k);
  CHECK(made == 4);
  for (int64_t k = 0; k < 4; ++k) CHECK(square(k) == k * k);
  CHECK(made == 4);        // all held
  CHECK(square(9) == 81);  // the fifth key empties the map first
  CHECK(made == 5);
  CHECK(square(0) == 0);  // asked again: made again
  CHECK(made == 6);
}
