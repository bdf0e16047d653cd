// Reads models/*.yaml (DESIGN.md §2) into a ModelSpec, then checks it (model_checks.cc).
#include "core/model_yaml.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/model_checks.h"
#include "core/model_limits.h"
#include "core/model_spec.h"
#include "core/yaml_node.h"

namespace meshplan {
namespace {

MlpKind mlp_kind(const std::string& s) {
  return s == "swiglu" ? MlpKind::swiglu : s == "relu" ? MlpKind::relu : MlpKind::gelu;
}

MoeSpec read_moe(const YamlNode& n) {
  n.expect_only_keys({"experts", "top_k", "expert_ffn_hidden", "shared_experts",
                      "first_dense_layers", "layer_step", "capacity_factor", "groups",
                      "group_limit", "router_score", "routed_scaling", "expert_bias",
                      "router_bias"});
  MoeSpec m;
  m.experts = n.child("experts").as_int(1, kMaxExperts);
  m.top_k = n.child("top_k").as_int(1, kMaxExperts);
  m.expert_ffn_hidden = n.child("expert_ffn_hidden").as_int(1, kMaxWidth);
  m.shared_experts = n.get_int("shared_experts", 0, 0, kMaxExperts);
  m.first_dense_layers = n.get_int("first_dense_layers", 0, 0, kMaxLayers);
  m.layer_step = n.get_int("layer_step", 1, 1, kMaxLayers);
  m.capacity_factor = n.get_double("capacity_factor", 1.0, 1.0, 1000.0);
  m.groups = n.get_int("groups", 1, 1, kMaxExperts);
  m.group_limit = n.get_int("group_limit", 0, 0, kMaxExperts);
  m.sigmoid_router = n.get_choice("router_score", "softmax", {"softmax", "sigmoid"}) == "sigmoid";
  m.routed_scaling = n.get_double("routed_scaling", 1.0, 1e-3, 1000.0);
  m.expert_bias = n.get_bool("expert_bias", false);
  m.router_bias = n.get_bool("router_bias", false);
  if (m.top_k > m.experts) {
    n.child("top_k").fail(fmt::format("must not exceed moe.experts ({})", m.experts));
  }
  if (m.experts % m.groups != 0)
    n.child("groups").fail(fmt::format("must divide moe.experts ({})", m.experts));
  if (m.group_limit > m.groups)
    n.child("group_limit").fail(fmt::format("must not exceed moe.groups ({})", m.groups));
  if (m.group_limit > 0 && m.group_limit * (m.experts / m.groups) < m.top_k)
    n.child("group_limit")
        .fail(fmt::format("its groups must hold top_k ({}) experts: group_limit · experts/groups "
                          "= {}",
                          m.top_k, m.group_limit * (m.experts / m.groups)));
  return m;
}

MlaSpec read_mla(const YamlNode& n) {
  n.expect_only_keys(
      {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  MlaSpec m;
  m.q_lora_rank = n.get_int("q_lora_rank", 0, 0, kMaxWidth);
  m.kv_lora_rank = n.child("kv_lora_rank").as_int(1, kMaxWidth);
  m.qk_nope_head_dim = n.child("qk_nope_head_dim").as_int(1, kMaxWidth);
  m.qk_rope_head_dim = n.child("qk_rope_head_dim").as_int(0, kMaxWidth);
  m.v_head_dim = n.child("v_head_dim").as_int(1, kMaxWidth);
  return m;
}

AttentionWindow read_window(const YamlNode& n) {
  n.expect_only_keys({"tokens", "kind", "global_every"});
  AttentionWindow w;
  w.tokens = n.child("tokens").as_int(1, kMaxSeqLen);
  w.kind = n.get_choice("kind", "sliding", {"sliding", "chunked"}) == "chunked"
               ? WindowKind::chunked
               : WindowKind::sliding;
  w.global_every = n.get_int("global_every", 0, 0, kMaxLayers);
  return w;
}

SparseAttentionSpec read_sparse_attention(const YamlNode& n) {
  n.expect_only_keys({"index_heads", "index_head_dim", "top_k"});
  SparseAttentionSpec s;
  s.index_heads = n.child("index_heads").as_int(1, kMaxWidth);
  s.index_head_dim = n.child("index_head_dim").as_int(1, kMaxWidth);
  s.top_k = n.child("top_k").as_int(1, kMaxSeqLen);
  return s;
}

// [n, k]: the FP8 checkpoint's weight blocks, as Hugging Face's weight_block_size lists them.
WeightBlock read_weight_block(const YamlNode& n) {
  if (!n.is_sequence() || n.size() != 2)
    n.fail(
        "must be a list of two integers [n, k] (Hugging Face quantization_config."
        "weight_block_size)");
  return WeightBlock{n.element(0).as_int(1, kMaxWidth), n.element(1).as_int(1, kMaxWidth)};
}

TrainingSpec read_training(const YamlNode& n) {
  n.expect_only_keys({"seq_len", "global_batch", "precision"});
  TrainingSpec t;
  t.seq_len = n.get_int("seq_len", t.seq_len, 1, kMaxSeqLen);
  t.global_batch = n.get_int("global_batch", t.global_batch, 1, kMaxGlobalBatch);
  t.precision = n.get_choice("precision", "bf16", {"bf16", "fp8"}) == "fp8" ? Precision::fp8
                                                                            : Precision::bf16;
  return t;
}

// The keys of a model mapping besides `name` (models/*.yaml).
const std::vector<std::string>& model_keys() {
  static const std::vector<std::string> keys = {
      "layers",
      "hidden",
      "heads",
      "kv_heads",
      "head_dim",
      "ffn_hidden",
      "vocab",
      "mlp",
      "norm",
      "tied_embeddings",
      "dropout",
      "bias",
      "qkv_bias",
      "attention_sinks",
      "mtp_layers",
      "qk_norm",
      "attention",
      "position_embedding",
      "max_positions",
      "context_tokens",
      "rope_theta",
      "moe",
      "mla",
      "window",
      "sparse_attention",
      "fp8_weight_block",
      "mxfp4_experts",
      "training",
  };
  return keys;
}

// The fields of a model mapping, named `name`; learned positions without max_positions take
// `default_max_positions` (0: required).
ModelSpec read_model_fields(const YamlNode& root, const std::string& name,
                            int64_t default_max_positions) {
  ModelSpec m;
  m.name = name;
  m.layers = root.child("layers").as_int(1, kMaxLayers);
  m.hidden = root.child("hidden").as_int(1, kMaxWidth);
  m.heads = root.child("heads").as_int(1, kMaxWidth);
  m.kv_heads = root.get_int("kv_heads", m.heads, 1, kMaxWidth);
  m.head_dim = root.get_int("head_dim", 0, 1, kMaxWidth);
  m.vocab = root.child("vocab").as_int(1, kMaxVocab);
  m.mlp = mlp_kind(root.get_choice("mlp", "gelu", {"gelu", "swiglu", "relu"}));
  m.ffn_hidden = root.get_int("ffn_hidden", 0, 1, kMaxWidth);
  m.norm = root.get_choice("norm", "layernorm", {"layernorm", "rmsnorm"}) == "rmsnorm"
               ? NormKind::rmsnorm
               : NormKind::layernorm;
  m.tied_embeddings = root.get_bool("tied_embeddings", false);
  m.dropout = root.get_bool("dropout", false);
  m.bias = root.get_bool("bias", false);
  m.qkv_bias = root.get_bool("qkv_bias", false);
  m.attention_sinks = root.get_bool("attention_sinks", false);
  m.mtp_layers = root.get_int("mtp_layers", 0, 0, kMaxLayers);
  const std::string qk = root.get_choice("qk_norm", "false", {"false", "true", "per_layer"});
  m.qk_norm = qk == "true"        ? QkNorm::per_head
              : qk == "per_layer" ? QkNorm::per_layer
                                  : QkNorm::none;
  m.attention = root.get_choice("attention", "flash", {"flash", "standard"}) == "standard"
                    ? AttentionKind::standard
                    : AttentionKind::flash;
  std::string pos = root.get_choice("position_embedding", "rope", {"rope", "alibi", "learned"});
  m.position_embedding = pos == "learned" ? PositionEmbedding::learned
                         : pos == "alibi" ? PositionEmbedding::alibi
                                          : PositionEmbedding::rope;
  m.max_positions = root.get_int("max_positions", 0, 1, kMaxSeqLen);
  if (m.position_embedding == PositionEmbedding::learned && m.max_positions == 0)
    m.max_positions = default_max_positions;
  m.context_tokens = root.get_int("context_tokens", 0, 1, kMaxSeqLen);
  m.rope_theta = root.get_double("rope_theta", 10000, 1, kMaxRopeTheta);
  if (auto n = root.optional_child("moe")) m.moe = read_moe(*n);
  if (auto n = root.optional_child("mla")) m.mla = read_mla(*n);
  if (auto n = root.optional_child("window")) m.window = read_window(*n);
  if (auto n = root.optional_child("sparse_attention"))
    m.sparse_attention = read_sparse_attention(*n);
  if (auto n = root.optional_child("fp8_weight_block")) m.fp8_weight_block = read_weight_block(*n);
  m.mxfp4_experts = root.get_bool("mxfp4_experts", false);
  if (auto n = root.optional_child("training")) m.training = read_training(*n);
  complete_and_check_model(m, [&](const std::string& field, const std::string& rule) {
    auto dot = field.find('.');
    YamlNode at = root;
    if (dot != std::string::npos && root.has(field.substr(0, dot))) {
      at = root.child(field.substr(0, dot));
      auto leaf = field.substr(dot + 1);
      if (at.has(leaf)) at = at.child(leaf);
    } else if (root.has(field)) {
      at = root.child(field);
    }
    Diagnostic d = at.diagnostic(rule);
    d.field = field;
    return d;
  });
  return m;
}

ModelSpec read_model(const YamlNode& root) {
  std::vector<std::string> keys = model_keys();
  keys.insert(keys.begin(), "name");
  root.expect_only_keys(keys);
  return read_model_fields(root, root.child("name").as_string(), 0);
}

}  // namespace

ModelSpec read_model_mapping(const YamlNode& root, const std::string& name,
                             int64_t default_max_positions) {
  root.expect_only_keys(model_keys());
  return read_model_fields(root, name, default_max_positions);
}

Result<ModelSpec> parse_model_yaml(const std::string& text, const std::string& file) {
  return capture_input_errors([&] { return read_model(YamlNode::parse(text, file)); });
}

Result<ModelSpec> load_model(const std::string& path) {
  return capture_input_errors([&]() -> ModelSpec {
    std::string text = read_text_file(path);
    bool json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
    Result<ModelSpec> r = json ? parse_hf_config(text, path) : parse_model_yaml(text, path);
    if (!r) throw InputError{r.errors()};
    return r.value();
  });
}

}  // namespace meshplan
