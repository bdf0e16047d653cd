// write_file_atomically: replaces the whole file, and on failure says why without leaving a
// temporary file behind.
#include "core/atomic_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace meshplan;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("atomic file: writes, then replaces the whole file") {
  const fs::path dir =
      fs::temp_directory_path() / ("meshplan-atomic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "baseline.yaml").string();
  CHECK_FALSE(write_file_atomically(path, "first, longer text\n").has_value());
  CHECK(read(path) == "first, longer text\n");
  CHECK_FALSE(write_file_atomically(path, "second\n").has_value());
  CHECK(read(path) == "second\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}

TEST_CASE("atomic file: a folder that does not exist is a diagnostic at the path") {
  const std::string path = "/nonexistent-meshplan-folder/baseline.yaml";
  const std::optional<Diagnostic> error = write_file_atomically(path, "text\n");
  REQUIRE(error.has_value());
  CHECK(error->where.file == path);
  CHECK(error->rule.rfind("cannot write: ", 0) == 0);
}
