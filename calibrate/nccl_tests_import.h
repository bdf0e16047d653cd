// Importer for nccl-tests output (NVIDIA/nccl-tests; REFERENCE.md §5): the text logs of every
// variant still met in the wild and the JSON written by `-J`, turned into CollectiveFit
// entries (samples from the out-of-place half, then the α-β fit).
//
// Text variants read: current 13-column rows (with `root`), pre-August-2022 12-column rows
// (last field of each half a max-error float), 11-column rows without `redop` (nccl-tests of
// 2020 and earlier, and alltoall rows whose redop is blank; NVIDIA/nccl issue 340), `-I 1`
// per-iteration columns (4 more per half), `N/A` in #wrong, interleaved `NCCL INFO`/`NCCL WARN`
// lines, OpenMPI `--tag-output` prefixes (`[1,0]<stdout>:`) and `srun --label` prefixes (`0: `),
// rank lines with or without `Group`.
//
// Pasted logs are read as pasted (tests/data/nccl-tests/README.md lists real ones): a table
// without the `# nThread` header (then ranks and collective come from the command line), a log
// cut before its `# Avg bus bandwidth` footer, and a last row cut mid-line (dropped) each add a
// note to NcclTestsLog::notes instead of failing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/alpha_beta_fit.h"
#include "core/profile.h"
#include "core/result.h"

namespace meshplan::calibrate {

struct NcclTestsHalf {
  double time_us = 0;  // NaN when the log prints N/A
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::string wrong;  // wrong-value count, "N/A", or (old logs) a max-error float
};

struct NcclTestsRow {
  int line = 0;       // 1-based line in the file
  int64_t bytes = 0;  // "size"
  int64_t count = 0;
  std::string type, redop;
  int64_t root = -1;
  NcclTestsHalf out_of_place, in_place;
};

struct NcclTestsLog {
  std::string file;
  std::string collective;                    // one of collective_names(); empty when not inferable
  std::string program;                       // e.g. all_reduce_perf, when the log names it
  int64_t ranks = 0;                         // rank lines in the header (0: none listed)
  int64_t nodes = 0;                         // distinct hosts in the rank lines (0: none listed)
  int64_t threads = 0, gpus_per_thread = 0;  // "# nThread T nGpus G"
  std::string gpu;                           // device name from the first rank line
  std::string nccl_version;        // from "NCCL version x.y.z" or the nccl-tests version line
  bool wrong_is_count = true;      // false for pre-2022 logs, whose field is a max error
  bool has_redop = true;           // false for 11-column rows
  bool validation_failed = false;  // "# Out of bounds values : N FAILED"
  std::vector<NcclTestsRow> rows;
  std::vector<std::string> notes;  // what was read leniently, "file:line: …" each
};

// Overrides from the command line; zero / empty means "infer from the log".
struct ImportOptions {
  std::string collective;
  int64_t ranks = 0;
  int64_t nodes = 0;
  std::string level;  // default: nvlink for one node, ib for several
};

// Parses one log (JSON when the first non-blank character is '{'). Errors carry file:line.
Result<NcclTestsLog> parse_nccl_tests(const std::string& text, const std::string& file);
Result<NcclTestsLog> parse_nccl_tests_text(const std::string& text, const std::string& file);
Result<NcclTestsLog> parse_nccl_tests_json(const std::string& text, const std::string& file);

// Collective named by an nccl-tests program or file name (all_reduce_perf, allreduce.log,
// alltoall_perf.txt, …); empty when none matches.
std::string collective_from_name(const std::string& name);

// Samples (out-of-place time; busbw recomputed from size/time and checked against the printed
// busbw, and against the printed algbw except in 11-column logs, whose all_gather algbw was
// already scaled by (n−1)/n) and the fit. Rows of 0 bytes are skipped. Errors when the
// collective or rank count cannot be inferred, or the printed numbers disagree with the
// collective and rank count.
// `diagnostics`, when given, receives the fit's residuals and range (alpha_beta_fit.h).
Result<CollectiveFit> to_collective_fit(const NcclTestsLog& log, const ImportOptions& options,
                                        AlphaBetaFit* diagnostics = nullptr);

// Reads every file and assembles a profile (provenance how = imported, sources = files; notes:
// each log's notes and each fit's describe_fit line).
Result<CalibrationProfile> import_nccl_tests(const std::vector<std::string>& files,
                                             const ImportOptions& options);

}  // namespace meshplan::calibrate
