#include "core/diagnostic.h"

#include <fmt/format.h>

namespace meshplan {

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.where.file.empty()) {
    out += d.where.file;
    if (d.where.line > 0) out += fmt::format(":{}:{}", d.where.line, d.where.column);
    out += ": ";
  }
  out += "error: ";
  if (!d.field.empty()) {
    out += fmt::format("field '{}'", d.field);
    if (!d.value.empty()) out += fmt::format(" = '{}'", d.value);
    out += ": ";
  } else if (!d.value.empty()) {
    out += fmt::format("'{}': ", d.value);
  }
  out += d.rule;
  if (d.where.line > 0 && !d.where.source_line.empty()) {
    out += fmt::format("\n  {}\n  {}^", d.where.source_line,
                       std::string(static_cast<size_t>(std::max(0, d.where.column - 1)), ' '));
  }
  return out;
}

Diagnostic flag_error(const std::string& flag, const std::string& value, const std::string& rule) {
  return Diagnostic{{flag, 0, 0, ""}, flag.substr(2), value, rule};
}

std::string format_diagnostics(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    out += format_diagnostic(d);
    out += '\n';
  }
  return out;
}

}  // namespace meshplan
