// The keys a run of decode-only steps reads on a local-attention layer, summed over its
// sequences (core/attention_span.h local_keys of each one's context), step by step without
// visiting each: a sequence reads one key more each step but at a window it has filled (sliding)
// or past a chunk's end, where it starts a new chunk at 1 (chunked). What changes at step j is
// counted where it happens: the sequences filling their window there, or those whose chunk wraps.
// The aggregated replay's decode-only runs and the disaggregated decode workers' runs sum their
// local keys so (inline: asked once per step).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/attention_span.h"
#include "core/model_spec.h"

namespace meshplan::serving {

class LocalKeys {
 public:
  // A run of `steps` steps under `window` (none: every sum is 0).
  LocalKeys(const std::optional<AttentionWindow>& window, int64_t steps)
      : window_(window), steps_(steps) {
    if (!window_) return;
    changes_.assign(static_cast<size_t>(window_->kind == WindowKind::sliding
                                            ? steps_ + 1
                                            : std::min(window_->tokens, steps_ + 1)),
                    0);
  }
  // A sequence whose context is `context` at the run's first step (REQUIRES: context ≥ 1: it
  // holds its prompt). local_keys's arithmetic with one division: asked of every sequence of
  // every run.
  void add(int64_t context) {
    assert(context >= 1);
    if (!window_) return;
    ++sequences_;
    const int64_t w = window_->tokens;
    if (window_->kind == WindowKind::sliding) {
      sum_ += std::min(context, w);
      // It reads one key more at each step until its context reaches the window.
      const int64_t full_from = std::max<int64_t>(1, w - context + 1);  // first step at w keys
      if (full_from <= steps_) ++changes_[static_cast<size_t>(full_from)];
      return;
    }
    // Chunked: at the step after one whose context ends a chunk it reads 1 key, not chunk + 1.
    const int64_t in_chunk = context % w;  // keys past the last chunk boundary (0: at one)
    sum_ += in_chunk == 0 ? w : in_chunk;
    // The first step whose context ends a chunk: w − in_chunk steps on, or the first at a boundary.
    const int64_t wraps_at = (in_chunk == 0 ? 0 : w - in_chunk) + 1;
    if (wraps_at <= steps_) {
      // Its slot modulo changes_.size() (min(w, steps + 1) ≥ wraps_at).
      const auto slot = static_cast<size_t>(wraps_at);
      ++changes_[slot == changes_.size() ? 0 : slot];
    }
  }
  // The sum at step `j` (1-based), asked for j = 1, 2, … in turn.
  int64_t at(int64_t j) {
    for (; asked_ < j; ++asked_) sum_ += step_change(asked_);
    return sum_;
  }

 private:
  // The sum at step j + 1 less that at step j.
  int64_t step_change(int64_t j) {
    if (window_->kind == WindowKind::sliding) {
      full_ += changes_[static_cast<size_t>(j)];  // those at their window from step j on
      return sequences_ - full_;
    }
    const int64_t wrapping =
        changes_[static_cast<size_t>(j % static_cast<int64_t>(changes_.size()))];
    return sequences_ - window_->tokens * wrapping;
  }

  std::optional<AttentionWindow> window_;
  int64_t steps_ = 0, sequences_ = 0, sum_ = 0, full_ = 0, asked_ = 1;
  std::vector<int64_t> changes_;
};

}  // namespace meshplan::serving
