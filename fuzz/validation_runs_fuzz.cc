// libFuzzer target: published-run files for `meshplan validate` (checks/validation.cc). The
// reader takes a path, so the input is written to a file of this process's own first.
#include <unistd.h>

#include <fstream>

#include "checks/validation.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "/tmp/meshplan-validation-fuzz-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path, std::ios::binary) << meshplan::fuzz::as_text(data, size);
  meshplan::fuzz::render(meshplan::load_published_runs(path));
  return 0;
}
