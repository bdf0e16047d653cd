// libFuzzer target: regress scenario and baseline files (checks/regression_scenario.cc,
// checks/regression_baseline.cc). The scenario reader takes a path, so the input is written to
// a file of this process's own first.
#include "checks/regression_baseline.h"
#include "checks/regression_scenario.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = meshplan::fuzz::as_text(data, size);
  meshplan::fuzz::render(meshplan::parse_baseline(text, "baseline.yaml"));
  const meshplan::fuzz::InputFile file("regress", text);
  meshplan::fuzz::render(meshplan::load_scenarios(file.path()));
  return 0;
}
