// A count per pipeline stage (Layout::recompute_stage_layers). A Layout must stay a small,
// trivially copyable value: the search copies layouts in its inner loop and keeps one per work
// item, so a list held inline or on the heap per copy made it measurably slower and larger. The
// lists are interned instead: each distinct list is stored once for the life of the process
// (thread-safe, never moved or freed) and a StageCounts is a pointer to it. Equal lists are the
// same pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace meshplan {

class StageCounts {
 public:
  StageCounts() = default;
  StageCounts(std::initializer_list<int64_t> counts) : StageCounts(std::vector<int64_t>(counts)) {}
  StageCounts(const std::vector<int64_t>& counts);  // NOLINT: a list converts implicitly

  bool empty() const { return list_ == nullptr; }
  size_t size() const { return list_ ? list_->size() : 0; }
  int64_t operator[](size_t stage) const { return (*list_)[stage]; }
  const int64_t* begin() const { return list_ ? list_->data() : nullptr; }
  const int64_t* end() const { return list_ ? list_->data() + list_->size() : nullptr; }
  void clear() { list_ = nullptr; }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(StageCounts a, StageCounts b) { return a.list_ == b.list_; }
  friend bool operator!=(StageCounts a, StageCounts b) { return a.list_ != b.list_; }

 private:
  const std::vector<int64_t>* list_ = nullptr;  // interned; null: no list
};

}  // namespace meshplan
