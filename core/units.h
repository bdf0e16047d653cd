// Unit constants, one home (DESIGN.md §3): the code holds SI units (bytes, seconds, FLOP/s);
// these convert where input enters and output leaves. GB = 1e9 bytes and GiB = 2^30 bytes are
// different units and both are printed, labelled.
#pragma once

#include <cstdint>

namespace meshplan::units {

// Binary byte multiples, as doubles so that dividing a byte count by one never truncates.
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;

// `n` MiB as an exact integer byte count (nvidia-smi reports capacities in MiB).
// REQUIRES: 0 <= n < 2^43.
constexpr int64_t mib_bytes(int64_t n) { return n << 20; }

// Decimal (SI) multiples: GB = 1e9 bytes, GB/s = 1e9 bytes/s, TFLOP/s = 1e12 FLOP/s.
inline constexpr double kKilo = 1e3;
inline constexpr double kMega = 1e6;
inline constexpr double kGiga = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kGB = kGiga;

// Time: a millisecond and a microsecond in seconds, and their counts per second.
inline constexpr double kMillisecond = 1e-3;
inline constexpr double kMicrosecond = 1e-6;
inline constexpr double kMillisecondsPerSecond = 1e3;
inline constexpr double kMicrosecondsPerSecond = 1e6;

}  // namespace meshplan::units
