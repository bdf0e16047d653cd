#include "simulator/trace_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

namespace meshplan::sim {
namespace {

using Json = nlohmann::ordered_json;

// Every event carries `cat` (DevTools-based parsers, e.g. Chrome's own trace importer, index
// events by it and fail without it): "__metadata" as Chrome writes for M events; for operations
// "compute,<kind>" or "comm,<kind>", so a viewer can filter by either.
Json metadata(const char* what, int pid, int tid, const std::string& name) {
  return Json{{"name", what}, {"cat", "__metadata"}, {"ph", "M"},
              {"pid", pid},   {"tid", tid},          {"args", {{"name", name}}}};
}

std::string category_of(OpKind kind) {
  switch (kind) {
    case OpKind::p2p:
    case OpKind::dp_comm:
    case OpKind::zero_gather:
      return std::string("comm,") + to_string(kind);
    case OpKind::other:
      return to_string(kind);
    default:
      return std::string("compute,") + to_string(kind);
  }
}

// The pieces of an operation's event, appended as nlohmann::json's compact dump writes them
// (key order as listed, numbers by its own to_chars, strings with its escapes): written by hand
// because building a json object per event cost 3 µs an operation. A test pins the bytes equal
// to a re-dump of the parsed document.
void append_string(std::string& out, std::string_view text) {
  out += '"';
  const bool plain = std::none_of(text.begin(), text.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
  if (plain) {  // the usual case: names and kinds need no escapes
    out += text;
    out += '"';
    return;
  }
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  out += '"';
}

void append_int(std::string& out, int64_t x) {
  std::array<char, 24> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), x);
  out.append(buffer.data(), result.ptr);
}

void append_number(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  std::array<char, 64> buffer{};
  const char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), x);
  out.append(buffer.data(), static_cast<size_t>(end - buffer.data()));
}

// A time in whole nanoseconds, written in microseconds as nlohmann::json's dump writes the
// double it parses back to: the integer part, a point, the fraction without trailing zeros (at
// least one digit). Below 10^15 ns a number has at most 15 significant digits, which a double
// parses back to unchanged; beyond (31 years), nlohmann's own to_chars of the double.
// Integer formatting: the shortest-digits search for a double cost a fifth of `simulate --trace`.
constexpr int64_t kNanosecondsPerMicrosecond = 1000;
constexpr int64_t kExactNanoseconds = 1'000'000'000'000'000;

void append_microseconds(std::string& out, int64_t ns) {
  if (ns < 0 || ns >= kExactNanoseconds) {
    append_number(out, static_cast<double>(ns) / kNanosecondsPerMicrosecond);
    return;
  }
  append_int(out, ns / kNanosecondsPerMicrosecond);
  int64_t fraction = ns % kNanosecondsPerMicrosecond;
  std::array<char, 4> digits{'.', '0', '0', '0'};
  size_t length = 2;  // ".0" for a whole microsecond
  for (size_t at = 3; fraction > 0; --at, fraction /= 10) {
    digits[at] = static_cast<char>('0' + fraction % 10);
    if (length == 2 && digits[at] != '0') length = at + 1;
  }
  out.append(digits.data(), length);
}

// A simulated time in whole nanoseconds (a trace viewer's own resolution: Perfetto reads JSON
// microseconds into integer nanoseconds).
int64_t nanoseconds(double seconds) { return std::llround(seconds * 1e9); }

// Every kind's category, built once.
const std::string& category(OpKind kind) {
  static const auto kCategories = [] {
    std::array<std::string, kOpKindCount> all;
    for (size_t k = 0; k < all.size(); ++k) all[k] = category_of(static_cast<OpKind>(k));
    return all;
  }();
  return kCategories[static_cast<size_t>(kind)];
}

void append_op_event(std::string& out, const OperationGraph& g, const Timeline& t, OpId id) {
  const Operation& op = g.op(id);
  const int64_t ts = nanoseconds(t.start_s[id]);
  // dur from the rounded end, so that ts + dur of one event meets ts of the next on a stream.
  const int64_t dur = std::max<int64_t>(0, nanoseconds(t.end_s[id]) - ts);
  out += "{\"name\":";
  append_string(out, display_name(op));
  out += ",\"cat\":";
  append_string(out, category(op.tags.kind));
  out += ",\"ph\":\"X\",\"ts\":";
  append_microseconds(out, ts);
  out += ",\"dur\":";
  append_microseconds(out, dur);
  out += ",\"pid\":";
  append_int(out, g.stream(op.stream).stage);
  out += ",\"tid\":";
  append_int(out, op.stream);
  out += ",\"args\":{\"kind\":";
  append_string(out, to_string(op.tags.kind));
  out += ",\"op\":";
  append_int(out, id);
  if (op.tags.chunk >= 0) {
    out += ",\"chunk\":";
    append_int(out, op.tags.chunk);
  }
  if (op.tags.micro_batch >= 0) {
    out += ",\"micro_batch\":";
    append_int(out, op.tags.micro_batch);
  }
  out += "}}";
}

}  // namespace

void write_chrome_trace(std::ostream& out, const OperationGraph& graph, const Timeline& timeline) {
  std::set<int> stages;
  std::vector<bool> used(graph.stream_count(), false);
  for (const Operation& op : graph.ops()) used[op.stream] = true;
  for (StreamId s = 0; s < graph.stream_count(); ++s)
    if (used[s]) stages.insert(graph.stream(s).stage);
  // One event at a time, each as nlohmann::json dumps it inside the array (compact: no spaces).
  // Events go out in blocks of about 64 KiB: memory stays flat whatever the step's size.
  constexpr size_t kBlockBytes = 64 * 1024;
  std::string block = "{\"traceEvents\":[";
  bool first = true;
  auto next = [&] {
    if (block.size() >= kBlockBytes) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
      block.clear();
    }
    if (!first) block += ',';
    first = false;
  };
  for (int stage : stages) {
    next();
    block += metadata("process_name", stage, 0, "stage " + std::to_string(stage)).dump();
  }
  for (StreamId s = 0; s < graph.stream_count(); ++s) {
    if (!used[s]) continue;
    next();
    block += metadata("thread_name", graph.stream(s).stage, s, graph.stream(s).name).dump();
  }
  for (OpId id = 0; id < graph.op_count(); ++id) {
    next();
    append_op_event(block, graph, timeline, id);
  }
  block += "]}";
  out.write(block.data(), static_cast<std::streamsize>(block.size()));
}

std::string chrome_trace_json(const OperationGraph& graph, const Timeline& timeline) {
  std::ostringstream out;
  write_chrome_trace(out, graph, timeline);
  return std::move(out).str();
}

}  // namespace meshplan::sim
