// libFuzzer target: calibration profile text (core/profile.cc). A profile that parses is
// rendered again, so the writer sees every value the reader accepts.
#include "core/profile.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = meshplan::parse_profile_yaml(meshplan::fuzz::as_text(data, size), "p.yaml");
  meshplan::fuzz::render(r);
  if (r.ok()) (void)meshplan::render_profile_yaml(r.value());
  return 0;
}
