// A hash map of at most kCapacity entries for LastKeyCache (planner/last_key_cache.h), emptied
// when an insertion would grow it past that: the entries sit in one array reserved once, found
// by open addressing over a table of their hashes, so a lookup reads one small table and the
// entry, and an insertion allocates nothing. The layer costs' std::unordered_map spent most of
// its time in a bucket-index division, a node's first cache miss, and a node allocation per
// entry (llama3-405b and qwen3-235b searches, perf).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace meshplan {

template <class Key, class Value, class Hash, size_t kCapacity>
class FlatCacheMap {
  static_assert(kCapacity > 0 && kCapacity < (size_t{1} << 30), "a cache, not a store");

 public:
  using key_type = Key;
  using mapped_type = Value;
  using value_type = std::pair<Key, Value>;
  using iterator = value_type*;

  size_t size() const { return entries_.size(); }
  iterator end() { return nullptr; }
  iterator find(const Key& key) {
    if (entries_.empty()) return nullptr;
    const uint64_t h = Hash{}(key);
    for (size_t i = slot_of(h);; i = (i + 1) & kMask) {
      const uint32_t slot = slots_[i];
      if (slot == 0) return nullptr;
      value_type& e = entries_[slot - 1];
      if (hashes_[i] == h && e.first == key) return &e;
    }
  }
  // REQUIRES: `key` absent. A full map empties itself first: its entries never move, so a
  // reference to one holds until clear().
  std::pair<iterator, bool> emplace(const Key& key, Value value) {
    if (entries_.size() == kCapacity) clear();
    if (entries_.capacity() == 0) {
      entries_.reserve(kCapacity);
      slots_.assign(kSlots, 0);
      hashes_.assign(kSlots, 0);
    }
    const uint64_t h = Hash{}(key);
    size_t i = slot_of(h);
    while (slots_[i] != 0) i = (i + 1) & kMask;
    entries_.emplace_back(key, std::move(value));
    slots_[i] = static_cast<uint32_t>(entries_.size());
    hashes_[i] = h;
    return {&entries_.back(), true};
  }
  void clear() {
    if (entries_.empty()) return;
    entries_.clear();  // keeps its capacity: entries never move
    std::fill(slots_.begin(), slots_.end(), 0);
  }

 private:
  // Twice the entries, rounded up to a power of two: probes stay short.
  static constexpr size_t slot_count() {
    size_t n = 1;
    while (n < 2 * kCapacity) n *= 2;
    return n;
  }
  static constexpr size_t kSlots = slot_count();
  static constexpr size_t kMask = kSlots - 1;
  static constexpr int kSlotBits = std::countr_zero(kSlots);
  // The hash's top bits after a Fibonacci multiply: every bit of it moves the slot.
  static size_t slot_of(uint64_t h) {
    return kSlotBits == 0 ? 0
                          : static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits));
  }

  std::vector<value_type> entries_;
  std::vector<uint32_t> slots_;  // entry index + 1; 0: empty
  std::vector<uint64_t> hashes_;
};

}  // namespace meshplan
