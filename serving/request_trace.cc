#include "serving/request_trace.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/model_limits.h"
#include "core/yaml_node.h"
#include "serving/request_replay.h"

namespace meshplan::serving {
namespace {

enum class Column { isl, osl, arrival_s, timestamp };

struct ColumnName {
  const char* name;
  Column column;
};

constexpr std::array<ColumnName, 6> kColumns{{{"isl", Column::isl},
                                              {"ContextTokens", Column::isl},
                                              {"osl", Column::osl},
                                              {"GeneratedTokens", Column::osl},
                                              {"arrival_s", Column::arrival_s},
                                              {"TIMESTAMP", Column::timestamp}}};

constexpr const char* kAcceptedColumns =
    "isl or ContextTokens, osl or GeneratedTokens, and optionally arrival_s or TIMESTAMP";

struct Field {
  std::string text;
  int column = 1;  // 1-based, in the line
};

// Splits a line at commas, each field trimmed of spaces; columns point at the field's text.
std::vector<Field> split_fields(const std::string& line) {
  std::vector<Field> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string::npos ? line.size() : comma;
    size_t a = start, b = end;
    while (a < b && (line[a] == ' ' || line[a] == '\t')) ++a;
    while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t')) --b;
    out.push_back({line.substr(a, b - a), static_cast<int>(a) + 1});
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

class TraceParser {
 public:
  TraceParser(const std::string& file) : file_(file) {}

  RequestTrace parse(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (blank(line)) continue;
      if (columns_.empty())
        read_header(line, number);
      else
        read_row(line, number);
    }
    if (columns_.empty()) fail(0, 0, "", "", "", "is empty: the first line must name the columns");
    if (trace_.requests.empty())
      fail(header_line_, 1, header_text_, "", "",
           "has no requests: every line after the column names is one request");
    return trace_;
  }

 private:
  [[noreturn]] void fail(int line, int column, const std::string& text, const std::string& field,
                         const std::string& value, const std::string& rule) const {
    throw InputError{{Diagnostic{{file_, line, column, text}, field, value, rule}}};
  }

  void read_header(const std::string& line, int number) {
    header_line_ = number;
    header_text_ = line;
    std::array<bool, 4> seen{};
    for (const Field& f : split_fields(line)) {
      std::optional<Column> c;
      for (const ColumnName& n : kColumns)
        if (f.text == n.name) c = n.column;
      if (!c)
        fail(number, f.column, line, "column", f.text,
             std::string("is not a trace column; the columns are ") + kAcceptedColumns);
      const bool time = *c == Column::arrival_s || *c == Column::timestamp;
      const size_t slot = time ? 2 : static_cast<size_t>(*c);
      if (seen[slot])
        fail(number, f.column, line, "column", f.text,
             time ? "repeats the arrival time (arrival_s or TIMESTAMP, once)"
                  : "repeats a column already named (isl/ContextTokens, osl/GeneratedTokens)");
      seen[slot] = true;
      columns_.push_back(*c);
    }
    if (!seen[0] || !seen[1])
      fail(number, 1, line, "column", "",
           std::string("must name the prompt and answer columns: ") + kAcceptedColumns);
    trace_.timed = seen[2];
  }

  int64_t tokens(const Field& f, const std::string& line, int number, const char* name) const {
    int64_t v = 0;
    const char* end = f.text.data() + f.text.size();
    const auto [ptr, ec] = std::from_chars(f.text.data(), end, v);
    if (ec != std::errc() || ptr != end || v < 1 || v > kMaxSeqLen)
      fail(number, f.column, line, name, f.text,
           fmt::format("must be an integer from 1 to {} tokens", kMaxSeqLen));
    return v;
  }

  // Nanoseconds of an arrival (arrival_s, or an Azure TIMESTAMP).
  int64_t arrival_ns(Column c, const Field& f, const std::string& line, int number) const {
    if (c == Column::timestamp) {
      int64_t ns = 0;
      if (!parse_trace_timestamp(f.text, ns))
        fail(number, f.column, line, "TIMESTAMP", f.text,
             "must be a time YYYY-MM-DD HH:MM:SS[.fraction] between the years 1970 and 2200");
      return ns;
    }
    double s = 0;
    const char* end = f.text.data() + f.text.size();
    const auto [ptr, ec] = std::from_chars(f.text.data(), end, s);
    constexpr double kMaxSeconds = 1e9;  // about 31 years
    if (ec != std::errc() || ptr != end || !std::isfinite(s) || s < 0 || s > kMaxSeconds)
      fail(number, f.column, line, "arrival_s", f.text,
           "must be a number of seconds from 0 to 1000000000");
    return std::llround(s * 1e9);
  }

  void read_row(const std::string& line, int number) {
    const std::vector<Field> fields = split_fields(line);
    if (fields.size() != columns_.size())
      fail(number, 1, line, "", "",
           fmt::format("has {} field{}; the column line ({}) names {}", fields.size(),
                       fields.size() == 1 ? "" : "s", header_line_, columns_.size()));
    if (static_cast<int64_t>(trace_.requests.size()) >= kMaxRequests)
      fail(number, 1, line, "", "",
           fmt::format("is past the {} requests one replay takes; cut the trace", kMaxRequests));
    TracedRequest r;
    std::optional<int64_t> ns;
    const Field* time_field = nullptr;
    for (size_t i = 0; i < fields.size(); ++i) {
      const Field& f = fields[i];
      switch (columns_[i]) {
        case Column::isl:
          r.isl = tokens(f, line, number, "isl");
          break;
        case Column::osl:
          r.osl = tokens(f, line, number, "osl");
          break;
        case Column::arrival_s:
        case Column::timestamp:
          ns = arrival_ns(columns_[i], f, line, number);
          time_field = &f;
          break;
      }
    }
    if (ns) {
      if (!first_ns_) first_ns_ = *ns;
      if (*ns < last_ns_)
        fail(number, time_field->column, line, "arrival", time_field->text,
             "must not be before the arrival on the line above: requests come in time order");
      last_ns_ = *ns;
      r.arrival_s = static_cast<double>(*ns - *first_ns_) * 1e-9;
    }
    trace_.requests.push_back(r);
  }

  std::string file_;
  std::vector<Column> columns_;
  int header_line_ = 0;
  std::string header_text_;
  std::optional<int64_t> first_ns_;
  int64_t last_ns_ = std::numeric_limits<int64_t>::min();
  RequestTrace trace_;
};

// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// `count` digits of `s` at `at` as a number; false unless they are all digits.
bool digits(const std::string& s, size_t at, size_t count, int64_t& out) {
  if (at + count > s.size()) return false;
  out = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

bool parse_trace_timestamp(const std::string& s, int64_t& nanoseconds) {
  // YYYY-MM-DD HH:MM:SS, then optionally '.' and 1-9 digits.
  int64_t y, mo, d, h, mi, sec;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':')
    return false;
  if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
      !digits(s, 14, 2, mi) || !digits(s, 17, 2, sec))
    return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59)
    return false;
  if (d > kDays[mo - 1] + (mo == 2 && is_leap(y) ? 1 : 0)) return false;
  int64_t fraction_ns = 0;
  if (s.size() > 19) {
    const size_t n = s.size() - 20;
    if (s[19] != '.' || n < 1 || n > 9 || !digits(s, 20, n, fraction_ns)) return false;
    for (size_t i = n; i < 9; ++i) fraction_ns *= 10;
  }
  const int64_t seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  nanoseconds = seconds * 1'000'000'000 + fraction_ns;
  return true;
}

Result<RequestTrace> parse_request_trace(const std::string& text, const std::string& file) {
  return capture_input_errors([&] { return TraceParser(file).parse(text); });
}

Result<RequestTrace> read_request_trace(const std::string& path) {
  return capture_input_errors([&] { return TraceParser(path).parse(read_text_file(path)); });
}

}  // namespace meshplan::serving
