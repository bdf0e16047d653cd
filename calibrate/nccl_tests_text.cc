// Text logs of nccl-tests (variants listed in nccl_tests_import.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "calibrate/nccl_tests_import.h"

namespace meshplan::calibrate {
namespace {

// Bounds on what a log may hold, so a corrupt file fails with a message: lines beyond
// kMaxLineChars (nccl-tests prints < 200; the header regexes are not run on more), thread and
// GPU counts (nThread, nGpus) and NCCL_VERSION_CODE (2.23.4 is 22304).
constexpr size_t kMaxLineChars = 4096;
constexpr int64_t kMaxHeaderCount = 1'000'000;
constexpr int64_t kMaxVersionCode = 999'999;

struct TextState {
  NcclTestsLog log;
  std::set<std::string> hosts;
  int64_t highest_rank = -1;  // the largest index a "# Rank N" line names
  bool header_seen = false;   // "# nThread …"
  bool footer_seen = false;   // "# Avg bus bandwidth …"
  int last_row_line = 0;
  int last_line = 0;  // the file's last non-blank line
};

bool known_field_count(size_t n) { return n == 11 || n == 12 || n == 13 || n == 20 || n == 21; }

Diagnostic error_at(const std::string& file, int line, const std::string& text,
                    const std::string& rule) {
  return Diagnostic{{file, line, 1, text}, "", "", rule};
}

// Length of the run of digits at s[at...].
size_t digits_at(const std::string& s, size_t at) {
  size_t i = at;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i - at;
}

// Removes launcher prefixes: OpenMPI --tag-output "[1,0]<stdout>:" and srun --label "0: ".
// Scanned by hand: std::regex recurses once per character and overflows the stack on long lines.
std::string strip_prefix(const std::string& line) {
  if (line.rfind('[', 0) == 0) {
    size_t i = 1 + digits_at(line, 1);
    if (i > 1 && i < line.size() && line[i] == ',') {
      size_t j = i + 1 + digits_at(line, i + 1);
      for (const char* tag : {"]<stdout>:", "]<stderr>:"})
        if (j > i + 1 && line.compare(j, std::strlen(tag), tag) == 0)
          return line.substr(j + std::strlen(tag));
    }
  }
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return line;
  size_t j = i + digits_at(line, i);
  if (j > i && line.compare(j, 2, ": ") == 0) return line.substr(j + 2);
  return line;
}

std::vector<std::string> tokens(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool parse_int(const std::string& s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_num(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
}

// Reads a header count `text` in [1, max]; false when it is not one.
bool parse_count(const std::string& text, int64_t max, int64_t& v) {
  return parse_int(text, v) && v >= 1 && v <= max;
}

Result<bool> read_header_line(const std::string& line, int number, TextState& st) {
  static const std::regex rank(
      R"(Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s*(.*)$)");
  static const std::regex nthread(R"(nThread\s+(\d+)\s+nGpus\s+(\d+))");
  static const std::regex start(R"(Collective test starting:\s*(\S+))");
  static const std::regex version(R"(nccl-library=(\d+))");
  std::smatch m;
  if (std::regex_search(line, m, rank)) {
    ++st.log.ranks;
    int64_t index = 0;
    if (parse_int(m[1].str(), index) && index < kMaxHeaderCount)
      st.highest_rank = std::max(st.highest_rank, index);
    st.hosts.insert(m[2].str());
    if (st.log.gpu.empty()) st.log.gpu = m[3].str();
  } else if (std::regex_search(line, m, nthread)) {
    st.header_seen = true;
    if (!parse_count(m[1].str(), kMaxHeaderCount, st.log.threads) ||
        !parse_count(m[2].str(), kMaxHeaderCount, st.log.gpus_per_thread))
      return error_at(
          st.log.file, number, line,
          fmt::format("nThread and nGpus must be integers between 1 and {}", kMaxHeaderCount));
  } else if (std::regex_search(line, m, start)) {
    st.log.program = m[1].str();
  } else if (line.find("Out of bounds values") != std::string::npos) {
    st.log.validation_failed = line.find("FAILED") != std::string::npos;
  } else if (line.find("Avg bus bandwidth") != std::string::npos) {
    st.footer_seen = true;
  } else if (std::regex_search(line, m, version) && st.log.nccl_version.empty()) {
    int64_t code = 0;  // NCCL_VERSION_CODE: major·10000 + minor·100 + patch
    if (!parse_count(m[1].str(), kMaxVersionCode, code))
      return error_at(
          st.log.file, number, line,
          fmt::format("nccl-library must be a version code between 1 and {}", kMaxVersionCode));
    st.log.nccl_version = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  }
  return true;
}

// One half of a row (out-of-place or in-place): time algbw busbw #wrong [i_min i_max i_p99 i_cv].
bool read_half(const std::vector<std::string>& t, size_t at, bool optional, NcclTestsHalf& h) {
  double time = 0, alg = 0, bus = 0;
  bool ok = parse_num(t[at], time) && parse_num(t[at + 1], alg) && parse_num(t[at + 2], bus);
  if (!ok) {
    if (!optional) return false;
    time = alg = bus = std::numeric_limits<double>::quiet_NaN();
  }
  h = NcclTestsHalf{time, alg, bus, t[at + 3]};
  return true;
}

Result<bool> read_row(const std::string& line, int number, TextState& st) {
  const std::string& file = st.log.file;
  auto t = tokens(line);
  size_t n = t.size();
  bool with_root = n == 13 || n == 21;
  bool with_redop = n != 11;
  if (!known_field_count(n)) {
    if (number == st.last_line && !st.log.rows.empty()) {  // a paste cut mid-row
      st.log.notes.push_back(
          fmt::format("{}:{}: last row has {} fields: cut mid-row, dropped", file, number, n));
      return true;
    }
    return error_at(file, number, line,
                    fmt::format("data row has {} fields; nccl-tests rows have 11, 12 or 13 (20 "
                                "or 21 with -I 1): truncated or not an nccl-tests log",
                                n));
  }
  NcclTestsRow row;
  row.line = number;
  size_t prefix = with_root ? 5 : with_redop ? 4 : 3, half = (n - prefix) / 2;
  bool ok = parse_int(t[0], row.bytes) && parse_int(t[1], row.count) &&
            (!with_root || parse_int(t[4], row.root));
  row.type = t[2];
  if (with_redop) row.redop = t[3];
  ok = ok && read_half(t, prefix, false, row.out_of_place) &&
       read_half(t, prefix + half, true, row.in_place);
  if (!ok) return error_at(file, number, line, "data row has a field that is not a number");
  if (st.log.rows.empty()) {
    st.log.wrong_is_count = with_root;
    st.log.has_redop = with_redop;
  }
  st.log.rows.push_back(row);
  st.last_row_line = number;
  return true;
}

bool is_noise(const std::string& line, TextState& st) {
  static const std::regex nccl_version(R"(NCCL version (\d+\.\d+\.\d+))");
  std::smatch m;
  if (std::regex_search(line, m, nccl_version)) {
    st.log.nccl_version = m[1].str();
    return true;
  }
  return line.find(" NCCL INFO ") != std::string::npos ||
         line.find(" NCCL WARN ") != std::string::npos;
}

Result<bool> read_line(const std::string& raw, int number, TextState& st) {
  std::string line = strip_prefix(raw);
  if (line.size() > kMaxLineChars) {
    if (line.find(" NCCL INFO ") != std::string::npos ||
        line.find(" NCCL WARN ") != std::string::npos)
      return true;  // NCCL's own logging (ring and tree lists) may be long
    return error_at(st.log.file, number, "",
                    fmt::format("line of {} characters; nccl-tests lines are at most {}: not an "
                                "nccl-tests log",
                                line.size(), kMaxLineChars));
  }
  if (is_noise(line, st)) return true;
  size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return true;
  if (line[first] == '#') {
    if (line.find("nThread") != std::string::npos && !st.log.rows.empty())
      return error_at(st.log.file, number, raw,
                      "a second nccl-tests run starts here; import one run per file");
    return read_header_line(line, number, st);
  }
  if (!std::isdigit(static_cast<unsigned char>(line[first]))) return true;  // other output
  return read_row(line, number, st);
}

}  // namespace

Result<NcclTestsLog> parse_nccl_tests_text(const std::string& text, const std::string& file) {
  TextState st;
  st.log.file = file;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    lines.push_back(raw);
    if (raw.find_first_not_of(" \t\r") != std::string::npos)
      st.last_line = static_cast<int>(lines.size());
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    auto r = read_line(lines[i], static_cast<int>(i) + 1, st);
    if (!r) return r.errors();
  }
  if (st.log.rows.empty())
    return error_at(file, std::max<int>(static_cast<int>(lines.size()), 1), "",
                    st.header_seen ? "nccl-tests log has no data rows (truncated?)"
                                   : "not an nccl-tests log: no '# nThread … nGpus …' header "
                                     "line and no data rows");
  if (!st.header_seen)
    st.log.notes.insert(st.log.notes.begin(),
                        fmt::format("{}:{}: no '# nThread … nGpus …' header (a pasted table?): "
                                    "ranks and collective come from the command line",
                                    file, st.log.rows.front().line));
  if (!st.footer_seen)
    st.log.notes.push_back(fmt::format(
        "{}:{}: no '# Avg bus bandwidth' footer: log cut after this row; rows up to here used",
        file, st.last_row_line));
  st.log.nodes = static_cast<int64_t>(st.hosts.size());
  // A paste that kept only the last rank lines (coreweave/nccl-tests#43 kept "Rank 71" alone)
  // still says how many ranks ran; its hosts are then only some of the nodes.
  if (st.highest_rank + 1 > st.log.ranks) {
    st.log.notes.push_back(fmt::format(
        "{}: the rank lines name rank {} but list {}: taking {} ranks; the {} listed host(s) are "
        "only some of the nodes (pass --nodes)",
        file, st.highest_rank, st.log.ranks, st.highest_rank + 1, st.hosts.size()));
    st.log.ranks = st.highest_rank + 1;
    st.log.nodes = 0;
  }
  st.log.collective = collective_from_name(st.log.program);
  return st.log;
}

}  // namespace meshplan::calibrate
