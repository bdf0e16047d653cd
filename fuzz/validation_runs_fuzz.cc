// libFuzzer target: published-run files for `meshplan validate` (checks/validation.cc). The
// reader takes a path, so the input is written to a file of this process's own first.
#include "checks/validation.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const meshplan::fuzz::InputFile file("validation", meshplan::fuzz::as_text(data, size));
  meshplan::fuzz::render(meshplan::load_published_runs(file.path()));
  return 0;
}
