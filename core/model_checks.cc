#include "core/model_checks.h"

#include <fmt/format.h>

#include <vector>

#include "core/layer_geometry.h"

namespace meshplan {
namespace {

double linear_params(const std::vector<LinearMap>& maps) {
  double n = 0;
  for (const LinearMap& map : maps)
    n += static_cast<double>(map.copies) *
         (static_cast<double>(map.in) * static_cast<double>(map.out) +
          (map.bias ? static_cast<double>(map.out) : 0.0));
  return n;
}

}  // namespace

double parameter_estimate(const ModelSpec& m) {
  const double dense = linear_params(layer_linears(m, 0));
  const double moe = m.moe ? linear_params(layer_linears(m, m.first_moe_layer())) : 0.0;
  return static_cast<double>(m.dense_layers()) * dense + static_cast<double>(m.moe_layers()) * moe +
         linear_params({embedding_linear(m), lm_head_linear(m)});
}

void complete_and_check_model(ModelSpec& m, const FieldDiagnostic& at) {
  std::vector<Diagnostic> errors;
  auto fail = [&](const std::string& field, const std::string& rule) {
    errors.push_back(at(field, rule));
  };
  if (m.head_dim == 0) {
    if (m.hidden % m.heads != 0) {
      fail("heads", fmt::format("must divide hidden ({}) when head_dim is not given", m.hidden));
    }
    m.head_dim = m.hidden / m.heads;
  }
  if (m.heads % m.kv_heads != 0) {
    fail("kv_heads", fmt::format("must divide heads ({}) (grouped-query attention)", m.heads));
  }
  if (m.ffn_hidden == 0) {
    if (m.mlp == MlpKind::swiglu && m.dense_layers() > 0) {
      fail("ffn_hidden", "is required when mlp is swiglu");
    }
    m.ffn_hidden = m.mlp == MlpKind::swiglu ? 0 : 4 * m.hidden;
  }
  if (m.moe && m.moe->first_dense_layers >= m.layers) {
    fail("moe.first_dense_layers", fmt::format("must be less than layers ({})", m.layers));
  } else if (m.moe && m.first_moe_layer() >= m.layers) {
    fail("moe.layer_step",
         fmt::format("leaves no MoE layer: first_dense_layers ({}) + layer_step must not exceed "
                     "layers ({})",
                     m.moe->first_dense_layers, m.layers));
  }
  if (m.window && m.window->global_every > m.layers) {
    fail("window.global_every",
         fmt::format("must not exceed layers ({}): no layer would attend globally; 0 makes every "
                     "layer local",
                     m.layers));
  }
  if (m.sparse_attention && (!m.mla || m.mla->q_lora_rank == 0)) {
    fail("sparse_attention",
         "needs multi-head latent attention with a query latent (mla.q_lora_rank > 0): the "
         "indexer's queries are projected from it (DeepSeek-V3.2)");
  } else if (m.sparse_attention && m.attention != AttentionKind::flash) {
    fail("sparse_attention", "needs attention: flash (the sparse kernels are fused)");
  } else if (m.sparse_attention && m.window) {
    fail("sparse_attention",
         "cannot be combined with a window: sparse attention already chooses each query's keys");
  }
  if (m.mxfp4_experts && !m.moe) {
    fail("mxfp4_experts", "needs routed experts (a moe section): MXFP4 holds the experts only");
  }
  if (m.position_embedding == PositionEmbedding::learned && m.max_positions == 0) {
    fail("max_positions", "is required when position_embedding is learned");
  } else if (m.position_embedding == PositionEmbedding::learned &&
             m.context_tokens > m.max_positions) {
    fail("context_tokens",
         fmt::format("must be at most max_positions ({}): the learned position table has no row "
                     "for a later position",
                     m.max_positions));
  } else if (m.position_embedding == PositionEmbedding::learned && m.context_tokens == 0) {
    m.context_tokens = m.max_positions;
  }
  if (errors.empty() && parameter_estimate(m) > kMaxParameters) {
    fail("layers", fmt::format("the model has about {:.3g} parameters; at most {:.0e} are "
                               "supported (check the widths and counts)",
                               parameter_estimate(m), kMaxParameters));
  }
  if (!errors.empty()) throw InputError{errors};
}

}  // namespace meshplan
