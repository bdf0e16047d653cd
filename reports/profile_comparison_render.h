// Renderings of a ProfileComparison (`meshplan calibrate compare`): terminal table, Markdown and
// the stable JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/profile_comparison.h"

namespace meshplan {

// JSON fields (stable interface): base, other {name, how, gpu, date}; scalars[] {name, base,
// other, ratio}; gemm[] {dtype, base_samples, other_samples, throughput, heuristic,
// max_efficiency, sustained_tflops}; attention[] {kernel, base_samples, other_samples, forward,
// backward}; collectives {base_fits, other_fits, busbw, latency}. A ratio summary is {count,
// geomean, median, p10, p90, min, min_at, max, max_at}; ratios are OTHER over BASE (latency:
// BASE over OTHER), 0 where either side lacks the value.
nlohmann::ordered_json profile_comparison_json(const ProfileComparison& c);

std::string profile_comparison_table(const ProfileComparison& c);
std::string profile_comparison_markdown(const ProfileComparison& c);

}  // namespace meshplan
