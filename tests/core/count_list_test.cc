#include "core/count_list.h"

#include <doctest/doctest.h>

using namespace meshplan;

namespace {

std::vector<int64_t> parse(const std::string& text) {
  Result<std::vector<int64_t>> r = parse_count_list(text, "--gpus", "gpus", 1'000'000);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

}  // namespace

TEST_CASE("count lists: values, doubling ranges and ranges with a factor, sorted and unique") {
  CHECK(parse("64") == std::vector<int64_t>{64});
  CHECK(parse("512,64,128,64") == std::vector<int64_t>{64, 128, 512});
  CHECK(parse("64..1024") == std::vector<int64_t>{64, 128, 256, 512, 1024});
  CHECK(parse("64..1000") == std::vector<int64_t>{64, 128, 256, 512});
  CHECK(parse("64..16384*4") == std::vector<int64_t>{64, 256, 1024, 4096, 16384});
  CHECK(parse("8,64..256") == std::vector<int64_t>{8, 64, 128, 256});
}

TEST_CASE("count list errors name each bad item with its column") {
  Result<std::vector<int64_t>> r = parse_count_list("64,x,0,9..3", "--gpus", "gpus", 1000);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors().size() == 3);
  CHECK(r.errors()[0].where.column == 4);
  CHECK(r.errors()[0].value == "x");
  CHECK(r.errors()[1].where.column == 6);
  CHECK(r.errors()[2].where.column == 8);
  CHECK(r.errors()[2].rule == "a range A..B needs A <= B");
  Result<std::vector<int64_t>> big = parse_count_list("2000", "--gpus", "gpus", 1000);
  REQUIRE_FALSE(big.ok());
  CHECK(big.errors()[0].rule == "must be at most 1000");
}
