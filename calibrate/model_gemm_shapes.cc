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
  const GemmShape variants[] = {{tokens, width, in, "fwd " + name},
                                {tokens, in, width, "dgrad " + name},
                                {in, width, tokens, "wgrad " + name}};
  for (const auto& s : variants) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const GemmShape& o) {
      return o.m == s.m && o.n == s.n && o.k == s.k;
    });
    if (!seen && s.m > 0 && s.n > 0 && s.k > 0) out.push_back(s);
  }
}

}  // namespace

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
