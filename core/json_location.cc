#include "core/json_location.h"

#include <algorithm>

namespace meshplan {

SourceLocation location_of_offset(const std::string& file, const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  size_t line_end = text.find('\n', line_start);
  if (line_end == std::string::npos) line_end = text.size();
  std::string source_line = text.substr(line_start, line_end - line_start);
  if (!source_line.empty() && source_line.back() == '\r') source_line.pop_back();
  return {file, line, static_cast<int>(offset - line_start) + 1, source_line};
}

SourceLocation location_of_json_key(const std::string& file, const std::string& text,
                                    const std::string& key) {
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return {file, 0, 0, ""};
  return location_of_offset(file, text, at);
}

}  // namespace meshplan
