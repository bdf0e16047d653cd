// Positions inside JSON text, for error messages (nlohmann::json keeps none for values).
#pragma once

#include <string>

#include "core/diagnostic.h"

namespace meshplan {

// Location of byte `offset` (0-based) in `text`.
SourceLocation location_of_offset(const std::string& file, const std::string& text, size_t offset);
// Location of the first occurrence of the key "key" in `text`; file-only when absent.
SourceLocation location_of_json_key(const std::string& file, const std::string& text,
                                    const std::string& key);

}  // namespace meshplan
