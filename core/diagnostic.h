// Input errors as values: where (file:line:column), which field, what value, which rule.
// Libraries return these; only the executable prints them and exits (code 2).
#pragma once

#include <string>
#include <vector>

namespace meshplan {

// A place in an input. line and column are 1-based; line == 0 means "no position"
// (a command-line flag, or a field that is missing from its file).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string source_line;  // the text of that line, for the caret display; may be empty
};

struct Diagnostic {
  SourceLocation where;
  std::string field;  // dotted path, e.g. "moe.top_k"; empty when the whole input is wrong
  std::string value;  // the offending value as written; empty when missing
  std::string rule;   // what must hold, e.g. "must be a positive integer"
};

// A command-line flag's bad value: no file position, the field named after the flag
// ("--out" → "out"). REQUIRES: flag starts with "--".
Diagnostic flag_error(const std::string& flag, const std::string& value, const std::string& rule);

// Renders one diagnostic, ninja-style:
//   models/x.yaml:3:9: error: field 'hidden' = '-5': must be a positive integer
//     hidden: -5
//             ^
std::string format_diagnostic(const Diagnostic& d);
std::string format_diagnostics(const std::vector<Diagnostic>& ds);

// Thrown inside parsers and caught at the library boundary, where it becomes a Result.
struct InputError {
  std::vector<Diagnostic> diagnostics;
};

}  // namespace meshplan
