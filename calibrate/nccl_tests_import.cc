// Turning parsed nccl-tests logs into profile entries, with consistency checks.
#include "calibrate/nccl_tests_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "calibrate/alpha_beta_fit.h"
#include "core/collective.h"
#include "core/yaml_node.h"

namespace meshplan::calibrate {
namespace {

Diagnostic row_error(const NcclTestsLog& log, int line, const std::string& rule) {
  return Diagnostic{{log.file, line, line ? 1 : 0, ""}, "", "", rule};
}

// Printed numbers have two decimals: allow that rounding plus 1% (time rounding).
bool close(double printed, double expected, double abs_tol) {
  return std::fabs(printed - expected) <= abs_tol + 0.01 * std::fabs(expected);
}

Result<CollectiveSample> to_sample(const NcclTestsLog& log, const NcclTestsRow& row,
                                   const std::string& collective, int64_t ranks) {
  const NcclTestsHalf& h = row.out_of_place;
  if (!(h.time_us > 0)) return row_error(log, row.line, "out-of-place time must be positive");
  double factor = bus_factor(collective, ranks);
  CollectiveSample s;
  s.bytes = row.bytes;
  s.time_s = h.time_us * 1e-6;
  double algbw = static_cast<double>(row.bytes) / s.time_s;  // bytes/s
  s.busbw_bytes_per_s = algbw * factor;
  if (log.has_redop && !close(h.algbw_GBps, algbw * 1e-9, 0.011))
    return row_error(
        log, row.line,
        fmt::format("algbw {} GB/s is not size/time = {:.3f} GB/s", h.algbw_GBps, algbw * 1e-9));
  if (!close(h.busbw_GBps, algbw * 1e-9 * factor, 0.011 + 0.005 * factor))
    return row_error(log, row.line,
                     fmt::format("busbw {} GB/s is not size/time x {} = {:.3f} GB/s ({} over {} "
                                 "ranks): wrong collective or rank count? pass --collective / "
                                 "--ranks",
                                 h.busbw_GBps, factor, algbw * 1e-9 * factor, collective, ranks));
  // A count of wrong values fails the row; old logs print a max-error float there instead.
  int64_t wrong = 0;
  auto [end, ec] = std::from_chars(h.wrong.data(), h.wrong.data() + h.wrong.size(), wrong);
  if (ec == std::errc() && end == h.wrong.data() + h.wrong.size() && wrong != 0)
    s.status = fmt::format("failed: {} wrong values", h.wrong);
  return s;
}

Diagnostic infer_error(const NcclTestsLog& log, const std::string& rule) {
  return Diagnostic{{log.file, 0, 0, ""}, "", "", rule};
}

std::string collective_choices() {
  std::string out;
  for (const CollectiveInfo& c : collectives()) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

}  // namespace

std::string collective_from_name(const std::string& name) {
  std::string s;
  for (char c : std::filesystem::path(name).filename().string())
    if (std::isalnum(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(c));
  // Table order puts "reduce" after "allreduce" and "reducescatter", which contain it.
  for (const CollectiveInfo& c : collectives())
    if (s.find(c.nccl_tests_name) != std::string::npos) return c.name;
  return "";
}

Result<NcclTestsLog> parse_nccl_tests(const std::string& text, const std::string& file) {
  size_t first = text.find_first_not_of(" \t\r\n");
  bool json = first != std::string::npos && text[first] == '{';
  return json ? parse_nccl_tests_json(text, file) : parse_nccl_tests_text(text, file);
}

Result<CollectiveFit> to_collective_fit(const NcclTestsLog& log, const ImportOptions& options,
                                        AlphaBetaFit* diagnostics) {
  CollectiveFit fit;
  fit.collective = !options.collective.empty() ? options.collective
                   : !log.collective.empty()   ? log.collective
                                               : collective_from_name(log.file);
  if (fit.collective.empty())
    return infer_error(log, fmt::format("the log does not name its collective (no '# Collective "
                                        "test starting' line, no program in the file name); "
                                        "pass --collective ({})",
                                        collective_choices()));
  int64_t ranks = options.ranks ? options.ranks
                  : log.ranks   ? log.ranks
                                : log.threads * log.gpus_per_thread;
  if (ranks <= 0)
    return infer_error(log,
                       "the log does not give its rank count (no '# nThread' header, no "
                       "rank lines); pass --ranks");
  int64_t nodes = options.nodes ? options.nodes : std::max<int64_t>(log.nodes, 1);
  fit.group_size = ranks;
  fit.level = !options.level.empty() ? options.level : nodes > 1 ? "ib" : "nvlink";
  fit.source = fmt::format("nccl-tests: {}", std::filesystem::path(log.file).filename().string());
  for (const auto& row : log.rows) {
    if (row.bytes == 0) continue;  // nccl-tests -b 0 prints empty operations
    auto s = to_sample(log, row, fit.collective, ranks);
    if (!s) return s.errors();
    fit.samples.push_back(*s);
  }
  auto r = refit(fit);
  if (!r) return Diagnostic{{log.file, 0, 0, ""}, "", "", r.errors()[0].rule};
  if (diagnostics) *diagnostics = *r;
  return fit;
}

Result<CalibrationProfile> import_nccl_tests(const std::vector<std::string>& files,
                                             const ImportOptions& options) {
  CalibrationProfile p;
  p.provenance.how = "imported";
  std::vector<Diagnostic> errors;
  for (const auto& file : files) {
    auto text = capture_input_errors([&] { return read_text_file(file); });
    if (!text) {
      errors.insert(errors.end(), text.errors().begin(), text.errors().end());
      continue;
    }
    auto log = parse_nccl_tests(*text, file);
    if (!log) {
      errors.insert(errors.end(), log.errors().begin(), log.errors().end());
      continue;
    }
    AlphaBetaFit diagnostics;
    auto fit = to_collective_fit(*log, options, &diagnostics);
    if (!fit) {
      errors.insert(errors.end(), fit.errors().begin(), fit.errors().end());
      continue;
    }
    if (p.provenance.gpu.empty()) p.provenance.gpu = log->gpu;
    if (p.provenance.nccl.empty()) p.provenance.nccl = log->nccl_version;
    p.provenance.gpu_count = std::max(p.provenance.gpu_count, fit->group_size);
    p.provenance.nodes = std::max({p.provenance.nodes, options.nodes, log->nodes, int64_t{1}});
    p.provenance.sources.push_back(file);
    if (log->validation_failed) p.notes.push_back(file + ": nccl-tests reported FAILED values");
    p.notes.insert(p.notes.end(), log->notes.begin(), log->notes.end());
    p.notes.push_back(file + ": " + describe_fit(*fit, diagnostics));
    p.collectives.push_back(std::move(*fit));
  }
  if (!errors.empty()) return errors;
  return p;
}

}  // namespace meshplan::calibrate
