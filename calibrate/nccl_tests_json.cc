// JSON written by nccl-tests `-J file`. Schema read (keys we use; others ignored):
//   {"collective": "all_reduce_perf",        // or "test" / "program"
//    "nccl_version": "2.23.4",                // optional
//    "devices": [{"rank": 0, "host": "h0", "device": 0, "name": "NVIDIA H100 80GB HBM3"}],
//    "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
//                 "out_of_place": {"time": 27.1, "algbw": 0.0, "busbw": 0.0, "wrong": 0},
//                 "in_place": {…}}]}
// Errors point at the offending key (core/json_location.h).
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "calibrate/nccl_tests_import.h"
#include "core/json_input.h"
#include "core/json_location.h"

namespace meshplan::calibrate {
namespace {

using nlohmann::json;

struct JsonError {
  std::string key, rule;
};

NcclTestsHalf read_half(const json& h) {
  if (!h.is_object()) throw JsonError{"out_of_place", "must be an object"};
  NcclTestsHalf out;
  out.time_us = h.at("time").get<double>();
  out.algbw_GBps = h.at("algbw").get<double>();
  out.busbw_GBps = h.at("busbw").get<double>();
  const json& w = h.value("wrong", json("N/A"));
  out.wrong = w.is_string() ? w.get<std::string>() : w.dump();
  return out;
}

// `key` of `r` (or `fallback` when absent) as an integer: a fraction or a number beyond int64_t
// is an error, not a truncating cast.
int64_t integer_at(const json& r, const char* key, int64_t fallback) {
  if (!r.contains(key)) return fallback;
  const json& v = r.at(key);
  const bool fits =
      v.is_number_integer() &&
      !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
  if (!fits) throw JsonError{key, "must be an integer"};
  return v.get<int64_t>();
}

NcclTestsRow read_row(const json& r) {
  NcclTestsRow row;
  if (!r.is_object() || !r.contains("size")) throw JsonError{"results", "each result needs a size"};
  row.bytes = integer_at(r, "size", 0);
  row.count = integer_at(r, "count", 0);
  row.type = r.value("type", std::string());
  row.redop = r.value("redop", std::string());
  row.root = integer_at(r, "root", -1);
  row.out_of_place = read_half(r.at("out_of_place"));
  if (r.contains("in_place")) row.in_place = read_half(r.at("in_place"));
  return row;
}

void read_devices(const json& devices, NcclTestsLog& log) {
  std::set<std::string> hosts;
  for (const auto& d : devices) {
    ++log.ranks;
    hosts.insert(d.value("host", std::string()));
    if (log.gpu.empty()) log.gpu = d.value("name", std::string());
  }
  log.nodes = static_cast<int64_t>(hosts.size());
}

NcclTestsLog read_log(const json& j, const std::string& file) {
  if (!j.is_object()) throw JsonError{"", "nccl-tests JSON must be an object"};
  NcclTestsLog log;
  log.file = file;
  for (const char* key : {"collective", "test", "program"})
    if (j.contains(key) && j[key].is_string()) log.program = j[key].get<std::string>();
  log.collective = collective_from_name(log.program);
  log.nccl_version = j.value("nccl_version", std::string());
  if (j.contains("devices")) read_devices(j.at("devices"), log);
  if (!j.contains("results") || !j["results"].is_array())
    throw JsonError{"results", "nccl-tests JSON needs a 'results' list"};
  for (const auto& r : j["results"]) log.rows.push_back(read_row(r));
  if (log.rows.empty()) throw JsonError{"results", "nccl-tests JSON has no results"};
  return log;
}

}  // namespace

Result<NcclTestsLog> parse_nccl_tests_json(const std::string& text, const std::string& file) {
  json j;
  try {
    j = parse_json_input(text, file);
  } catch (const InputError& e) {
    return e.diagnostics;
  }
  try {
    return read_log(j, file);
  } catch (const JsonError& e) {
    return Diagnostic{location_of_json_key(file, text, e.key), e.key, "", e.rule};
  } catch (const json::exception& e) {
    return Diagnostic{location_of_json_key(file, text, "results"), "results", "",
                      fmt::format("unexpected nccl-tests JSON: {}", e.what())};
  }
}

}  // namespace meshplan::calibrate
