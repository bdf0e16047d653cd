// Validators for numeric command-line options. CLI11's PositiveNumber and NonNegativeNumber let
// NaN through (every comparison with it is false) and state their open bound as DBL_MAX written
// out in full; these name a finite range instead.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace meshplan::cli {

// A finite number in [min, max], written in full (no trailing text).
inline CLI::Validator finite_number(double min, double max) {
  const std::string rule = fmt::format("must be a number between {} and {}", min, max);
  return CLI::Validator(
      [min, max, rule](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool whole = !text.empty() && end == text.c_str() + text.size();
        if (!whole || !std::isfinite(v) || v < min || v > max)
          return fmt::format("'{}' {}", text, rule);
        return "";
      },
      fmt::format("NUMBER in [{}, {}]", min, max));
}

// An integer in [min, max]; out-of-range text (beyond int64_t too) is refused, not saturated.
inline CLI::Validator integer_range(int64_t min, int64_t max) {
  const std::string rule = fmt::format("must be an integer between {} and {}", min, max);
  return CLI::Validator(
      [min, max, rule](std::string& text) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
          return fmt::format("'{}' {}", text, rule);
        return "";
      },
      fmt::format("INT in [{}, {}]", min, max));
}

}  // namespace meshplan::cli
