// End to end: `meshplan serve --out` for a small pinned search and the README's example, compared
// byte for byte; every SVG well formed and rendering at its declared size.
// MESHPLAN_UPDATE_GOLDEN=1 rewrites the expected files.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/reports/golden_folder.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using namespace meshplan::test;

namespace {

// Llama 3.1 8B on up to two H100s, short requests, 16 users, both SLOs.
const char* kSmall =
    "--model models/llama3-8b.yaml --cluster topologies/dgx-h100-1n.yaml --gpus 2 --isl 256 "
    "--osl 64 --concurrency 16 --slo-ttft 0.5 --slo-tpot 0.02 --top 3";
const char* kSmallGolden = "tests/reports/golden/serve-llama3-8b";
// The README's report example: the serving question of issue 17 on one DGX H100.
const char* kReadme =
    "--model models/llama3-70b.yaml --cluster topologies/dgx-h100-1n.yaml --isl 2000 --osl 500 "
    "--weights fp8 --kv fp8 --concurrency 64 --slo-ttft 1 --slo-tpot 0.0333 --top 5";
const char* kReadmeExample = "reports/examples/serve-llama3-70b-h100";

void check_folder(const std::string& args, const std::string& folder) {
  CAPTURE(folder);
  const fs::path out = fresh_dir(fs::path(folder).filename().string());
  const fs::path log = fresh_dir(fs::path(folder).filename().string() + "-log");
  REQUIRE(run_meshplan("serve " + args + " --format md --out '" + out.string() + "'", log) == 0);
  // stdout lists the files written, serve.md first.
  CHECK(read_file(log / "stdout.txt").find((out / "serve.md").string() + "\n") == 0);
  check_against_golden(out, fs::path(MESHPLAN_SOURCE_DIR) / folder);
  check_svgs(out);
  fs::remove_all(out);
  fs::remove_all(log);
}

}  // namespace

TEST_CASE("serve --out: a small search's report and charts are pinned byte for byte") {
  check_folder(kSmall, kSmallGolden);
}

TEST_CASE("serve --out: the README example in reports/examples is what the code generates") {
  check_folder(kReadme, kReadmeExample);
}
