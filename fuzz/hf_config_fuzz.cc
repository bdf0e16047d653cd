// libFuzzer target: Hugging Face config.json text (core/hf_config.cc, core/json_input.cc).
#include "core/model_spec.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meshplan::fuzz::render(
      meshplan::parse_hf_config(meshplan::fuzz::as_text(data, size), "config.json"));
  return 0;
}
