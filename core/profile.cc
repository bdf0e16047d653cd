// Calibration profile YAML: reading, writing, and the nccl-tests bus factors.
//
// Format (keys in human units, the unit in the key; SI inside the structs):
//
//   name: h100-measured               # optional; default: the file name without .yaml
//   provenance:                       # first, so a reader sees where the numbers come from
//     how: measured                   # measured | imported | published
//     gpu: NVIDIA H100 80GB HBM3
//     gpu_count: 8
//     nodes: 1
//     driver: "550.54.15"              # also cuda, cublas, nccl, date, command (all optional)
//     nccl_env: {NCCL_ALGO: Ring}
//     sources: [REFERENCE.md §3]
//   gemm:                             # per dtype (bf16 | fp16 | fp8 | fp32)
//     bf16:
//       max_efficiency: 0.8
//       sustained_tflops: 667.5        # optional: a long back-to-back run's rate (> 0)
//       samples:
//         - {m: 8192, n: 8192, k: 8192, tflops: 750.5, heuristic_tflops: 741, p95_time_us: 1520}
//         - {m: 16, n: 16, k: 16, status: "failed: no algorithm"}
//       # or, when every sample measured (what the writer picks then), the same as a table, one
//       # sample per line under its header, a field not measured left empty:
//       samples_table: |
//         m,n,k,tflops,heuristic_tflops,p95_time_us
//         8192,8192,8192,750.5,741,1520
//       # A measured profile holds thousands of shapes: as a table it is 40% smaller and reads
//       # about 6x faster (h100-measured: 3,440 samples, `meshplan memory --profile` 130 -> 20 ms).
//   hbm_GBps: 3000
//   attention_efficiency: 0.55
//   attention:                        # fused attention kernels (FlashAttention FLOP convention)
//     - {kernel: cudnn, head_dim: 128, seq_len: 4096, causal: true, fwd_tflops: 518,
//        bwd_tflops: 450, source: "..."}   # or fwd_bwd_tflops alone
//   # or the same as a table (what the writer picks where every kernel has no comma and every
//   # text is one line), a field not given left empty, the source running to the row's end:
//   attention_table: |
//     kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,fwd_bwd_tflops,source
//     cudnn,128,4096,true,518,450,,FA3 paper, Figure 5
//   # yaml-cpp reads a block as one scalar, not a node per field: h100-published's 159 samples
//   # as a list were 67 M of the 77 M instructions `meshplan memory` took; as a table 20 M of 29 M.
//   fp8_quantization_overhead: {delayed: 0, current: 0.21}   # by FP8 scaling recipe
//   sustained_compute_ratio: 0.85     # sustained / burst clock of compute-bound kernels
//   gpu_compute_spread: 0.0176        # σ / mean of sustained throughput between GPUs
//   intra_node_bus_efficiency: 0.8
//   inter_node_bus_efficiency: 0.9
//   collectives:
//     - collective: all_reduce
//       level: nvlink
//       group_size: 8
//       source: measured
//       samples:
//         - {bytes: 1048576, time_us: 25.5, busbw_GBps: 71.9}
//       latency_us: 15
//       busbw_GBps: 360
//       half_peak_bytes: 5400000
//   peer_all_reduce: {latency_us: 6.7, peer_read_GBps: 402, max_bytes: 8388608, source: "..."}
//   notes: [cpu backend: no collectives measured]
//
// Units: tflops = 1e12 FLOP/s, GBps = 1e9 bytes/s, us = 1e-6 s. The conversion is done on the
// decimal text (the exponent is shifted), never by multiplying doubles, so a value printed in
// shortest round-trip form reads back bit-identical: parse(render(p)) == p exactly.
// Fields equal to their default (0, empty, status ok) are left out of the rendered text.
#include "core/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/collective.h"
#include "core/yaml_node.h"

namespace meshplan {
namespace {

constexpr int kTera = 12, kGiga = 9, kMicro = -6;  // decimal exponents of the key units
const std::vector<std::string> kDtypes = {"bf16", "fp16", "fp8", "fp32"};
const std::vector<std::string> kHow = {"measured", "imported", "published"};

// ---- Exact decimal scaling ------------------------------------------------------------------

// Digits and exponent of a decimal: value = digits · 10^exp (digits without leading zeros).
struct Decimal {
  bool negative = false;
  std::string digits;
  int exp = 0;
};

Decimal to_decimal(const std::string& text) {
  Decimal d;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) d.negative = text[i++] == '-';
  int frac_digits = 0;
  bool after_point = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      after_point = true;
      continue;
    }
    d.digits += text[i];
    if (after_point) ++frac_digits;
  }
  d.exp = (i < text.size() ? std::atoi(text.c_str() + i + 1) : 0) - frac_digits;
  size_t lead = d.digits.find_first_not_of('0');
  d.digits = lead == std::string::npos ? "" : d.digits.substr(lead);
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exp;
  }
  return d;
}

std::string from_decimal(const Decimal& d) {
  if (d.digits.empty()) return "0";
  std::string sign = d.negative ? "-" : "";
  int n = static_cast<int>(d.digits.size());
  int point = n + d.exp;  // digits before the decimal point
  if (d.exp >= 0 && point <= 17) return sign + d.digits + std::string(d.exp, '0');
  if (d.exp < 0 && point > 0)
    return sign + d.digits.substr(0, point) + "." + d.digits.substr(point);
  if (d.exp < 0 && point > -5) return sign + "0." + std::string(-point, '0') + d.digits;
  std::string mant = n == 1 ? d.digits : d.digits.substr(0, 1) + "." + d.digits.substr(1);
  return fmt::format("{}{}e{}", sign, mant, point - 1);
}

// Text of x · 10^shift, such that parse_scaled(text, -shift) == x bit for bit.
std::string format_scaled(double x, int shift) {
  Decimal d = to_decimal(fmt::format("{}", x));
  d.exp += shift;
  return from_decimal(d);
}

bool is_plain_number(const std::string& s) {
  size_t i = 0, digits = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) ++digits;
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t start = i;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    }
    if (i == start || i - start > 4) return false;
  }
  return i == s.size();
}

// Whether a profile number may be 0. Fields whose consumer reads 0 as "not measured" must be
// left out instead, so a 0 written in the file is an error rather than silently a default.
enum class Zero { allowed, refused };

// Reads a non-negative number written in units of 10^shift; the result is the correctly
// rounded double of the decimal the file holds. Infinite, underflowing (1e-9999) and, with
// Zero::refused, zero values are errors.
// The same on text: `value` receives the number, or the rule it breaks is returned.
std::optional<std::string> scaled_from_text(const std::string& s, int shift, Zero zero,
                                            double& value) {
  const char* rule = zero == Zero::refused
                         ? "must be a number greater than 0 (leave the field out when not measured)"
                         : "must be a non-negative number";
  if (!is_plain_number(s)) return rule;
  // The mantissa as written with its exponent shifted: the same decimal, which strtod rounds
  // correctly (no double is multiplied).
  const size_t e = s.find_first_of("eE");
  const std::string_view mantissa(s.data(), e == std::string::npos ? s.size() : e);
  const bool nonzero = mantissa.find_first_of("123456789") != std::string_view::npos;
  if (mantissa.front() == '-' && nonzero) return rule;
  if (!nonzero) {
    if (zero == Zero::refused) return rule;
    value = 0;
    return std::nullopt;
  }
  const long exponent = (e == std::string::npos ? 0 : std::strtol(s.c_str() + e + 1, nullptr, 10)) +
                        shift;  // at most 4 digits (is_plain_number)
  std::string text(mantissa);
  text += 'e';
  text += std::to_string(exponent);
  value = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(value)) return "must be a finite number";
  if (value == 0) return "is too small to represent (it rounds to 0)";
  return std::nullopt;
}

double parse_scaled(const YamlNode& n, int shift, Zero zero = Zero::allowed) {
  double v = 0;
  if (auto rule = scaled_from_text(n.is_scalar() ? n.raw().Scalar() : "", shift, zero, v))
    n.fail(*rule);
  return v;
}

double get_scaled(const YamlNode& n, const std::string& key, int shift, Zero zero = Zero::allowed) {
  auto c = n.optional_child(key);
  return c ? parse_scaled(*c, shift, zero) : 0.0;
}

// A fraction in (0, 1] whose absence (0 in the struct) means "use the default".
double get_fraction(const YamlNode& n, const std::string& key) {
  auto c = n.optional_child(key);
  if (!c) return 0.0;
  const double v = c->as_double(0.0, 1.0);
  if (v == 0)
    c->fail("must be a number greater than 0 and at most 1 (leave the field out when not known)");
  return v;
}

std::string get_text(const YamlNode& n, const std::string& key, const std::string& fallback) {
  auto c = n.optional_child(key);
  return c ? c->as_string() : fallback;
}

// ---- Rendering ------------------------------------------------------------------------------

// A YAML scalar for `s`: plain when unambiguous, else double-quoted (JSON escapes are YAML).
std::string quote(const std::string& s) {
  bool plain = !s.empty() && !is_plain_number(s) && s != "true" && s != "false" && s != "null" &&
               s != "~" && std::isalpha(static_cast<unsigned char>(s[0]));
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::strchr("-_./+ ()", c) == nullptr)
      plain = false;
  if (!s.empty() && s.back() == ' ') plain = false;
  return plain ? s
               : nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void put(std::string& out, const std::string& indent, const std::string& key,
         const std::string& value) {
  if (!value.empty()) out += fmt::format("{}{}: {}\n", indent, key, quote(value));
}

void render_provenance(std::string& out, const Provenance& p) {
  out += "provenance:\n";
  put(out, "  ", "how", p.how);
  put(out, "  ", "gpu", p.gpu);
  if (p.gpu_count) out += fmt::format("  gpu_count: {}\n", p.gpu_count);
  if (p.nodes) out += fmt::format("  nodes: {}\n", p.nodes);
  put(out, "  ", "driver", p.driver);
  put(out, "  ", "cuda", p.cuda);
  put(out, "  ", "cublas", p.cublas);
  put(out, "  ", "nccl", p.nccl);
  if (!p.nccl_env.empty()) {
    out += "  nccl_env:\n";
    for (const auto& [k, v] : p.nccl_env) out += fmt::format("    {}: {}\n", quote(k), quote(v));
  }
  put(out, "  ", "date", p.date);
  put(out, "  ", "command", p.command);
  if (!p.sources.empty()) {
    out += "  sources:\n";
    for (const auto& s : p.sources) out += fmt::format("    - {}\n", quote(s));
  }
}

// The header line of a GEMM samples_table: its columns, the sample fields in their units.
constexpr const char* kGemmTableHeader = "m,n,k,tflops,heuristic_tflops,p95_time_us";

std::string render_gemm_sample(const GemmSample& s) {
  std::string row = fmt::format("{{m: {}, n: {}, k: {}", s.m, s.n, s.k);
  if (s.flops_per_s) row += ", tflops: " + format_scaled(s.flops_per_s, -kTera);
  if (s.heuristic_flops_per_s)
    row += ", heuristic_tflops: " + format_scaled(s.heuristic_flops_per_s, -kTera);
  if (s.p95_time_s) row += ", p95_time_us: " + format_scaled(s.p95_time_s, -kMicro);
  if (s.status != "ok") row += ", status: " + quote(s.status);
  return row + "}";
}

// One row of a samples_table: m,n,k,tflops,heuristic_tflops,p95_time_us, the last two empty
// when not measured. REQUIRES: s.status == "ok".
std::string render_gemm_table_row(const GemmSample& s) {
  return fmt::format("{},{},{},{},{},{}", s.m, s.n, s.k, format_scaled(s.flops_per_s, -kTera),
                     s.heuristic_flops_per_s ? format_scaled(s.heuristic_flops_per_s, -kTera) : "",
                     s.p95_time_s ? format_scaled(s.p95_time_s, -kMicro) : "");
}

void render_gemm(std::string& out, const std::map<std::string, GemmTable>& gemm) {
  if (gemm.empty()) return;
  out += "gemm:\n";
  for (const auto& [dtype, table] : gemm) {
    out += fmt::format("  {}:\n", quote(dtype));
    out += fmt::format("    max_efficiency: {}\n", format_scaled(table.max_efficiency, 0));
    if (table.sustained_flops_per_s)
      out += fmt::format("    sustained_tflops: {}\n",
                         format_scaled(table.sustained_flops_per_s, -kTera));
    if (table.samples.empty()) continue;
    const bool all_ok = std::all_of(table.samples.begin(), table.samples.end(),
                                    [](const GemmSample& s) { return s.status == "ok"; });
    if (all_ok) {
      out += fmt::format("    samples_table: |\n      {}\n", kGemmTableHeader);
      for (const auto& s : table.samples) out += "      " + render_gemm_table_row(s) + "\n";
      continue;
    }
    out += "    samples:\n";
    for (const auto& s : table.samples) out += "      - " + render_gemm_sample(s) + "\n";
  }
}

// The header line of an attention_table: its columns, the sample fields in their units; the
// source runs to the end of its row (it may hold commas), a field not given left empty.
constexpr const char* kAttentionTableHeader =
    "kernel,head_dim,seq_len,causal,fwd_tflops,bwd_tflops,fwd_bwd_tflops,source";
constexpr size_t kAttentionTableFields = 8;

// Whether `a` can be a row of an attention_table: its kernel without commas and both texts on
// one line, without the spaces at their ends that a row would not keep apart from its neighbours.
bool fits_attention_table(const AttentionSample& a) {
  auto one_line = [](const std::string& t) {
    return t.find('\n') == std::string::npos && t.find('\r') == std::string::npos &&
           (t.empty() || (!std::isspace(static_cast<unsigned char>(t.front())) &&
                          !std::isspace(static_cast<unsigned char>(t.back()))));
  };
  return !a.kernel.empty() && a.kernel.find(',') == std::string::npos && one_line(a.kernel) &&
         one_line(a.source);
}

std::string render_attention_table_row(const AttentionSample& a) {
  auto rate = [](double v) { return v ? format_scaled(v, -kTera) : std::string(); };
  return fmt::format("{},{},{},{},{},{},{},{}", a.kernel, a.head_dim, a.seq_len,
                     a.causal ? "true" : "false", rate(a.fwd_flops_per_s), rate(a.bwd_flops_per_s),
                     rate(a.fwd_bwd_flops_per_s), a.source);
}

std::string render_attention_sample(const AttentionSample& a) {
  std::string row =
      fmt::format("{{kernel: {}, head_dim: {}, seq_len: {}, causal: {}", quote(a.kernel),
                  a.head_dim, a.seq_len, a.causal ? "true" : "false");
  if (a.fwd_flops_per_s) row += ", fwd_tflops: " + format_scaled(a.fwd_flops_per_s, -kTera);
  if (a.bwd_flops_per_s) row += ", bwd_tflops: " + format_scaled(a.bwd_flops_per_s, -kTera);
  if (a.fwd_bwd_flops_per_s)
    row += ", fwd_bwd_tflops: " + format_scaled(a.fwd_bwd_flops_per_s, -kTera);
  if (!a.source.empty()) row += ", source: " + quote(a.source);
  return row + "}";
}

// As a table where every sample fits one (what a profile of many samples reads fastest), else
// as a list.
void render_attention(std::string& out, const std::vector<AttentionSample>& samples) {
  if (samples.empty()) return;
  if (std::all_of(samples.begin(), samples.end(), fits_attention_table)) {
    out += fmt::format("attention_table: |\n  {}\n", kAttentionTableHeader);
    for (const auto& a : samples) out += "  " + render_attention_table_row(a) + "\n";
    return;
  }
  out += "attention:\n";
  for (const auto& a : samples) out += "  - " + render_attention_sample(a) + "\n";
}

void render_collective(std::string& out, const CollectiveFit& c) {
  out += fmt::format("  - collective: {}\n", quote(c.collective));
  put(out, "    ", "level", c.level);
  out += fmt::format("    group_size: {}\n", c.group_size);
  put(out, "    ", "source", c.source);
  if (!c.samples.empty()) out += "    samples:\n";
  for (const auto& s : c.samples) {
    out +=
        fmt::format("      - {{bytes: {}, time_us: {}, busbw_GBps: {}", s.bytes,
                    format_scaled(s.time_s, -kMicro), format_scaled(s.busbw_bytes_per_s, -kGiga));
    if (s.status != "ok") out += ", status: " + quote(s.status);
    out += "}\n";
  }
  out += fmt::format("    latency_us: {}\n", format_scaled(c.latency_s, -kMicro));
  out += fmt::format("    busbw_GBps: {}\n", format_scaled(c.busbw_bytes_per_s, -kGiga));
  out += fmt::format("    half_peak_bytes: {}\n", format_scaled(c.half_peak_bytes, 0));
}

// ---- Parsing --------------------------------------------------------------------------------

std::string read_status(const YamlNode& row) {
  auto c = row.optional_child("status");
  if (!c) return "ok";
  std::string s = c->as_string();
  if (s != "ok" && s.rfind("failed", 0) != 0) c->fail("must be 'ok' or start with 'failed'");
  return s;
}

Provenance read_provenance(const YamlNode& n) {
  n.expect_only_keys({"how", "gpu", "gpu_count", "nodes", "driver", "cuda", "cublas", "nccl",
                      "nccl_env", "date", "command", "sources"});
  Provenance p;
  p.how = n.child("how").as_choice(kHow);
  p.gpu = get_text(n, "gpu", "");
  p.gpu_count = n.get_int("gpu_count", 0, 0, 100'000'000);
  p.nodes = n.get_int("nodes", 0, 0, 100'000'000);
  p.driver = get_text(n, "driver", "");
  p.cuda = get_text(n, "cuda", "");
  p.cublas = get_text(n, "cublas", "");
  p.nccl = get_text(n, "nccl", "");
  if (auto env = n.optional_child("nccl_env")) {
    for (const auto& k : env->keys()) p.nccl_env[k] = env->child(k).as_string();
  }
  p.date = get_text(n, "date", "");
  p.command = get_text(n, "command", "");
  if (auto src = n.optional_child("sources")) {
    if (!src->is_sequence()) src->fail("must be a list");
    for (size_t i = 0; i < src->size(); ++i) p.sources.push_back(src->element(i).as_string());
  }
  return p;
}

GemmSample read_gemm_sample(const YamlNode& n) {
  n.expect_only_keys({"m", "n", "k", "tflops", "heuristic_tflops", "p95_time_us", "status"});
  GemmSample s;
  s.m = n.child("m").as_int(1, int64_t{1} << 40);
  s.n = n.child("n").as_int(1, int64_t{1} << 40);
  s.k = n.child("k").as_int(1, int64_t{1} << 40);
  s.status = read_status(n);
  s.flops_per_s = s.status == "ok" ? parse_scaled(n.child("tflops"), kTera, Zero::refused)
                                   : get_scaled(n, "tflops", kTera);
  s.heuristic_flops_per_s = get_scaled(n, "heuristic_tflops", kTera, Zero::refused);
  s.p95_time_s = get_scaled(n, "p95_time_us", kMicro, Zero::refused);
  return s;
}

// The comma-separated fields of `line`, each with its column; at most `count`, the last then
// running to the line's end (commas and all).
std::vector<std::pair<std::string, size_t>> csv_fields(const std::string& line,
                                                       size_t count = std::string::npos) {
  std::vector<std::pair<std::string, size_t>> out;
  size_t start = 0;
  while (out.size() + 1 < count) {
    const size_t comma = line.find(',', start);
    out.emplace_back(line.substr(start, comma - start), start);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
  out.emplace_back(line.substr(start), start);
  return out;
}

// The error of field `field` (".m", "" for the whole row) of row `row` of a table block, at
// `column` of the block's line `line`.
InputError table_row_error(const YamlNode& table, size_t line, size_t row, size_t column,
                           const std::string& field, const std::string& value,
                           const std::string& rule) {
  return InputError{{Diagnostic{table.block_location(line, column),
                                fmt::format("{}[{}]{}", table.path(), row, field), value, rule}}};
}

// A table block's samples: its header line (which must be `header`), then one sample per line
// read by `read_row(table, text, line, row)`; blank lines skipped.
template <typename ReadRow>
auto read_table_block(const YamlNode& table, const char* header, ReadRow read_row) {
  const std::string text = table.as_string();
  std::vector<decltype(read_row(table, text, size_t{0}, size_t{0}))> out;
  size_t line = 0, start = 0, row = 0;
  bool at_header = true;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string content = text.substr(start, end - start);
    if (at_header) {
      if (content != header)
        throw InputError{{Diagnostic{table.block_location(line, 0), table.path(), content,
                                     fmt::format("must start with the header line {}", header)}}};
      at_header = false;
    } else if (!content.empty()) {
      out.push_back(read_row(table, content, line, row++));
    }
    start = end + 1;
    ++line;
  }
  return out;
}

// One row (`row`: its index among the table's rows, `line`: its line in the block) of a
// samples_table; errors point at the field.
GemmSample read_gemm_table_row(const YamlNode& table, const std::string& text, size_t line,
                               size_t row) {
  const auto fields = csv_fields(text);
  auto fail_at = [&](size_t column, const std::string& field, const std::string& value,
                     const std::string& rule) {
    throw table_row_error(table, line, row, column, field, value, rule);
  };
  if (fields.size() != 6)
    fail_at(0, "", text,
            fmt::format("must have 6 comma-separated fields ({}), not {}", kGemmTableHeader,
                        fields.size()));
  static const char* const kNames[] = {".m",          ".n", ".k", ".tflops", ".heuristic_tflops",
                                       ".p95_time_us"};
  GemmSample s;
  int64_t* const sizes[] = {&s.m, &s.n, &s.k};
  for (size_t i = 0; i < 3; ++i) {
    const auto& [value, column] = fields[i];
    if (auto rule = int_from_text(value, 1, int64_t{1} << 40, *sizes[i]))
      fail_at(column, kNames[i], value, *rule);
  }
  double* const rates[] = {&s.flops_per_s, &s.heuristic_flops_per_s, &s.p95_time_s};
  const int shifts[] = {kTera, kTera, kMicro};
  for (size_t i = 0; i < 3; ++i) {
    const auto& [value, column] = fields[3 + i];
    if (value.empty() && i > 0) continue;  // not measured
    if (auto rule = scaled_from_text(value, shifts[i], Zero::refused, *rates[i]))
      fail_at(column, kNames[3 + i], value, *rule);
  }
  return s;
}

GemmTable read_gemm_table(const YamlNode& n, const std::string& dtype) {
  n.expect_only_keys({"max_efficiency", "sustained_tflops", "samples", "samples_table"});
  GemmTable t;
  t.dtype = dtype;
  t.max_efficiency = n.child("max_efficiency").as_double(0.0, 1.0);
  t.sustained_flops_per_s = get_scaled(n, "sustained_tflops", kTera, Zero::refused);
  auto samples = n.optional_child("samples");
  auto table = n.optional_child("samples_table");
  if (samples && table) table->fail("give samples or samples_table, not both");
  if (samples) {
    if (!samples->is_sequence()) samples->fail("must be a list");
    for (size_t i = 0; i < samples->size(); ++i)
      t.samples.push_back(read_gemm_sample(samples->element(i)));
  }
  if (table) t.samples = read_table_block(*table, kGemmTableHeader, read_gemm_table_row);
  return t;
}

CollectiveSample read_collective_sample(const YamlNode& n) {
  n.expect_only_keys({"bytes", "time_us", "busbw_GBps", "status"});
  CollectiveSample s;
  s.bytes = n.child("bytes").as_int(0, int64_t{1} << 50);
  s.status = read_status(n);
  bool ok = s.status == "ok";
  s.time_s = ok ? parse_scaled(n.child("time_us"), kMicro) : get_scaled(n, "time_us", kMicro);
  s.busbw_bytes_per_s =
      ok ? parse_scaled(n.child("busbw_GBps"), kGiga) : get_scaled(n, "busbw_GBps", kGiga);
  return s;
}

CollectiveFit read_collective(const YamlNode& n) {
  n.expect_only_keys({"collective", "level", "group_size", "source", "samples", "latency_us",
                      "busbw_GBps", "half_peak_bytes"});
  CollectiveFit c;
  c.collective = n.child("collective").as_choice(collective_names());
  c.level = get_text(n, "level", "");
  c.group_size = n.child("group_size").as_int(1, 100'000'000);
  c.source = get_text(n, "source", "");
  if (auto samples = n.optional_child("samples")) {
    if (!samples->is_sequence()) samples->fail("must be a list");
    for (size_t i = 0; i < samples->size(); ++i)
      c.samples.push_back(read_collective_sample(samples->element(i)));
  }
  c.latency_s = parse_scaled(n.child("latency_us"), kMicro);
  c.busbw_bytes_per_s = parse_scaled(n.child("busbw_GBps"), kGiga, Zero::refused);
  c.half_peak_bytes = get_scaled(n, "half_peak_bytes", 0);
  return c;
}

std::string file_stem(const std::string& file) {
  return std::filesystem::path(file).stem().string();
}

AttentionSample read_attention_sample(const YamlNode& n) {
  n.expect_only_keys({"kernel", "head_dim", "seq_len", "causal", "fwd_tflops", "bwd_tflops",
                      "fwd_bwd_tflops", "source"});
  AttentionSample s;
  s.kernel = n.child("kernel").as_string();
  s.head_dim = n.child("head_dim").as_int(1, 1 << 20);
  s.seq_len = n.child("seq_len").as_int(1, int64_t{1} << 32);
  s.causal = n.child("causal").as_bool();
  s.fwd_flops_per_s = get_scaled(n, "fwd_tflops", kTera, Zero::refused);
  s.bwd_flops_per_s = get_scaled(n, "bwd_tflops", kTera, Zero::refused);
  s.fwd_bwd_flops_per_s = get_scaled(n, "fwd_bwd_tflops", kTera, Zero::refused);
  if (s.fwd_flops_per_s <= 0 && s.fwd_bwd_flops_per_s <= 0)
    n.fail("needs fwd_tflops or fwd_bwd_tflops greater than 0");
  s.source = get_text(n, "source", "");
  return s;
}

// One row of an attention_table (`row`: its index among the table's rows, `line`: its line in
// the block), read under the rules of the list's entries (read_attention_sample); errors point at
// the field.
AttentionSample read_attention_table_row(const YamlNode& table, const std::string& text,
                                         size_t line, size_t row) {
  const auto fields = csv_fields(text, kAttentionTableFields);
  auto fail_at = [&](size_t column, const std::string& field, const std::string& value,
                     const std::string& rule) {
    throw table_row_error(table, line, row, column, field, value, rule);
  };
  if (fields.size() != kAttentionTableFields)
    fail_at(0, "", text,
            fmt::format("must have 8 comma-separated fields ({}), not {}", kAttentionTableHeader,
                        fields.size()));
  AttentionSample s;
  s.kernel = fields[0].first;
  if (s.kernel.empty()) fail_at(fields[0].second, ".kernel", "", "must not be empty");
  const int64_t limits[] = {int64_t{1} << 20, int64_t{1} << 32};
  int64_t* const sizes[] = {&s.head_dim, &s.seq_len};
  static const char* const kSizeNames[] = {".head_dim", ".seq_len"};
  for (size_t i = 0; i < 2; ++i) {
    const auto& [value, column] = fields[1 + i];
    if (auto rule = int_from_text(value, 1, limits[i], *sizes[i]))
      fail_at(column, kSizeNames[i], value, *rule);
  }
  const auto& [causal, causal_column] = fields[3];
  if (causal != "true" && causal != "false")
    fail_at(causal_column, ".causal", causal, "must be true or false");
  s.causal = causal == "true";
  double* const rates[] = {&s.fwd_flops_per_s, &s.bwd_flops_per_s, &s.fwd_bwd_flops_per_s};
  static const char* const kRateNames[] = {".fwd_tflops", ".bwd_tflops", ".fwd_bwd_tflops"};
  for (size_t i = 0; i < 3; ++i) {
    const auto& [value, column] = fields[4 + i];
    if (value.empty()) continue;  // not given
    if (auto rule = scaled_from_text(value, kTera, Zero::refused, *rates[i]))
      fail_at(column, kRateNames[i], value, *rule);
  }
  if (s.fwd_flops_per_s <= 0 && s.fwd_bwd_flops_per_s <= 0)
    fail_at(0, "", text, "needs fwd_tflops or fwd_bwd_tflops greater than 0");
  s.source = fields[7].first;
  return s;
}

PeerAllReduceFit read_peer(const YamlNode& n) {
  if (!n.is_map()) n.fail("must be a mapping {latency_us, peer_read_GBps, max_bytes, source}");
  n.expect_only_keys({"latency_us", "peer_read_GBps", "max_bytes", "source"});
  PeerAllReduceFit f;
  f.latency_s = parse_scaled(n.child("latency_us"), kMicro);
  f.peer_read_bytes_per_s = parse_scaled(n.child("peer_read_GBps"), kGiga, Zero::refused);
  f.max_bytes = get_scaled(n, "max_bytes", 0, Zero::refused);
  f.source = get_text(n, "source", "");
  return f;
}

CalibrationProfile read_profile(const YamlNode& root) {
  if (!root.is_map()) root.fail("must be a mapping (a calibration profile)");
  root.expect_only_keys({"name", "provenance", "gemm", "hbm_GBps", "attention_efficiency",
                         "attention", "attention_table", "fp8_quantization_overhead",
                         "sustained_compute_ratio", "gpu_compute_spread",
                         "intra_node_bus_efficiency", "inter_node_bus_efficiency", "collectives",
                         "peer_all_reduce", "notes", "complete", "missing"});
  CalibrationProfile p;
  p.name = get_text(root, "name", file_stem(root.file()));
  p.provenance = read_provenance(root.child("provenance"));
  if (auto gemm = root.optional_child("gemm")) {
    for (const auto& dtype : gemm->keys()) {
      YamlNode table = gemm->child(dtype);
      if (std::find(kDtypes.begin(), kDtypes.end(), dtype) == kDtypes.end())
        table.fail(fmt::format("gemm dtype must be one of {}", fmt::join(kDtypes, "|")));
      p.gemm[dtype] = read_gemm_table(table, dtype);
    }
  }
  p.hbm_bytes_per_s = get_scaled(root, "hbm_GBps", kGiga, Zero::refused);
  p.attention_efficiency = get_fraction(root, "attention_efficiency");
  auto att = root.optional_child("attention");
  auto att_table = root.optional_child("attention_table");
  if (att && att_table) att_table->fail("give attention or attention_table, not both");
  if (att) {
    if (!att->is_sequence()) att->fail("must be a list");
    for (size_t i = 0; i < att->size(); ++i)
      p.attention.push_back(read_attention_sample(att->element(i)));
  }
  if (att_table)
    p.attention = read_table_block(*att_table, kAttentionTableHeader, read_attention_table_row);
  if (auto q = root.optional_child("fp8_quantization_overhead")) {
    if (!q->is_map())
      q->fail("must be a mapping of FP8 recipe to overhead, e.g. {delayed: 0, current: 0.21}");
    for (const auto& recipe : q->keys()) {
      YamlNode v = q->child(recipe);
      if (recipe != "delayed" && recipe != "current" && recipe != "block")
        v.fail("FP8 recipe must be one of delayed|current|block");
      p.fp8_quantization_overhead[recipe] = v.as_double(0.0, 10.0);
    }
  }
  p.sustained_compute_ratio = get_fraction(root, "sustained_compute_ratio");
  p.gpu_compute_spread = get_fraction(root, "gpu_compute_spread");
  p.intra_node_bus_efficiency = get_fraction(root, "intra_node_bus_efficiency");
  p.inter_node_bus_efficiency = get_fraction(root, "inter_node_bus_efficiency");
  if (auto cs = root.optional_child("collectives")) {
    if (!cs->is_sequence()) cs->fail("must be a list");
    for (size_t i = 0; i < cs->size(); ++i)
      p.collectives.push_back(read_collective(cs->element(i)));
  }
  if (auto peer = root.optional_child("peer_all_reduce")) p.peer_all_reduce = read_peer(*peer);
  if (auto notes = root.optional_child("notes")) {
    if (!notes->is_sequence()) notes->fail("must be a list");
    for (size_t i = 0; i < notes->size(); ++i) p.notes.push_back(notes->element(i).as_string());
  }
  if (auto complete = root.optional_child("complete")) p.complete = complete->as_bool();
  if (auto missing = root.optional_child("missing")) {
    if (!missing->is_sequence()) missing->fail("must be a list");
    for (size_t i = 0; i < missing->size(); ++i)
      p.missing.push_back(missing->element(i).as_string());
  }
  return p;
}

}  // namespace

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const CollectiveInfo& c : collectives()) v.emplace_back(c.name);
    return v;
  }();
  return names;
}

double bus_factor(const std::string& collective, int64_t n) {
  const CollectiveInfo* c = find_collective(collective);
  return c ? c->bus_factor(static_cast<double>(n)) : 1.0;
}

Result<CalibrationProfile> parse_profile_yaml(const std::string& text, const std::string& file) {
  return capture_input_errors([&] { return read_profile(YamlNode::parse(text, file)); });
}

Result<CalibrationProfile> load_profile(const std::string& path) {
  return capture_input_errors([&] { return read_profile(YamlNode::load_file(path)); });
}

std::string render_profile_yaml(const CalibrationProfile& p) {
  std::string out;
  put(out, "", "name", p.name);
  render_provenance(out, p.provenance);
  render_gemm(out, p.gemm);
  if (p.hbm_bytes_per_s) out += "hbm_GBps: " + format_scaled(p.hbm_bytes_per_s, -kGiga) + "\n";
  if (p.attention_efficiency)
    out += "attention_efficiency: " + format_scaled(p.attention_efficiency, 0) + "\n";
  render_attention(out, p.attention);
  if (p.sustained_compute_ratio)
    out += "sustained_compute_ratio: " + format_scaled(p.sustained_compute_ratio, 0) + "\n";
  if (p.gpu_compute_spread)
    out += "gpu_compute_spread: " + format_scaled(p.gpu_compute_spread, 0) + "\n";
  if (!p.fp8_quantization_overhead.empty()) {
    out += "fp8_quantization_overhead:\n";
    for (const auto& [recipe, v] : p.fp8_quantization_overhead)
      out += fmt::format("  {}: {}\n", recipe, format_scaled(v, 0));
  }
  if (p.intra_node_bus_efficiency)
    out += "intra_node_bus_efficiency: " + format_scaled(p.intra_node_bus_efficiency, 0) + "\n";
  if (p.inter_node_bus_efficiency)
    out += "inter_node_bus_efficiency: " + format_scaled(p.inter_node_bus_efficiency, 0) + "\n";
  if (!p.collectives.empty()) out += "collectives:\n";
  for (const auto& c : p.collectives) render_collective(out, c);
  if (p.peer_all_reduce.known()) {
    out += "peer_all_reduce: {latency_us: " + format_scaled(p.peer_all_reduce.latency_s, -kMicro) +
           ", peer_read_GBps: " + format_scaled(p.peer_all_reduce.peer_read_bytes_per_s, -kGiga);
    if (p.peer_all_reduce.max_bytes)
      out += ", max_bytes: " + format_scaled(p.peer_all_reduce.max_bytes, 0);
    if (!p.peer_all_reduce.source.empty()) out += ", source: " + quote(p.peer_all_reduce.source);
    out += "}\n";
  }
  if (!p.notes.empty()) out += "notes:\n";
  for (const auto& n : p.notes) out += "  - " + quote(n) + "\n";
  if (!p.complete) out += "complete: false\n";
  if (!p.missing.empty()) out += "missing:\n";
  for (const auto& m : p.missing) out += "  - " + quote(m) + "\n";
  return out;
}

Result<bool> write_profile_atomically(const CalibrationProfile& p, const std::string& path) {
  if (std::optional<Diagnostic> error = write_file_atomically(path, render_profile_yaml(p)))
    return *error;
  return true;
}

}  // namespace meshplan
