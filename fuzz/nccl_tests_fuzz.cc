// libFuzzer target: nccl-tests output, text and -J JSON (calibrate/nccl_tests_*.cc). Both readers
// see every input; a log that parses is fitted too (calibrate/alpha_beta_fit.cc).
#include "calibrate/nccl_tests_import.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshplan::calibrate;
  const std::string text = meshplan::fuzz::as_text(data, size);
  meshplan::fuzz::render(parse_nccl_tests_json(text, "log.json"));
  auto log = parse_nccl_tests_text(text, "log.txt");
  meshplan::fuzz::render(log);
  if (log.ok()) meshplan::fuzz::render(to_collective_fit(log.value(), ImportOptions{}));
  return 0;
}
