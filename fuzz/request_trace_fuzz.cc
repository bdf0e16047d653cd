// libFuzzer target: serve --requests-file CSV traces (serving/request_trace.cc), then the
// lengths and arrivals a replay takes from a parsed trace.
#include <memory>

#include "fuzz/fuzz_input.h"
#include "serving/request_lengths.h"
#include "serving/request_replay.h"
#include "serving/request_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = meshplan::fuzz::as_text(data, size);
  const meshplan::Result<meshplan::serving::RequestTrace> r =
      meshplan::serving::parse_request_trace(text, "trace.csv");
  meshplan::fuzz::render(r);
  if (!r.ok()) return 0;
  meshplan::serving::Workload w;
  w.trace =
      std::make_shared<const std::vector<meshplan::serving::TracedRequest>>(r.value().requests);
  w.load =
      r.value().timed ? meshplan::serving::LoadKind::trace : meshplan::serving::LoadKind::offline;
  const int64_t count = meshplan::serving::replay_request_count(w);
  (void)meshplan::serving::initial_arrivals(w, count);
  (void)meshplan::serving::longest_sequence(meshplan::serving::request_lengths(w, count));
  return 0;
}
