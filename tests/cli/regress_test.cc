// meshplan regress end to end: exit codes (0 pass, 1 regression, 2 bad input), the table that
// names a regression, --update's round trip, and byte-identical output across runs and thread
// counts. Runs the built executable (MESHPLAN_BINARY) on files in a temporary directory.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_meshplan.h"

namespace fs = std::filesystem;
using meshplan::testing::Run;

namespace {

std::string read(const fs::path& p) { return meshplan::testing::read_file(p); }

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// A temporary directory holding a two-scenario file rooted at the repository.
class Fixture {
 public:
  Fixture() {
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("meshplan-regress-test-" + std::to_string(::getpid()) +
                                        "-" + std::to_string(counter++));
    fs::create_directories(dir_);
    write(scenarios(), std::string("root: ") + MESHPLAN_SOURCE_DIR + "\nscenarios:\n" +
                           "  - name: dense.best\n    model: models/llama3-8b.yaml\n"
                           "    cluster: topologies/dgx-h100-1n.yaml\n    global_batch: 64\n"
                           "    layout: best\n"
                           "  - name: moe.fixed\n    model: models/mixtral-8x7b.yaml\n"
                           "    cluster: topologies/dgx-h100-1n.yaml\n    global_batch: 64\n"
                           "    layout: \"tp=1,ep=8,zero=3,recompute=full\"\n");
  }
  ~Fixture() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path scenarios() const { return dir_ / "scenarios.yaml"; }
  fs::path baseline() const { return dir_ / "baseline.yaml"; }

  // meshplan regress with the fixture's files and `extra` arguments.
  Run regress(const std::string& extra) const {
    return meshplan::testing::run_meshplan("regress --scenarios '" + scenarios().string() +
                                           "' --baseline '" + baseline().string() + "' " + extra);
  }

 private:
  fs::path dir_;
};

}  // namespace

TEST_CASE("--update writes a baseline that then passes, and round-trips byte for byte") {
  Fixture f;
  Run created = f.regress("--update --threads 2");
  REQUIRE(created.rc == 0);
  CHECK(created.out.find("| dense.best |") != std::string::npos);
  CHECK(created.out.find("added") != std::string::npos);
  CHECK(created.out.find("Baseline updated: 2 scenarios, 2 changed.") != std::string::npos);
  std::string first = read(f.baseline());
  CHECK(first.find("  moe.fixed:\n    layout: \"tp=1,pp=1,dp=8,cp=1,ep=8,zero=3,") !=
        std::string::npos);

  Run check = f.regress("");
  CHECK(check.rc == 0);
  CHECK(check.out.find("PASS: 2 scenarios, 0 failed") != std::string::npos);
  CHECK(check.err.empty());

  Run again = f.regress("--update");
  CHECK(again.rc == 0);
  CHECK(again.out.find("Baseline updated: 2 scenarios, 0 changed.") != std::string::npos);
  CHECK(read(f.baseline()) == first);
  CHECK_FALSE(fs::exists(f.baseline().string() + ".tmp." + std::to_string(::getpid())));
}

TEST_CASE("an MFU change beyond the tolerance fails with exit 1 and a table naming it") {
  Fixture f;
  REQUIRE(f.regress("--update").rc == 0);
  std::string base = read(f.baseline());
  size_t at = base.find("mfu_percent: ", base.find("moe.fixed:"));
  REQUIRE(at != std::string::npos);
  at += std::string("mfu_percent: ").size();
  double mfu = std::stod(base.substr(at));
  auto with_mfu = [&](double v) {
    std::string b = base;
    b.replace(at, base.find('\n', at) - at, std::to_string(v));
    write(f.baseline(), b);
  };

  with_mfu(mfu + 0.3);
  Run within = f.regress("");
  CHECK(within.rc == 0);
  CHECK(within.out.find("| -0.300 pp |") != std::string::npos);

  with_mfu(mfu + 0.8);
  Run beyond = f.regress("");
  CHECK(beyond.rc == 1);
  CHECK(beyond.out.find("| moe.fixed |") != std::string::npos);
  CHECK(beyond.out.find("| -0.800 pp |") != std::string::npos);
  CHECK(beyond.out.find("**FAIL**: MFU moved |") != std::string::npos);
  CHECK(beyond.out.find("FAIL: 2 scenarios, 1 failed") != std::string::npos);
  CHECK(f.regress("--tolerance 1").rc == 0);

  Run json = f.regress("--format json");
  CHECK(json.rc == 1);
  CHECK(json.out.find("\"passed\": false") != std::string::npos);
  CHECK(json.out.find("\"mfu_moved\"") != std::string::npos);
}

TEST_CASE("a changed layout, a scenario that no longer fits, or a stale baseline fails") {
  Fixture f;
  REQUIRE(f.regress("--update").rc == 0);
  std::string base = read(f.baseline());

  write(f.baseline(), replace(base, "ep=8,zero=3", "ep=4,zero=3"));
  Run layout = f.regress("");
  CHECK(layout.rc == 1);
  CHECK(layout.out.find("**FAIL**: layout changed") != std::string::npos);
  CHECK(layout.out.find("Layout changes:\n\n- `moe.fixed`: `tp=1,pp=1,dp=8,cp=1,ep=4,") !=
        std::string::npos);

  write(f.scenarios(), replace(read(f.scenarios()), "zero=3,recompute=full", "zero=0"));
  Run no_fit = f.regress("");
  CHECK(no_fit.rc == 1);
  CHECK(no_fit.out.find("no longer fits") != std::string::npos);
  CHECK(no_fit.out.find("(does not fit)") != std::string::npos);

  write(f.baseline(), replace(base, "  moe.fixed:", "  moe.renamed:"));
  Run stale = f.regress("");
  CHECK(stale.rc == 1);
  CHECK(stale.out.find("not in baseline") != std::string::npos);
  CHECK(stale.out.find("| moe.renamed |") != std::string::npos);
  CHECK(stale.out.find("not in scenarios") != std::string::npos);
}

TEST_CASE("a missing or malformed baseline is exit 2 with a clear message, never a pass") {
  Fixture f;
  Run missing = f.regress("");
  CHECK(missing.rc == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err.find("baseline.yaml: error: cannot open file") != std::string::npos);
  CHECK(missing.err.find("create it with --update") != std::string::npos);

  write(f.baseline(), "version: 1\nscenarios:\n  dense.best: [1, 2\n");
  Run broken = f.regress("");
  CHECK(broken.rc == 2);
  CHECK(broken.err.find("baseline.yaml:") != std::string::npos);

  write(f.baseline(), "version: 1\nscenarios:\n  dense.best:\n    layout: x\n    fits: maybe\n");
  Run typed = f.regress("--update");  // --update does not discard a baseline it cannot read
  CHECK(typed.rc == 2);
  CHECK(typed.err.find("baseline.yaml:5:11: error: field 'scenarios.dense.best.fits'") !=
        std::string::npos);

  write(f.baseline(), "");
  CHECK(f.regress("").rc == 2);
}

TEST_CASE("bad scenario files are exit 2 with file:line:col") {
  Fixture f;
  write(f.scenarios(), replace(read(f.scenarios()), "tp=1,ep=8", "tp=1,ep=9"));
  Run r = f.regress("--update");
  CHECK(r.rc == 2);
  CHECK(r.err.find("scenarios.yaml:12:13: error: field 'scenarios[1].layout.ep'") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(f.baseline()));
}

TEST_CASE("output is byte-identical across runs and thread counts") {
  Fixture f;
  REQUIRE(f.regress("--update --threads 1").rc == 0);
  for (const char* format : {"md", "json"}) {
    std::string fmt = std::string("--format ") + format;
    Run one = f.regress(fmt + " --threads 1");
    Run two = f.regress(fmt + " --threads 2");
    Run two_again = f.regress(fmt + " --threads 2");
    CHECK(one.rc == 0);
    CHECK(one.out == two.out);
    CHECK(two.out == two_again.out);
    CHECK(one.out.find(fs::temp_directory_path().string()) == std::string::npos);
  }
}
