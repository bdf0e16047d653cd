// "did you mean …?" for unknown names (after ninja's src/edit_distance.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace meshplan {

// Levenshtein distance between a and b.
int edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `name`, or "" when none is within a third of its length (min 2).
std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — appended to unknown-name rules.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace meshplan
