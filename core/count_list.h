// Lists of counts on the command line (`meshplan sweep --gpus 64,128,512` or `--gpus 64..16384`,
// `--seq-len 4096,8192`): comma-separated items, each a positive integer N or a geometric range
// A..B (A, 2A, 4A, ... up to B) or A..B*F (factor F >= 2). The result is sorted ascending without
// duplicates. Errors carry the column of the offending item.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace meshplan {

// `origin` names the option in diagnostics ("--gpus"); `field` is the field they report.
// Each value must be at most `max_value`.
Result<std::vector<int64_t>> parse_count_list(const std::string& text, const std::string& origin,
                                              const std::string& field, int64_t max_value);

}  // namespace meshplan
