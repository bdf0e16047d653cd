// A request trace: the prompt and answer lengths of real requests, and when each arrived, read
// for `meshplan serve --requests-file` from CSV or, when the first non-blank character is '{',
// from JSON Lines.
//
// CSV: the first non-blank line names the columns, comma-separated, in any order:
//   prompt tokens   `isl`, or `ContextTokens` (the Azure LLM inference traces, Patel et al.,
//                   "Splitwise", ISCA 2024: github.com/Azure/AzurePublicDataset)
//   answer tokens   `osl`, or `GeneratedTokens` (Azure)
//   arrival time    optional: `arrival_s` (seconds), or `TIMESTAMP` (Azure:
//                   "2023-11-16 18:15:46.6805900": invocation times, up to 9 fractional digits;
//                   only their differences count)
// Every later non-blank line is one request: integers of 1 to 100,000,000 tokens, arrival
// times not before the line above's. Arrivals count from the first request's (which arrives
// at 0). A header naming an unknown or repeated column, a row with another field count, a value
// out of range or malformed, no rows, or more than kMaxRequests rows: a diagnostic naming the
// file, line, column, field, value and rule.
// JSON Lines, the Mooncake trace form (kvcache-ai/Mooncake FAST25-release; AIPerf's
// mooncake_trace): one object per line with input_length and output_length (tokens), and
// optionally timestamp (milliseconds, on every line or none) and hash_ids (the prompt's KV block
// hashes: read and checked to be a list, not priced: prefix reuse between traced requests is not
// modelled). Any other key, a key given twice, malformed JSON: one diagnostic as above.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace meshplan::serving {

struct TracedRequest {
  double arrival_s = 0;  // from the first request's arrival; 0 when the trace has no times
  int64_t isl = 0, osl = 0;
};

struct RequestTrace {
  std::vector<TracedRequest> requests;  // in file order
  bool timed = false;                   // the file gives arrival times
};

Result<RequestTrace> parse_request_trace(const std::string& text, const std::string& file);
// Reads and parses `path` (missing, unreadable or a directory: one diagnostic).
Result<RequestTrace> read_request_trace(const std::string& path);

// Nanoseconds since 1970-01-01 of an Azure TIMESTAMP ("YYYY-MM-DD HH:MM:SS[.fraction]", years
// 1970-2200); false when `text` is not one (a field out of its range included).
bool parse_trace_timestamp(const std::string& text, int64_t& nanoseconds);

}  // namespace meshplan::serving
