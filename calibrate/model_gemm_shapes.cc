#include "calibrate/model_gemm_shapes.h"

#include <algorithm>
#include <string>

#include "core/layer_geometry.h"

namespace meshplan::calibrate {
namespace {

void add_variants(std::vector<GemmShape>& out, const LinearMap& map, int64_t tp, int64_t tokens) {
  const std::string name = map.name;
  const auto in = static_cast<int64_t>(map.rank_in(tp));
  const auto width = static_cast<int64_t>(map.rank_out(tp));
  std::vector<GemmShape> variants = {{tokens, width, in, "fwd " + name},
                                     {tokens, in, width, "dgrad " + name},
                                     {in, width, tokens, "wgrad " + name}};
  std::erase_if(variants, [](const GemmShape& s) { return s.m <= 0 || s.n <= 0 || s.k <= 0; });
  append_unique_shapes(out, variants);
}

}  // namespace

void append_unique_shapes(std::vector<GemmShape>& out, const std::vector<GemmShape>& more) {
  for (const GemmShape& s : more) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const GemmShape& o) {
      return o.m == s.m && o.n == s.n && o.k == s.k;
    });
    if (!seen) out.push_back(s);
  }
}

std::vector<GemmShape> model_gemm_sweep(const std::vector<ModelSpec>& models,
                                        const std::vector<int64_t>& tps,
                                        const std::vector<int64_t>& tokens) {
  std::vector<GemmShape> out;
  for (const ModelSpec& model : models)
    for (int64_t tp : tps)
      for (int64_t t : tokens) append_unique_shapes(out, model_gemm_shapes(model, tp, t));
  return out;
}

std::vector<GemmShape> model_gemm_shapes(const ModelSpec& model, int64_t tp, int64_t tokens) {
  // One dense layer's MLP; a model whose every layer is MoE gets one expert's.
  const int64_t ffn =
      model.moe && model.dense_layers() == 0 ? model.moe->expert_ffn_hidden : model.ffn_hidden;
  std::vector<GemmShape> out;
  for (const LinearMap& map : attention_linears(model)) add_variants(out, map, tp, tokens);
  for (const LinearMap& map : mlp_linears(model, ffn)) add_variants(out, map, tp, tokens);
  add_variants(out, lm_head_linear(model), tp, tokens);
  return out;
}

}  // namespace meshplan::calibrate
