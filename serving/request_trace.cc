#include "serving/request_trace.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/json_input.h"
#include "core/json_location.h"
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

// Calls `visit(line, number)` for every non-blank line of `text`, numbered from 1, a trailing CR
// dropped.
template <class Visit>
void for_each_line(const std::string& text, Visit&& visit) {
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!blank(line)) visit(line, number);
  }
}

// The rules both forms state: a request's token counts, and how many requests a trace may hold.
std::string tokens_rule() {
  return fmt::format("must be an integer from 1 to {} tokens", kMaxSeqLen);
}
bool full(const RequestTrace& t) { return static_cast<int64_t>(t.requests.size()) >= kMaxRequests; }
std::string full_rule() {
  return fmt::format("is past the {} requests one replay takes; cut the trace", kMaxRequests);
}

class TraceParser {
 public:
  TraceParser(const std::string& file) : file_(file) {}

  RequestTrace parse(const std::string& text) {
    for_each_line(text, [&](const std::string& line, int number) {
      if (columns_.empty())
        read_header(line, number);
      else
        read_row(line, number);
    });
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
      fail(number, f.column, line, name, f.text, tokens_rule());
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
    if (full(trace_)) fail(number, 1, line, "", "", full_rule());
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

// A Mooncake-style JSON Lines trace (the header's second form).
class JsonLinesParser {
 public:
  explicit JsonLinesParser(const std::string& file) : file_(file) {}

  RequestTrace parse(const std::string& text) {
    for_each_line(text, [&](const std::string& line, int number) {
      if (full(trace_)) fail_line(number, line, "", "", full_rule());
      read_row(parsed(line, number), line, number);
    });
    if (trace_.requests.empty())
      throw InputError{{Diagnostic{{file_, 0, 0, ""}, "", "", "has no requests"}}};
    return trace_;
  }

 private:
  [[noreturn]] void fail_line(int number, const std::string& line, const std::string& field,
                              const std::string& value, const std::string& rule) const {
    throw InputError{{Diagnostic{{file_, number, 1, line}, field, value, rule}}};
  }
  [[noreturn]] void fail_key(int number, const std::string& line, const std::string& key,
                             const std::string& value, const std::string& rule) const {
    SourceLocation at = location_of_json_key(file_, line, key);
    at.line = number;
    at.source_line = line;
    if (at.column == 0) at.column = 1;
    throw InputError{{Diagnostic{at, key, value, rule}}};
  }

  // The line as JSON, its errors placed on the file's line.
  nlohmann::json parsed(const std::string& line, int number) const {
    nlohmann::json j;
    try {
      j = parse_json_input(line, file_);
    } catch (InputError& e) {
      // The line was parsed alone: its positions, also those a rule names, are on line 1.
      const std::string alone = file_ + ":1:", here = fmt::format("{}:{}:", file_, number);
      for (Diagnostic& d : e.diagnostics) {
        d.where.line = number;
        d.where.source_line = line;
        for (size_t at = d.rule.find(alone); at != std::string::npos;
             at = d.rule.find(alone, at + here.size()))
          d.rule.replace(at, alone.size(), here);
      }
      throw;
    }
    if (!j.is_object())
      fail_line(number, line, "", "", "must be one JSON object per line (a request)");
    return j;
  }

  int64_t tokens(const nlohmann::json& j, const char* key, const std::string& line,
                 int number) const {
    if (!j.contains(key)) fail_line(number, line, key, "", "is required but missing");
    const nlohmann::json& v = j.at(key);
    const bool in_range =
        v.is_number_integer() &&
        !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(kMaxSeqLen)) &&
        v.get<int64_t>() >= 1 && v.get<int64_t>() <= kMaxSeqLen;
    if (!in_range) fail_key(number, line, key, json_value_text(v), tokens_rule());
    return v.get<int64_t>();
  }

  void read_row(const nlohmann::json& j, const std::string& line, int number) {
    for (const auto& [key, value] : j.items())
      if (key != "timestamp" && key != "input_length" && key != "output_length" &&
          key != "hash_ids")
        fail_key(number, line, key, json_value_text(value),
                 "is not a trace field; the fields are input_length, output_length and "
                 "optionally timestamp (milliseconds) and hash_ids (read, not priced)");
    if (j.contains("hash_ids") && !j.at("hash_ids").is_array())
      fail_key(number, line, "hash_ids", json_value_text(j.at("hash_ids")),
               "must be a list of block hashes");
    TracedRequest r;
    r.isl = tokens(j, "input_length", line, number);
    r.osl = tokens(j, "output_length", line, number);
    const bool timed = j.contains("timestamp");
    if (trace_.requests.empty()) trace_.timed = timed;
    if (timed != trace_.timed)
      fail_line(number, line, "timestamp", "",
                trace_.timed ? "is missing where the lines above give one: all lines or none"
                             : "is given where the lines above give none: all lines or none");
    if (timed) r.arrival_s = arrival_s(j.at("timestamp"), line, number);
    trace_.requests.push_back(r);
  }

  // Seconds from the first request's timestamp (milliseconds).
  double arrival_s(const nlohmann::json& t, const std::string& line, int number) {
    constexpr double kMaxMilliseconds = 1e12;  // about 31 years
    if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0 ||
        t.get<double>() > kMaxMilliseconds)
      fail_key(number, line, "timestamp", json_value_text(t),
               "must be a number of milliseconds from 0 to 1000000000000");
    const double ms = t.get<double>();
    if (!trace_.requests.empty() && ms < last_ms_)
      fail_key(number, line, "timestamp", json_value_text(t),
               "must not be before the timestamp on the line above: requests come in time "
               "order");
    if (trace_.requests.empty()) first_ms_ = ms;
    last_ms_ = ms;
    return (ms - first_ms_) * 1e-3;
  }

  std::string file_;
  RequestTrace trace_;
  double first_ms_ = 0, last_ms_ = 0;
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
  return capture_input_errors([&] {
    const size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string::npos && text[first] == '{' ? JsonLinesParser(file).parse(text)
                                                            : TraceParser(file).parse(text);
  });
}

Result<RequestTrace> read_request_trace(const std::string& path) {
  Result<std::string> text = capture_input_errors([&] { return read_text_file(path); });
  if (!text) return text.errors();
  return parse_request_trace(text.value(), path);
}

}  // namespace meshplan::serving
