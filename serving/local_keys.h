// The keys a run of decode-only steps reads on a local-attention layer, summed over its
// sequences (core/attention_span.h local_keys of each one's context), step by step without
// visiting each: a sequence reads one key more each step but at a window it has filled (sliding)
// or past a chunk's end, where it starts a new chunk at 1 (chunked). What changes at step j is
// counted where it happens: the sequences filling their window there, or those whose chunk wraps.
// The aggregated replay's decode-only runs and the disaggregated decode workers' runs sum their
// local keys so (inline: asked once per step).
#pragma once

#include <algorithm>
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
  // A sequence whose context is `context` at the run's first step.
  void add(int64_t context) {
    if (!window_) return;
    ++sequences_;
    sum_ += static_cast<int64_t>(local_keys(*window_, context));
    const int64_t w = window_->tokens;
    if (window_->kind == WindowKind::sliding) {
      // It reads one key more at each step until its context reaches the window.
      const int64_t full_from = std::max<int64_t>(1, w - context + 1);  // first step at w keys
      if (full_from <= steps_) ++changes_[static_cast<size_t>(full_from)];
      return;
    }
    // Chunked: at the step after one whose context ends a chunk it reads 1 key, not chunk + 1.
    const int64_t wraps_at = ((w - context % w) % w) + 1;  // first step whose context ends a chunk
    if (wraps_at <= steps_) ++changes_[static_cast<size_t>(wraps_at % changes_.size())];
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
