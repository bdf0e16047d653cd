// Ranges of the model and training fields, shared by models/*.yaml, config.json and the
// command line. They reject typos and absurd sizes, not plausible future models (the largest
// published models have ~130 layers, hidden 25,600, 256 experts, vocabularies of 256K). The
// parameter count and the tokens per step are bounded as well (model_checks.h), so that the
// planner's integer arithmetic on parameters, bytes and tokens cannot overflow.
#pragma once

#include <cstdint>

namespace meshplan {

constexpr int64_t kMaxLayers = 100'000;
constexpr int64_t kMaxWidth = 10'000'000;  // hidden, heads, FFN and head widths, ranks
constexpr int64_t kMaxVocab = 100'000'000;
constexpr int64_t kMaxExperts = 1'000'000;
constexpr int64_t kMaxSeqLen = 100'000'000;
constexpr int64_t kMaxGlobalBatch = 1'000'000'000;
constexpr double kMaxRopeTheta = 1e12;  // RoPE base; published models use 1e4 to 1e7

}  // namespace meshplan
