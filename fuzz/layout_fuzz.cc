// libFuzzer target: --layout / --fix strings (core/layout_parse.cc), then the layout rules
// (core/layout_checks.cc) against a small model on 64 GPUs, and printing the layout back.
#include "core/layout.h"
#include "fuzz/fuzz_input.h"

namespace {

meshplan::ModelSpec small_model() {
  meshplan::ModelSpec m;
  m.name = "fuzz";
  m.layers = 32, m.hidden = 4096, m.heads = 32, m.kv_heads = 8, m.head_dim = 128;
  m.ffn_hidden = 14336, m.vocab = 128256;
  m.mlp = meshplan::MlpKind::swiglu;
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = meshplan::fuzz::as_text(data, size);
  meshplan::Result<meshplan::Layout> r = meshplan::parse_layout(text);
  meshplan::fuzz::render(r);
  if (!r.ok()) return 0;
  static const meshplan::ModelSpec model = small_model();
  meshplan::Layout layout = r.value();
  std::vector<meshplan::Diagnostic> errors =
      meshplan::check_layout(layout, model, 64, meshplan::TrainingSpec{});
  meshplan::locate_in_layout(errors, text);
  (void)meshplan::format_diagnostics(errors);
  (void)meshplan::to_string(layout);
  return 0;
}
