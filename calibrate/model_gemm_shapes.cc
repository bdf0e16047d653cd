#include "calibrate/model_gemm_shapes.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/layer_geometry.h"

namespace meshplan::calibrate {
namespace {

// The forward, input-gradient and weight-gradient shapes of one rank GEMM (core/layer_geometry.h).
// `bf16_only`: the LM head's and the router's (GemmShape::bf16_only).
void add_variants(std::vector<GemmShape>& out, const RankGemm& g, const std::string& name,
                  bool bf16_only = false) {
  const auto rows = std::max<int64_t>(1, std::llround(g.rows));
  const auto in = static_cast<int64_t>(g.in), width = static_cast<int64_t>(g.out);
  std::vector<GemmShape> variants = {{rows, width, in, "fwd " + name, bf16_only},
                                     {rows, in, width, "dgrad " + name, bf16_only},
                                     {in, width, rows, "wgrad " + name, bf16_only}};
  std::erase_if(variants, [](const GemmShape& s) { return s.m <= 0 || s.n <= 0 || s.k <= 0; });
  append_unique_shapes(out, variants);
}

void add_maps(std::vector<GemmShape>& out, const std::vector<LinearMap>& maps, int64_t tp,
              int64_t tokens) {
  for (const LinearMap& map : maps)
    add_variants(out, rank_gemm(map, tp, static_cast<double>(tokens)), map.name);
}

}  // namespace

void append_unique_shapes(std::vector<GemmShape>& out, const std::vector<GemmShape>& more) {
  for (const GemmShape& s : more) {
    auto seen = std::find_if(out.begin(), out.end(), [&](const GemmShape& o) {
      return o.m == s.m && o.n == s.n && o.k == s.k;
    });
    if (seen == out.end())
      out.push_back(s);
    else
      seen->bf16_only = seen->bf16_only && s.bf16_only;  // measured wherever either needs it
  }
}

std::vector<GemmShape> model_gemm_sweep(const std::vector<ModelSpec>& models,
                                        const std::vector<int64_t>& tps,
                                        const std::vector<int64_t>& tokens,
                                        const std::vector<int64_t>& eps) {
  std::vector<GemmShape> out;
  for (const ModelSpec& model : models)
    for (int64_t tp : tps)
      for (int64_t t : tokens) append_unique_shapes(out, model_gemm_shapes(model, tp, t, eps));
  return out;
}

std::vector<GemmShape> model_gemm_shapes(const ModelSpec& model, int64_t tp, int64_t tokens,
                                         const std::vector<int64_t>& eps) {
  std::vector<GemmShape> out;
  add_maps(out, attention_linears(model), tp, tokens);
  if (model.dense_layers() > 0) add_maps(out, mlp_linears(model, model.ffn_hidden), tp, tokens);
  if (model.moe) {
    const MoeSpec& e = *model.moe;
    for (const LinearMap& map : ffn_linears(model, model.first_moe_layer())) {
      if (map.role != LinearRole::expert) {
        add_variants(out, rank_gemm(map, tp, static_cast<double>(tokens)),
                     map.role == LinearRole::shared ? std::string("shared ") + map.name : map.name,
                     map.stays_bf16());
        continue;
      }
      for (int64_t ep : eps) {
        if (e.experts % ep != 0) continue;
        const double rows = expert_rows(e, static_cast<double>(tokens), ep);
        add_variants(out, rank_gemm(map, tp, static_cast<double>(tokens), rows, 1),
                     "expert " + std::string(map.name) + " ep" + std::to_string(ep));
      }
    }
  }
  const LinearMap head = lm_head_linear(model);
  add_variants(out, rank_gemm(head, tp, static_cast<double>(tokens)), head.name, true);
  return out;
}

}  // namespace meshplan::calibrate
