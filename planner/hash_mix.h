// The hashing steps the planner's caches share (GemmMemo, CostModel's layer-cost and compute
// maps): fold a word in, then spread the bits over the whole word. Integral doubles and small
// integers carry their information in a few bits (a double's high ones, an int's low ones); a
// table that keeps the low bits of the hash needs every input bit to reach them.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <tuple>

namespace meshplan {

// `h` with the word `v` folded in (a Fibonacci multiply, rotated so the next fold meets its high
// bits low).
inline uint64_t folded(uint64_t h, uint64_t v) {
  return std::rotl((h ^ v) * 0x9E3779B97F4A7C15ull, 29);
}

// MurmurHash3's 64-bit finalizer: every input bit moves every output bit.
inline uint64_t mixed(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

// A key of words' hash: each folded in, in order, then mixed.
template <class... Words>
uint64_t hashed(Words... words) {
  uint64_t h = 0;
  ((h = folded(h, static_cast<uint64_t>(words))), ...);
  return mixed(h);
}

// The hash of a key that is a tuple or array of words (hashed over its elements in order), for
// the caches' maps.
struct WordsHash {
  template <class Key>
  size_t operator()(const Key& k) const {
    return static_cast<size_t>(std::apply([](auto... v) { return hashed(v...); }, k));
  }
};

}  // namespace meshplan
