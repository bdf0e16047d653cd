#include "calibrate/model_gemm_shapes.h"

#include <algorithm>
#include <string>

namespace meshplan::calibrate {
namespace {

struct Linear {
  const char* name;
  int64_t in, out;  // per-rank widths
};

void add_variants(std::vector<GemmShape>& out, const Linear& l, int64_t tokens) {
  std::string name = l.name;
  const GemmShape variants[] = {{tokens, l.out, l.in, "fwd " + name},
                                {tokens, l.in, l.out, "dgrad " + name},
                                {l.in, l.out, tokens, "wgrad " + name}};
  for (const auto& s : variants) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const GemmShape& o) {
      return o.m == s.m && o.n == s.n && o.k == s.k;
    });
    if (!seen && s.m > 0 && s.n > 0 && s.k > 0) out.push_back(s);
  }
}

}  // namespace

std::vector<GemmShape> model_gemm_shapes(const ModelSpec& model, int64_t tp, int64_t tokens) {
  const int64_t h = model.hidden;
  const int64_t head_dim = model.head_dim ? model.head_dim : h / std::max<int64_t>(model.heads, 1);
  const int64_t kv_heads = model.kv_heads ? model.kv_heads : model.heads;
  const int64_t q = model.heads * head_dim, kv = kv_heads * head_dim;
  int64_t ffn = model.ffn_hidden ? model.ffn_hidden : 4 * h;
  if (model.moe && model.dense_layers() == 0) ffn = model.moe->expert_ffn_hidden;
  const int64_t up = (model.mlp == MlpKind::swiglu ? 2 : 1) * ffn;
  std::vector<GemmShape> out;
  add_variants(out, {"qkv", h, (q + 2 * kv) / tp}, tokens);
  add_variants(out, {"attn_out", q / tp, h}, tokens);
  add_variants(out, {"mlp_up", h, up / tp}, tokens);
  add_variants(out, {"mlp_down", ffn / tp, h}, tokens);
  add_variants(out, {"logits", h, model.vocab / tp}, tokens);
  return out;
}

}  // namespace meshplan::calibrate
