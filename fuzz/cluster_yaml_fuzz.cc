// libFuzzer target: topologies/*.yaml text (core/cluster_yaml.cc).
#include "core/cluster_spec.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meshplan::fuzz::render(
      meshplan::parse_cluster_yaml(meshplan::fuzz::as_text(data, size), "c.yaml"));
  return 0;
}
