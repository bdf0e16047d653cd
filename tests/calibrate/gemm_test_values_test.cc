// calibrate/gemm_test_values.h: the check pattern is exact in every GEMM dtype; the timing
// values are full-entropy (a power-limited GPU runs low-entropy operands faster).
#include "calibrate/gemm_test_values.h"

#include <doctest/doctest.h>

#include <cstring>
#include <set>

namespace meshplan::calibrate {
namespace {

uint32_t float_bits(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST_CASE("the check pattern is nine multiples of 1/8 from -0.5 to 0.5") {
  std::set<float> seen;
  for (uint64_t i = 0; i < 10000; ++i) {
    float v = pattern_value(i, 1);
    CHECK(v * 8 == static_cast<float>(static_cast<int>(v * 8)));
    seen.insert(v);
  }
  CHECK(seen.size() == 9);
  CHECK(*seen.begin() == -0.5f);
  CHECK(*seen.rbegin() == 0.5f);
}

TEST_CASE("timing values are uniform from -1 to 1 with random low mantissa bits") {
  std::set<float> seen;
  int negative = 0, low_bits_set = 0, bf16_low_bits_set = 0;
  const int n = 100000;
  for (uint64_t i = 0; i < n; ++i) {
    float v = random_value(i, 2);
    REQUIRE(v >= -1.0f);
    REQUIRE(v < 1.0f);
    seen.insert(v);
    negative += v < 0;
    low_bits_set += (float_bits(v) & 0xff) != 0;           // bits below bf16's mantissa
    bf16_low_bits_set += (float_bits(v) & 0x1f0000) != 0;  // bf16's lowest 5 mantissa bits
  }
  CHECK(seen.size() > 99000);  // 2^24 values: few repeats in 10^5 draws
  CHECK(negative > 49000);
  CHECK(negative < 51000);
  CHECK(low_bits_set > 90000);
  CHECK(bf16_low_bits_set > 90000);                 // what a bf16 operand keeps is random too
  CHECK(random_value(7, 1) != random_value(7, 2));  // seeds give different operands
}

}  // namespace
}  // namespace meshplan::calibrate
