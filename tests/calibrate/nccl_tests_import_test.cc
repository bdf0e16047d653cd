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
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(215e9).epsilon(0.01));
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
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(340e9).epsilon(0.01));
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
  CHECK(fit.busbw_bytes_per_s == doctest::Approx(300e9).epsilon(0.01));
  CHECK(fit.latency_s == doctest::Approx(25e-6).epsilon(0.01));
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

TEST_CASE("garbage, truncated rows, missing footers and truncated JSON name the line") {
  auto garbage = parse_nccl_tests(read_text_file(fixture("garbage.txt")), "garbage.txt");
  REQUIRE(!garbage.ok());
  CHECK(garbage.errors()[0].where.line == 3);  // "42 is not a log": a row before any header
  CHECK(garbage.errors()[0].rule.find("not an nccl-tests log") != std::string::npos);

  auto cut = parse_nccl_tests(read_text_file(fixture("all_reduce_truncated.txt")), "t.txt");
  REQUIRE(!cut.ok());
  CHECK(cut.errors()[0].where.line == 32);
  CHECK(cut.errors()[0].rule.find("has 6 fields") != std::string::npos);
  CHECK(format_diagnostics(cut.errors()).find("t.txt:32:1: error") != std::string::npos);

  auto nofoot = parse_nccl_tests(read_text_file(fixture("all_reduce_no_footer.txt")), "n.txt");
  REQUIRE(!nofoot.ok());
  CHECK(nofoot.errors()[0].where.line == 38);  // the last row
  CHECK(nofoot.errors()[0].rule.find("truncated") != std::string::npos);

  auto json = parse_nccl_tests(read_text_file(fixture("alltoall_truncated.json")), "a.json");
  REQUIRE(!json.ok());
  CHECK(json.errors()[0].where.line > 1);
  CHECK(json.errors()[0].rule ==
        "invalid JSON: syntax error while parsing value - invalid string: missing closing quote; "
        "last read: '\"NVIDIA'");

  auto empty = parse_nccl_tests("", "empty.txt");
  REQUIRE(!empty.ok());
  CHECK(empty.errors()[0].where.line == 1);
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

TEST_CASE("a 4,096-character rank line is read; longer NCCL INFO lines are skipped") {
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

}  // namespace
}  // namespace meshplan::calibrate
