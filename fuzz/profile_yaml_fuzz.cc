// libFuzzer target: calibration profile text (core/profile.cc). A profile that parses is
// rendered again, so the writer sees every value the reader accepts, and compared with itself
// and with an empty profile (core/profile_comparison.cc), so the comparison sees them too.
#include "core/profile.h"
#include "core/profile_comparison.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = meshplan::parse_profile_yaml(meshplan::fuzz::as_text(data, size), "p.yaml");
  meshplan::fuzz::render(r);
  if (!r.ok()) return 0;
  (void)meshplan::render_profile_yaml(r.value());
  (void)meshplan::compare_profiles(r.value(), r.value());
  (void)meshplan::compare_profiles(meshplan::CalibrationProfile{}, r.value());
  return 0;
}
