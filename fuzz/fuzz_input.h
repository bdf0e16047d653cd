// What every fuzz target shares: the input as text, and the promise under test. A parser returns
// a value or diagnostics; it never crashes, hangs or throws. Diagnostics are rendered too, so
// the caret display is fuzzed with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/result.h"

namespace meshplan::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Renders the diagnostics of a failed result (the value of a good one is left alone).
template <class T>
void render(const Result<T>& r) {
  if (!r.ok()) (void)format_diagnostics(r.errors());
}

}  // namespace meshplan::fuzz
