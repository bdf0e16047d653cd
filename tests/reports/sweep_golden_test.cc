// End to end: `meshplan sweep` for a small pinned scenario (table, CSV and the Markdown report
// with its charts) and the README's example, compared byte for byte; every SVG well-formed and
// rendering at its declared size. MESHPLAN_UPDATE_GOLDEN=1 rewrites the expected files.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/reports/golden_folder.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using namespace meshplan::test;

namespace {

// llama3-8b from 8 to 1,024 H100 on 64 DGX nodes (1,024 extends the cluster), plus 40 GPUs,
// which no layout splits (divisibility), priced at $2 per GPU-hour for 1 T tokens.
const char* kSmall =
    "--model models/llama3-8b.yaml --cluster topologies/dgx-h100-64n.yaml --global-batch 64 "
    "--gpus 8..1024,40 --tokens 1e12 --gpu-hour-cost 2";
const char* kSmallGolden = "tests/reports/golden/sweep-llama3-8b";
// The README's "Scale sweeps" example.
const char* kReadme =
    "--model models/llama3-70b.yaml --cluster topologies/dgx-h100-64n.yaml --gpus 64..8192 "
    "--tokens 15e12 --gpu-hour-cost 2";
const char* kReadmeExample = "reports/examples/sweep-llama3-70b-h100";

// Runs `meshplan sweep <args> <extra>`; returns stdout.
std::string sweep_stdout(const std::string& args, const std::string& extra) {
  const fs::path log = fresh_dir("sweep-log");
  REQUIRE(run_meshplan("sweep " + args + " " + extra, log) == 0);
  std::string out = read_file(log / "stdout.txt");
  fs::remove_all(log);
  return out;
}

// The Markdown report of `args` in `folder` (relative to the source root), byte for byte;
// `extra` files (name → content) are compared beside it.
void check_folder(const std::string& args, const std::string& folder,
                  const std::vector<std::pair<std::string, std::string>>& extra) {
  CAPTURE(folder);
  const fs::path out = fresh_dir(fs::path(folder).filename().string());
  const fs::path log = fresh_dir(fs::path(folder).filename().string() + "-log");
  REQUIRE(run_meshplan("sweep " + args + " --threads 2 --format md --out '" + out.string() + "'",
                       log) == 0);
  for (const auto& [name, content] : extra) write_file(out / name, content);
  const fs::path expected = fs::path(MESHPLAN_SOURCE_DIR) / folder;
  check_against_golden(out, expected);
  check_svgs(out);
  fs::remove_all(out);
  fs::remove_all(log);
}

}  // namespace

TEST_CASE("sweep: a small sweep's table, CSV and report are pinned byte for byte") {
  check_folder(kSmall, kSmallGolden,
               {{"table.txt", sweep_stdout(kSmall, "--threads 1")},
                {"sweep.csv", sweep_stdout(kSmall, "--threads 1 --format csv")}});
}

TEST_CASE("sweep: the README example in reports/examples is what the code generates") {
  check_folder(kReadme, kReadmeExample, {{"table.txt", sweep_stdout(kReadme, "--threads 2")}});
}

TEST_CASE("sweep: README's Scale sweeps block is the example's table") {
  // The block follows the command line in README.md; MESHPLAN_UPDATE_GOLDEN=1 rewrites it.
  const fs::path readme = fs::path(MESHPLAN_SOURCE_DIR) / "README.md";
  const std::string table = read_file(fs::path(MESHPLAN_SOURCE_DIR) / kReadmeExample / "table.txt");
  std::string text = read_file(readme);
  const std::string command = std::string("$ meshplan sweep ") + kReadme + "\n";
  const size_t start = text.find(command);
  REQUIRE(start != std::string::npos);
  const size_t body = start + command.size();
  const size_t end = text.find("```", body);
  REQUIRE(end != std::string::npos);
  if (update_golden()) {
    text.replace(body, end - body, table);
    write_file(readme, text);
  }
  CHECK(text.substr(body, end - body) == table);
}

TEST_CASE("report --sweep adds a Scale section that embeds the sweep charts") {
  const fs::path out = fresh_dir("report-sweep"), log = fresh_dir("report-sweep-log");
  REQUIRE(run_meshplan("report --model models/llama3-8b.yaml --cluster topologies/dgx-h100-1n.yaml "
                       "--global-batch 64 --top 1 --sample 5 --sweep 2..8 --tokens 1e12 --out '" +
                           out.string() + "'",
                       log) == 0);
  const std::string md = read_file(out / "report.md");
  CHECK(md.find("## Scale") != std::string::npos);
  CHECK(md.find("![Throughput](sweep_throughput.svg)") != std::string::npos);
  CHECK(md.find("![Time to train](sweep_time_to_train.svg)") != std::string::npos);
  CHECK(fs::exists(out / "sweep_throughput.svg"));
  CHECK(fs::exists(out / "sweep_mfu.svg"));
  check_svgs(out);
  fs::remove_all(out);
  fs::remove_all(log);
}
