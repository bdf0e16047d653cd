// Result<T>: a value or the input errors that prevented it (LevelDB's Status, with payload).
#pragma once

#include <cassert>
#include <utility>
#include <variant>
#include <vector>

#include "core/diagnostic.h"

namespace meshplan {

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  // REQUIRES: !errors.empty() (an empty list would be neither a value nor an error).
  Result(std::vector<Diagnostic> errors) : state_(std::move(errors)) {  // NOLINT
    assert(!std::get<1>(state_).empty());
  }
  Result(Diagnostic error) : state_(std::vector<Diagnostic>{std::move(error)}) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok()
  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  // REQUIRES: !ok()
  const std::vector<Diagnostic>& errors() const { return std::get<1>(state_); }

 private:
  std::variant<T, std::vector<Diagnostic>> state_;
};

// Runs `f` (which may throw InputError) and turns its outcome into a Result.
template <class F>
auto capture_input_errors(F&& f) -> Result<decltype(f())> {
  try {
    return f();
  } catch (InputError& e) {
    return std::move(e.diagnostics);
  }
}

}  // namespace meshplan
