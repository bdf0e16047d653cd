// What every fuzz target shares: the input as text, and the promise under test. A parser returns
// a value or diagnostics; it never crashes, hangs or throws. Diagnostics are rendered too, so
// the caret display is fuzzed with them.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/result.h"

namespace meshplan::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input written to a file of this process's own under /tmp, for a reader that takes a path;
// removed when it goes (an input that stops the process leaves it behind).
class InputFile {
 public:
  InputFile(const char* name, const std::string& text)
      : path_("/tmp/meshplan-" + std::string(name) + "-fuzz-" + std::to_string(getpid()) +
              ".yaml") {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Renders the diagnostics of a failed result (the value of a good one is left alone).
template <class T>
void render(const Result<T>& r) {
  if (!r.ok()) (void)format_diagnostics(r.errors());
}

}  // namespace meshplan::fuzz
