// libFuzzer target: serve --layout strings (serving/serving_layout_parse.cc), then the serving
// layout rules (check_serving_layout) against a small model on one 8-GPU node, and printing the
// layout back in both forms.
#include "fuzz/fuzz_input.h"
#include "serving/serving_layout_parse.h"
#include "serving/serving_plan.h"

namespace {

meshplan::serving::ServingProblem small_problem() {
  meshplan::serving::ServingProblem p;
  meshplan::ModelSpec& m = p.model;
  m.name = "fuzz";
  m.layers = 32, m.hidden = 4096, m.heads = 32, m.kv_heads = 8, m.head_dim = 128;
  m.ffn_hidden = 14336, m.vocab = 128256;
  m.mlp = meshplan::MlpKind::swiglu;
  meshplan::MoeSpec moe;
  moe.experts = 8, moe.top_k = 2, moe.expert_ffn_hidden = 14336;
  m.moe = moe;
  p.cluster.name = "fuzz";
  p.cluster.nodes = 1;
  p.cluster.gpus_per_node = 8;
  p.gpus = 8;
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = meshplan::fuzz::as_text(data, size);
  meshplan::Result<meshplan::serving::ServingLayout> r =
      meshplan::serving::parse_serving_layout(text);
  meshplan::fuzz::render(r);
  if (!r.ok()) return 0;
  static const meshplan::serving::ServingProblem problem = small_problem();
  const std::vector<meshplan::Diagnostic> errors =
      meshplan::serving::check_serving_layout(problem, r.value());
  (void)meshplan::format_diagnostics(errors);
  (void)meshplan::serving::layout_text(r.value());
  (void)meshplan::serving::short_text(r.value());
  return 0;
}
