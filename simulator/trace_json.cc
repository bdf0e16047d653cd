#include "simulator/trace_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

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

// A simulated time in whole nanoseconds (a trace viewer's own resolution: Perfetto reads JSON
// microseconds into integer nanoseconds).
int64_t nanoseconds(double seconds) { return std::llround(seconds * 1e9); }

// The trace's bytes on their way to the stream, in blocks of about kBlockBytes: memory stays flat
// whatever the step's size. An event's pieces are written in place, as nlohmann::json's compact
// dump writes them (key order as listed, numbers by its own to_chars, strings with its escapes):
// by hand because building a json object per event cost 3 µs an operation, and into a buffer
// made room for once per event because a std::string's append per piece was most of what was
// left (`simulate --trace`). A test pins the bytes equal to a re-dump of the parsed document.
class TraceBlocks {
 public:
  explicit TraceBlocks(std::ostream& out) : out_(out), buffer_(2 * kBlockBytes) {}
  // Room for `bytes` more, the block written out first where it reached kBlockBytes; the puts
  // that follow write at most that much in all.
  void reserve(size_t bytes) {
    if (used_ >= kBlockBytes) flush();
    if (used_ + bytes > buffer_.size()) buffer_.resize(used_ + bytes);
  }
  void put(char c) { buffer_[used_++] = c; }
  void put(std::string_view text) {
    if (text.empty()) return;  // an empty view's data may be null, which memcpy may not take
    std::memcpy(buffer_.data() + used_, text.data(), text.size());
    used_ += text.size();
  }
  // At most kMaxInt bytes.
  void put_int(int64_t x) {
    char* at = buffer_.data() + used_;
    used_ = static_cast<size_t>(std::to_chars(at, at + kMaxInt, x).ptr - buffer_.data());
  }
  // At most 2 + 6 · text.size() bytes.
  void put_string(std::string_view text);
  // At most kMaxNumber bytes: a time in whole nanoseconds, in microseconds.
  void put_microseconds(int64_t ns);
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(used_));
    used_ = 0;
  }

  static constexpr size_t kMaxInt = 20;     // −9223372036854775808
  static constexpr size_t kMaxNumber = 64;  // nlohmann's to_chars of a double, with room

 private:
  static constexpr size_t kBlockBytes = 64 * 1024;
  void put_number(double x);
  std::ostream& out_;
  std::vector<char> buffer_;
  size_t used_ = 0;
};

void TraceBlocks::put_string(std::string_view text) {
  put('"');
  const bool plain = std::none_of(text.begin(), text.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
  if (plain) {  // the usual case: names and kinds need no escapes
    put(text);
    put('"');
    return;
  }
  for (const char c : text) {
    switch (c) {
      case '"':
        put("\\\"");
        break;
      case '\\':
        put("\\\\");
        break;
      case '\b':
        put("\\b");
        break;
      case '\f':
        put("\\f");
        break;
      case '\n':
        put("\\n");
        break;
      case '\r':
        put("\\r");
        break;
      case '\t':
        put("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          put(fmt::format("\\u{:04x}", static_cast<unsigned char>(c)));
        else
          put(c);
    }
  }
  put('"');
}

void TraceBlocks::put_number(double x) {
  if (!std::isfinite(x)) {
    put("null");
    return;
  }
  std::array<char, kMaxNumber> digits{};
  const char* end = nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), x);
  put(std::string_view(digits.data(), static_cast<size_t>(end - digits.data())));
}

// A time in whole nanoseconds, written in microseconds as nlohmann::json's dump writes the
// double it parses back to: the integer part, a point, the fraction without trailing zeros (at
// least one digit). Below 10^15 ns a number has at most 15 significant digits, which a double
// parses back to unchanged; beyond (31 years), nlohmann's own to_chars of the double.
// Integer formatting: the shortest-digits search for a double cost a fifth of `simulate --trace`.
constexpr int64_t kNanosecondsPerMicrosecond = 1000;
constexpr int64_t kExactNanoseconds = 1'000'000'000'000'000;

void TraceBlocks::put_microseconds(int64_t ns) {
  if (ns < 0 || ns >= kExactNanoseconds) {
    put_number(static_cast<double>(ns) / kNanosecondsPerMicrosecond);
    return;
  }
  put_int(ns / kNanosecondsPerMicrosecond);
  const auto fraction = static_cast<int>(ns % kNanosecondsPerMicrosecond);  // three digits
  const std::array<char, 4> digits{'.', static_cast<char>('0' + fraction / 100),
                                   static_cast<char>('0' + fraction / 10 % 10),
                                   static_cast<char>('0' + fraction % 10)};
  // ".0" for a whole microsecond, else up to the last digit that is not zero.
  const size_t length = fraction % 100 == 0 ? 2 : fraction % 10 == 0 ? 3 : 4;
  put(std::string_view(digits.data(), length));
}

// `text` as a JSON string: quoted, escaped (TraceBlocks::put_string).
std::string json_string(std::string_view text) {
  std::ostringstream out;
  TraceBlocks blocks(out);
  blocks.reserve(2 + 6 * text.size());
  blocks.put_string(text);
  blocks.flush();
  return std::move(out).str();
}

// Every kind's category and name as JSON strings, built once.
struct KindStrings {
  std::string category, kind;
};
const KindStrings& kind_strings(OpKind kind) {
  static const auto kAll = [] {
    std::array<KindStrings, kOpKindCount> all;
    for (size_t k = 0; k < all.size(); ++k) {
      const auto each = static_cast<OpKind>(k);
      all[k] = {json_string(category_of(each)), json_string(to_string(each))};
    }
    return all;
  }();
  return kAll[static_cast<size_t>(kind)];
}

// An operation's X event, after `separator` (empty or a comma).
void put_op_event(TraceBlocks& out, std::string_view separator, const OperationGraph& g,
                  const Timeline& t, OpId id) {
  const Operation& op = g.op(id);
  const int64_t ts = nanoseconds(t.start_s[id]);
  // dur from the rounded end, so that ts + dur of one event meets ts of the next on a stream.
  const int64_t dur = std::max<int64_t>(0, nanoseconds(t.end_s[id]) - ts);
  const std::string name = display_name(op);
  const KindStrings& strings = kind_strings(op.tags.kind);
  // The keys and punctuation below, under 160 bytes; three strings, two times, five integers.
  constexpr size_t kFixedBytes = 160;
  out.reserve(separator.size() + kFixedBytes + 2 + 6 * name.size() + strings.category.size() +
              strings.kind.size() + 2 * TraceBlocks::kMaxNumber + 5 * TraceBlocks::kMaxInt);
  out.put(separator);
  out.put("{\"name\":");
  out.put_string(name);
  out.put(",\"cat\":");
  out.put(strings.category);
  out.put(",\"ph\":\"X\",\"ts\":");
  out.put_microseconds(ts);
  out.put(",\"dur\":");
  out.put_microseconds(dur);
  out.put(",\"pid\":");
  out.put_int(g.stream(op.stream).stage);
  out.put(",\"tid\":");
  out.put_int(op.stream);
  out.put(",\"args\":{\"kind\":");
  out.put(strings.kind);
  out.put(",\"op\":");
  out.put_int(id);
  if (op.tags.chunk >= 0) {
    out.put(",\"chunk\":");
    out.put_int(op.tags.chunk);
  }
  if (op.tags.micro_batch >= 0) {
    out.put(",\"micro_batch\":");
    out.put_int(op.tags.micro_batch);
  }
  out.put("}}");
}

// Text of any length, after `separator`.
void put_text(TraceBlocks& out, std::string_view separator, std::string_view text) {
  out.reserve(separator.size() + text.size());
  out.put(separator);
  out.put(text);
}

}  // namespace

void write_chrome_trace(std::ostream& out, const OperationGraph& graph, const Timeline& timeline) {
  std::set<int> stages;
  std::vector<bool> used(graph.stream_count(), false);
  for (const Operation& op : graph.ops()) used[op.stream] = true;
  for (StreamId s = 0; s < graph.stream_count(); ++s)
    if (used[s]) stages.insert(graph.stream(s).stage);
  // One event at a time, each as nlohmann::json dumps it inside the array (compact: no spaces).
  TraceBlocks blocks(out);
  put_text(blocks, "", "{\"traceEvents\":[");
  std::string_view separator;  // before each event but the first
  for (int stage : stages) {
    put_text(blocks, separator,
             metadata("process_name", stage, 0, "stage " + std::to_string(stage)).dump());
    separator = ",";
  }
  for (StreamId s = 0; s < graph.stream_count(); ++s) {
    if (!used[s]) continue;
    put_text(blocks, separator,
             metadata("thread_name", graph.stream(s).stage, s, graph.stream(s).name).dump());
    separator = ",";
  }
  for (OpId id = 0; id < graph.op_count(); ++id) {
    put_op_event(blocks, separator, graph, timeline, id);
    separator = ",";
  }
  put_text(blocks, "", "]}");
  blocks.flush();
}

std::string chrome_trace_json(const OperationGraph& graph, const Timeline& timeline) {
  std::ostringstream out;
  write_chrome_trace(out, graph, timeline);
  return std::move(out).str();
}

}  // namespace meshplan::sim
