// libFuzzer target: models/*.yaml text (core/model_yaml.cc).
#include "core/model_spec.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meshplan::fuzz::render(meshplan::parse_model_yaml(meshplan::fuzz::as_text(data, size), "f.yaml"));
  return 0;
}
