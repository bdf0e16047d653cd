// calibrate/nccl_tests_*.cc: every nccl-tests log variant, and errors with line numbers.
// Fixtures: tests/data/nccl-tests (numbers self-consistent: algbw = size/time, busbw = algbw ×
// the nccl-tests factor).
#include "calibrate/nccl_tests_import.h"

#include <doctest/doctest.h>

#include "core/yaml_node.h"

namespace meshplan::calibrate {
namespace {

std::string fixture(const std::string& name) {
  return std::string(MESHPLAN_TEST_DATA) + "/nccl-tests/" + name;
}

NcclTestsLog parse_fixture(const std::string& name) {
  std::string path = fixture(name);
  auto r = parse_nccl_tests(read_text_file(path), path);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return *r;
}

CollectiveFit fit_fixture(const std::string& name, ImportOptions options = {}) {
  auto fit = to_collective_fit(parse_fixture(name), options);
  REQUIRE_MESSAGE(fit.ok(), (fit.ok() ? "" : format_diagnostics(fit.errors())));
  return *fit;
}

TEST_CASE("current 13-column log: collective, ranks and hosts from the header") {
  NcclTestsLog log = parse_fixture("all_reduce_perf.txt");
  CHECK(log.program == "all_reduce_perf");
  CHECK(log.collective == "all_reduce");
  CHECK(log.ranks == 8);
  CHECK(log.nodes == 1);
  CHECK(log.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(log.nccl_version == "2.23.4");  // from the NCCL INFO line, not nccl-headers
  REQUIRE(log.rows.size() == 16);       // NCCL INFO line between rows skipped
  CHECK(log.rows[0].bytes == 8);
  CHECK(log.rows[0].count == 2);
  CHECK(log.rows[0].root == -1);
  CHECK(log.rows[0].redop == "sum");
  CHECK(log.rows[15].bytes == 8589934592);
  CHECK(log.rows[15].out_of_place.time_us == 41774);
  CHECK(log.rows[15].in_place.time_us == 42192);
  CHECK(log.rows[15].out_of_place.busbw_GBps == 359.85);
}

TEST_CASE("samples take the out-of-place time and recompute busbw from size/time") {
  CollectiveFit fit = fit_fixture("all_reduce_perf.txt");
  CHECK(fit.collective == "all_reduce");
  CHECK(fit.group_size == 8);
  CHECK(fit.level == "nvlink");
  CHECK(fit.source == "nccl-tests: all_reduce_perf.txt");
  REQUIRE(fit.samples.size() == 16);
  // 2 MiB row: 27.19 µs; algbw = 2097152/27.19e-6 = 77.13 GB/s; busbw × 1.75 = 134.98 GB/s.
  CHECK(fit.samples[9].bytes == 2097152);
  CHECK(fit.samples[9].time_s == doctest::Approx(27.19e-6));
  CHECK(fit.samples[9].busbw_bytes_per_s == doctest::Approx(2097152 / 27.19e-6 * 1.75));
  // Generated from α = 17 µs, busbw = 360 GB/s, then rounded as nccl-tests prints.
  CHECK(fit.latency_s == doctest::Approx(17e-6).epsilon(0.01));
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(360e9).epsilon(0.01));
}

TEST_CASE("mpirun --tag-output log over two hosts: 16 ranks, 2 nodes, inter-node level") {
  NcclTestsLog log = parse_fixture("all_gather_2node_mpi.log");
  CHECK(log.ranks == 16);
  CHECK(log.nodes == 2);
  CHECK(log.nccl_version == "2.21.5");
  CHECK(log.collective.empty());  // no "test starting" line: the file name decides
  CollectiveFit fit = fit_fixture("all_gather_2node_mpi.log");
  CHECK(fit.collective == "all_gather");
  CHECK(fit.level == "ib");
  CHECK(fit.samples.size() == 11);
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(46.5e9).epsilon(0.01));
  CHECK(fit.latency_s == doctest::Approx(45e-6).epsilon(0.02));
}

TEST_CASE("pre-2022 12-column log: error floats are not wrong counts") {
  NcclTestsLog log = parse_fixture("allreduce_a100_2021.log");
  CHECK_FALSE(log.wrong_is_count);
  CHECK(log.ranks == 8);
  CHECK(log.gpu == "A100-SXM4-40GB");
  CHECK(log.rows[1].out_of_place.wrong == "4e-07");
  CollectiveFit fit = fit_fixture("allreduce_a100_2021.log");
  CHECK(fit.collective == "all_reduce");  // from the file name "allreduce_…"
  for (const auto& s : fit.samples) CHECK(s.status == "ok");
  // The sweep stops at 128 MiB, short of the 215 GB/s the free fit extrapolates: busbw is
  // capped at the best measured row, 134,217,728 B in 1,114.5 µs x 7/4 = 210.75 GB/s.
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(134217728 / 1114.5e-6 * 1.75).epsilon(1e-12));
}

TEST_CASE("-I 1 per-iteration columns and N/A wrong counts") {
  NcclTestsLog log = parse_fixture("reduce_scatter_perf_iters.txt");
  CHECK(log.collective == "reduce_scatter");
  CHECK(log.ranks == 4);
  CHECK(log.gpu == "NVIDIA H200");
  CHECK(log.rows[0].out_of_place.time_us == 14.31);
  CHECK(log.rows[0].out_of_place.wrong == "N/A");
  CHECK(log.rows[0].in_place.time_us == 14.45);  // after the 4 per-iteration columns
  CollectiveFit fit = fit_fixture("reduce_scatter_perf_iters.txt");
  CHECK(fit.samples[0].status == "ok");
  // Capped at the best row: 256 MiB in 604.1 µs x 3/4 = 333.3 GB/s (the free fit says 340).
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(268435456 / 604.1e-6 * 0.75).epsilon(1e-12));
}

TEST_CASE("srun --label prefixes and send/recv's factor of 1") {
  CollectiveFit fit = fit_fixture("sendrecv_perf.out");
  CHECK(fit.collective == "send_recv");
  CHECK(fit.group_size == 2);
  CHECK(fit.samples.size() == 10);
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(370e9).epsilon(0.01));
}

TEST_CASE("-J JSON output") {
  NcclTestsLog log = parse_fixture("alltoall_perf.json");
  CHECK(log.collective == "all_to_all");
  CHECK(log.ranks == 8);
  CHECK(log.nccl_version == "2.26.2");
  CollectiveFit fit = fit_fixture("alltoall_perf.json");
  CHECK(fit.samples.size() == 8);
  // Capped at the best row: 128 MiB in 416.47 µs x 7/8 = 281.99 GB/s (the free fit says 300);
  // α refitted under that slope is smaller than the free fit's 25 µs.
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(134217728 / 416.47e-6 * 0.875).epsilon(1e-12));
  CHECK(fit.latency_s > 0);
  CHECK(fit.latency_s < 25e-6);
}

TEST_CASE("flags override what the log says, and a wrong rank count is caught by busbw") {
  ImportOptions o;
  o.ranks = 4;  // the log ran 8 ranks: busbw ≠ algbw × 1.5
  auto fit = to_collective_fit(parse_fixture("all_reduce_perf.txt"), o);
  REQUIRE(!fit.ok());
  CHECK(fit.errors()[0].where.line > 20);
  CHECK(fit.errors()[0].rule.find("pass --collective / --ranks") != std::string::npos);
  ImportOptions level;
  level.level = "nvswitch";
  CHECK(fit_fixture("all_reduce_perf.txt", level).level == "nvswitch");
}

TEST_CASE("collective names from programs and file names") {
  CHECK(collective_from_name("all_reduce_perf") == "all_reduce");
  CHECK(collective_from_name("/logs/AllReduce-64n.log") == "all_reduce");
  CHECK(collective_from_name("reduce_scatter_perf.txt") == "reduce_scatter");
  CHECK(collective_from_name("alltoall.log") == "all_to_all");
  CHECK(collective_from_name("reduce_perf") == "reduce");
  CHECK(collective_from_name("run3.txt") == "");
}

TEST_CASE("garbage and truncated JSON name the line") {
  auto garbage = parse_nccl_tests(read_text_file(fixture("garbage.txt")), "garbage.txt");
  REQUIRE(!garbage.ok());
  CHECK(garbage.errors()[0].where.line == 3);  // "42 is not a log": a row-like line, no table
  CHECK(garbage.errors()[0].rule.find("not an nccl-tests log") != std::string::npos);

  auto json = parse_nccl_tests(read_text_file(fixture("alltoall_truncated.json")), "a.json");
  REQUIRE(!json.ok());
  CHECK(json.errors()[0].where.line > 1);
  CHECK(json.errors()[0].rule ==
        "invalid JSON: syntax error while parsing value - invalid string: missing closing quote; "
        "last read: '\"NVIDIA'");

  auto empty = parse_nccl_tests("", "empty.txt");
  REQUIRE(!empty.ok());
  CHECK(empty.errors()[0].where.line == 1);
  CHECK(empty.errors()[0].rule ==
        "not an nccl-tests log: no '# nThread … nGpus …' header line and no data rows");
}

TEST_CASE("a log cut mid-row keeps the rows before the cut and says where it was cut") {
  auto cut = parse_nccl_tests(read_text_file(fixture("all_reduce_truncated.txt")), "t.txt");
  REQUIRE_MESSAGE(cut.ok(), (cut.ok() ? "" : format_diagnostics(cut.errors())));
  CHECK(cut->rows.back().line == 31);
  REQUIRE(cut->notes.size() == 2);
  CHECK(cut->notes[0] == "t.txt:32: last row has 6 fields: cut mid-row, dropped");
  CHECK(cut->notes[1] ==
        "t.txt:31: no '# Avg bus bandwidth' footer: log cut after this row; rows up to here used");
}

TEST_CASE("a log without its footer is read up to its last row, with a note") {
  auto nofoot = parse_nccl_tests(read_text_file(fixture("all_reduce_no_footer.txt")), "n.txt");
  REQUIRE_MESSAGE(nofoot.ok(), (nofoot.ok() ? "" : format_diagnostics(nofoot.errors())));
  REQUIRE(nofoot->notes.size() == 1);
  CHECK(nofoot->notes[0].rfind("n.txt:38: no '# Avg bus bandwidth' footer", 0) == 0);
}

// The all_reduce_perf.txt fixture with `from` replaced by `to`.
std::string edited_log(const std::string& from, const std::string& to) {
  std::string text = read_text_file(fixture("all_reduce_perf.txt"));
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The first line of the diagnostics for `text`, "ok" when it parses.
std::string first_error_line(const std::string& text) {
  auto r = parse_nccl_tests(text, "t.txt");
  if (r.ok()) return "ok";
  const std::string all = format_diagnostics(r.errors());
  return all.substr(0, all.find('\n'));
}

TEST_CASE("a thread count beyond int64 in the header is an error at its line") {
  CHECK(first_error_line(edited_log("nThread 1 ", "nThread 99999999999999999999 ")) ==
        "t.txt:3:1: error: nThread and nGpus must be integers between 1 and 1000000");
}

TEST_CASE("an NCCL version code beyond int64 is an error at its line") {
  CHECK(first_error_line(edited_log("nccl-library=22304", "nccl-library=99999999999999999999")) ==
        "t.txt:1:1: error: nccl-library must be a version code between 1 and 999999");
}

TEST_CASE("a 50,000-character rank line is refused without recursing") {
  CHECK(first_error_line(edited_log("on dgx-h100-01 device  0",
                                    "on " + std::string(50'000, 'h') + " device  0")) ==
        "t.txt:6:1: error: line of 50079 characters; nccl-tests lines are at most 4096: not an "
        "nccl-tests log");
}

TEST_CASE("a 4,096-character rank line is read, longer NCCL INFO lines are skipped") {
  const std::string host(4096 - 79, 'h');  // the line is 4,096 characters
  auto r = parse_nccl_tests(edited_log("on dgx-h100-01 device  0", "on " + host + " device  0") +
                                "x:1:1 [0] NCCL INFO Ring 00 : " + std::string(100'000, '0') + "\n",
                            "t.txt");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  CHECK(r->ranks == 8);
  CHECK(r->nodes == 2);
}

TEST_CASE("a nccl-tests JSON size that is not an integer is an error, not a cast") {
  auto r = parse_nccl_tests("{\"results\": [{\"size\": 1e30}]}", "a.json");
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) ==
        "a.json:1:15: error: field 'size': must be an integer\n"
        "  {\"results\": [{\"size\": 1e30}]}\n"
        "                ^\n");
}

TEST_CASE("import_nccl_tests assembles an imported profile from several files") {
  auto p =
      import_nccl_tests({fixture("all_reduce_perf.txt"), fixture("all_gather_2node_mpi.log")}, {});
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : format_diagnostics(p.errors())));
  CHECK(p->provenance.how == "imported");
  CHECK(p->provenance.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(p->provenance.gpu_count == 16);
  CHECK(p->provenance.nodes == 2);
  CHECK(p->provenance.sources.size() == 2);
  CHECK(p->collectives.size() == 2);
  auto missing = import_nccl_tests({fixture("no_such.txt")}, {});
  REQUIRE(!missing.ok());
}

// Tests on logs pasted into public issues (tests/data/nccl-tests/README.md gives the sources).

TEST_CASE("a table-only paste (nccl-tests#232) asks for --collective, then --ranks, then fits") {
  NcclTestsLog log = parse_fixture("nccl_tests_issue232.txt");
  REQUIRE(log.rows.size() == 5);
  CHECK(log.threads == 0);
  REQUIRE(log.notes.size() == 3);
  CHECK(log.notes[0].find("nccl_tests_issue232.txt:5: no '# nThread … nGpus …' header (a pasted "
                          "table?): ranks and collective come from the command line") !=
        std::string::npos);
  CHECK(log.notes[1].find("nccl_tests_issue232.txt:10: last row has 1 fields: cut mid-row, "
                          "dropped") != std::string::npos);
  CHECK(log.notes[2].find("nccl_tests_issue232.txt:9: no '# Avg bus bandwidth' footer") !=
        std::string::npos);

  auto no_collective = to_collective_fit(log, {});
  REQUIRE_FALSE(no_collective.ok());
  CHECK(no_collective.errors()[0].rule ==
        "the log does not name its collective (no '# Collective test starting' line, no program "
        "in the file name); pass --collective (all_reduce, all_gather, reduce_scatter, "
        "all_to_all, send_recv, broadcast, reduce)");

  ImportOptions options;
  options.collective = "all_reduce";
  auto no_ranks = to_collective_fit(log, options);
  REQUIRE_FALSE(no_ranks.ok());
  CHECK(no_ranks.errors()[0].rule ==
        "the log does not give its rank count (no '# nThread' header, no rank lines); pass "
        "--ranks");

  options.ranks = 2;  // 2 nodes x 1 GPU: all-reduce factor 2·(2−1)/2 = 1
  options.nodes = 2;
  AlphaBetaFit diagnostics;
  auto fit = to_collective_fit(log, options, &diagnostics);
  REQUIRE_MESSAGE(fit.ok(), (fit.ok() ? "" : format_diagnostics(fit.errors())));
  CHECK(fit->level == "ib");
  CHECK(fit->samples.size() == 5);
  // Peak: the 32 MiB row, 33,554,432 B / 812.3 µs = 41.31 GB/s; the free fit's slope is steeper.
  CHECK(diagnostics.capped_at_peak);
  CHECK(diagnostics.unconstrained_busbw_bytes_per_s > 33554432 / 812.3e-6);
  CHECK(fit->busbw_bytes_per_s == doctest::Approx(33554432 / 812.3e-6).epsilon(1e-12));
  CHECK(diagnostics.residuals.size() == 5);
  CHECK(diagnostics.residuals.front().bytes == 2097152);
}

TEST_CASE("a 12-column paste (nccl-tests#128): max-error floats are not failures") {
  ImportOptions options;
  options.collective = "reduce_scatter";
  options.ranks = 8;  // 2 nodes x 4 GPUs: factor 7/8
  AlphaBetaFit diagnostics;
  auto fit = to_collective_fit(parse_fixture("nccl_tests_issue128.txt"), options, &diagnostics);
  REQUIRE_MESSAGE(fit.ok(), (fit.ok() ? "" : format_diagnostics(fit.errors())));
  REQUIRE(fit->samples.size() == 10);
  for (const auto& s : fit->samples) CHECK(s.status == "ok");
  // Highest: 16 MiB in 831.3 µs x 7/8 = 17.66 GB/s; never exceeded.
  CHECK(diagnostics.peak_busbw_bytes_per_s == doctest::Approx(16777216 / 831.3e-6 * 0.875));
  CHECK(fit->busbw_bytes_per_s <= diagnostics.peak_busbw_bytes_per_s);
}

TEST_CASE("a paste that kept only its last rank line (coreweave/nccl-tests#43) gives 72 ranks") {
  // GB200 NVL72, one rack: all_reduce_perf -b 512M -e 8G -f 2 -g 1 on 18 nodes x 4 GPUs; the
  // paste starts at "# Rank 71" and has the footer.
  NcclTestsLog log = parse_fixture("coreweave_nccl_tests_pr43.txt");
  REQUIRE(log.rows.size() == 5);
  CHECK(log.ranks == 72);
  CHECK(log.nodes == 0);
  CHECK(log.gpu == "NVIDIA Graphics Device");
  REQUIRE(log.notes.size() == 2);
  CHECK(log.notes[0].find("coreweave_nccl_tests_pr43.txt:6: no '# nThread … nGpus …' header") !=
        std::string::npos);
  CHECK(log.notes[1].find("coreweave_nccl_tests_pr43.txt: the rank lines name rank 71 but list "
                          "1: taking 72 ranks; the 1 listed host(s) are only some of the nodes "
                          "(pass --nodes)") != std::string::npos);
  ImportOptions options;
  options.collective = "all_reduce";
  AlphaBetaFit diagnostics;
  auto fit = to_collective_fit(log, options, &diagnostics);
  REQUIRE_MESSAGE(fit.ok(), (fit.ok() ? "" : format_diagnostics(fit.errors())));
  CHECK(fit->group_size == 72);
  for (const auto& sample : fit->samples) CHECK(sample.status == "ok");  // busbw = algbw·2·71/72
  // Highest: 4 GiB in 10,094 µs x 2·71/72 = 839.17 GB/s; the fit never exceeds it.
  CHECK(diagnostics.peak_busbw_bytes_per_s ==
        doctest::Approx(4294967296.0 / 10094e-6 * 2 * 71 / 72));
  CHECK(fit->busbw_bytes_per_s <= diagnostics.peak_busbw_bytes_per_s);
}

TEST_CASE("11-column rows without redop (nccl#644, nccl#340) import") {
  NcclTestsLog log = parse_fixture("nccl_issue644_all_gather.txt");
  CHECK_FALSE(log.has_redop);
  REQUIRE(log.rows.size() == 13);  // the 14th is cut mid-row
  CHECK(log.rows[0].redop == "");
  CHECK(log.rows[0].out_of_place.time_us == 52.01);
  CHECK(log.rows[0].in_place.time_us == 50.09);
  ImportOptions options;
  options.ranks = 8;
  auto fit = to_collective_fit(log, options);
  REQUIRE_MESSAGE(fit.ok(), (fit.ok() ? "" : format_diagnostics(fit.errors())));
  CHECK(fit->collective == "all_gather");  // from the file name

  // 2020 logs printed all_gather's algbw already scaled by (n−1)/n: 65,536 B / 16.57 µs = 3.96
  // GB/s, printed 1.98 = busbw. busbw is still checked.
  options.ranks = 2;
  NcclTestsLog old = parse_fixture("nccl_issue340_all_gather.txt");
  auto old_fit = to_collective_fit(old, options);
  REQUIRE_MESSAGE(old_fit.ok(), (old_fit.ok() ? "" : format_diagnostics(old_fit.errors())));
  CHECK(old_fit->samples[0].busbw_bytes_per_s == doctest::Approx(65536 / 16.57e-6 * 0.5));
  options.ranks = 4;  // factor 3/4: the printed busbw 1.98 disagrees
  auto wrong = to_collective_fit(old, options);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.errors()[0].where.line == 1);
  CHECK(wrong.errors()[0].rule.find("pass --collective / --ranks") != std::string::npos);
}

TEST_CASE("13-column rows with root 0 and max-error floats (nccl#340 broadcast)") {
  NcclTestsLog log = parse_fixture("nccl_issue340_broadcast.txt");
  REQUIRE(log.rows.size() == 12);
  CHECK(log.rows[0].root == 0);
  ImportOptions options;
  options.ranks = 2;
  auto fit = to_collective_fit(log, options);
  REQUIRE_MESSAGE(fit.ok(), (fit.ok() ? "" : format_diagnostics(fit.errors())));
  CHECK(fit->collective == "broadcast");
  for (const auto& s : fit->samples) CHECK(s.status == "ok");  // "0e+00" is not a count
}

TEST_CASE("a row cut in the middle of a log is still an error") {
  CHECK(first_error_line(edited_log(
            "    27.19   77.13  134.98       0    27.46   76.37  133.65       0", "    27.19")) ==
        "t.txt:32:1: error: data row has 6 fields; nccl-tests rows have 11, 12 or 13 (20 or 21 "
        "with -I 1): truncated or not an nccl-tests log");
}

TEST_CASE("imported profiles carry each log's notes and each fit's range and residuals") {
  ImportOptions options;
  options.collective = "all_reduce";
  options.ranks = 2;
  auto p = import_nccl_tests({fixture("nccl_tests_issue232.txt")}, options);
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : format_diagnostics(p.errors())));
  REQUIRE(p->notes.size() == 4);
  CHECK(p->notes[3].find("nccl_tests_issue232.txt: all_reduce x2 (nvlink): fit within ±10% "
                         "from ") != std::string::npos);
  CHECK(p->notes[3].find("; busbw capped at the measured peak 41.31 GB/s (unconstrained fit ") !=
        std::string::npos);
}

}  // namespace
}  // namespace meshplan::calibrate
