// Cost per million output tokens at a GPU-hour price (token_cost.h).
#include "serving/token_cost.h"

#include <doctest/doctest.h>

using meshplan::serving::usd_per_million_output_tokens;

TEST_CASE("token cost: four GPUs at 2.50 USD an hour serving 2,000 tokens/s cost 1.39 USD/Mtok") {
  // 4 × 2.50 = 10 USD an hour = 1/360 USD a second, over 2,000 tokens a second, × 10^6.
  CHECK(usd_per_million_output_tokens(4, 2000, 2.5) == doctest::Approx(1e6 / 360 / 2000));
  CHECK(usd_per_million_output_tokens(4, 2000, 2.5) == doctest::Approx(1.388889).epsilon(1e-6));
}

TEST_CASE("token cost: twice the throughput on the same GPUs halves the cost per token") {
  CHECK(usd_per_million_output_tokens(8, 4000, 3) ==
        doctest::Approx(usd_per_million_output_tokens(8, 2000, 3) / 2));
}
