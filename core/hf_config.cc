// Maps a Hugging Face config.json onto a ModelSpec. Families (model_type): llama, mistral,
// phi3 (fused qkv/gate_up: the same matrices), qwen2 (biases on Q, K and V), qwen3,
// mixtral, qwen3_moe, deepseek_v2, deepseek_v3 (MLA; MTP modules from
// num_nextn_predict_layers, counted apart), deepseek_v32 and glm_moe_dsa (DeepSeek-V3.2, GLM-5:
// DeepSeek-V3's fields and its sparse attention's indexer, ModelSpec::sparse_attention), kimi_k2
// (Kimi K2: DeepseekV3ForCausalLM, the same fields), minimax_m2 (MiniMax-M2: Mixtral-style experts
// of intermediate_size, sigmoid router with use_routing_bias, q/k norms per layer; its MTP modules,
// use_mtp, are not counted), gemma2 and gemma3_text (explicit head_dim, four norms per layer, Gemma
// 3's q/k norms; tied embeddings), gpt_neox (LayerNorm, biases everywhere, GeLU MLP; its parallel
// residual has the same matrices and FLOPs) and llama4_text (MoE every interleave_moe_layer_step-th
// layer with a shared expert, dense layers of intermediate_size_mlp between; its chunked attention,
// 8,192-token chunks on three layers in four) and glm4_moe (GLM-4.5, 4.6, 4.7: DeepSeek-V3's MoE
// layout under grouped-query attention, transformers' modeling_glm4_moe.py: attention_bias on Q, K
// and V only, o_proj without, as Qwen2's; use_qk_norm per head; a sigmoid router with
// e_score_correction_bias; its partial RoPE, partial_rotary_factor, changes no count or cost; its
// MTP layers, num_nextn_predict_layers, counted apart) and gpt_oss (gpt-oss-20b, -120b,
// transformers' modeling_gpt_oss.py: biases on every attention projection and on each expert's
// gate, up and down maps, as `bias` counts them, and on the router's logits; a learned sink logit
// per head; experts of intermediate_size, no shared or dense ones; sliding windows on alternate
// layers from layer_types; its MXFP4 quantization_config marks the experts' published format,
// read_quantization below).
// Local attention (sliding windows, Llama 4's chunks)
// becomes ModelSpec::window (read_window below), which the cost model prices. The length the
// engines serve (max_position_embeddings under RoPE scaling) becomes ModelSpec::context_tokens
// (read_context_tokens below).
//
// Parameters are counted exactly or refused: a field that would change the count in a way the
// spec cannot express is an error naming it (attention_bias, mlp_bias, moe_layer_freq != 1).
// What does not change the count or the cost is ignored, as transformers' own fields we do not
// use: logit soft-capping (an element-wise tanh inside the attention and LM-head kernels) and RoPE
// variants.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/json_input.h"
#include "core/json_location.h"
#include "core/model_checks.h"
#include "core/model_limits.h"
#include "core/model_spec.h"
#include "core/result.h"

namespace meshplan {
namespace {

using nlohmann::json;

class ConfigReader {
 public:
  ConfigReader(const json& j, const std::string& text, const std::string& file)
      : j_(j), text_(text), file_(file) {}

  Diagnostic diagnostic(const std::string& key, const std::string& rule) const {
    std::string value = j_.contains(key) ? json_value_text(j_.at(key)) : "";
    return Diagnostic{location_of_json_key(file_, text_, key), key, value, rule};
  }
  [[noreturn]] void fail(const std::string& key, const std::string& rule) const {
    throw InputError{{diagnostic(key, rule)}};
  }

  bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  int64_t get_int(const std::string& key, int64_t min, int64_t max) const {
    if (!has(key)) fail(key, "is required but missing");
    const json& v = j_.at(key);
    if (!v.is_number_integer()) fail(key, "must be an integer");
    const bool too_big = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max);
    if (too_big || v.get<int64_t>() < min || v.get<int64_t>() > max)
      fail(key, fmt::format("must be an integer between {} and {}", min, max));
    return v.get<int64_t>();
  }
  int64_t get_int(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
    return has(key) ? get_int(key, min, max) : fallback;
  }
  double get_double(const std::string& key, double fallback, double min, double max) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) fail(key, "must be a number");
    const double d = v.get<double>();
    if (d < min || d > max) fail(key, fmt::format("must be a number between {} and {}", min, max));
    return d;
  }
  bool get_bool(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) fail(key, "must be true or false");
    return j_.at(key).get<bool>();
  }
  std::string get_string(const std::string& key) const {
    if (!has(key)) fail(key, "is required but missing");
    if (!j_.at(key).is_string()) fail(key, "must be a string");
    return j_.at(key).get<std::string>();
  }
  // An integer list, each element within [min, max].
  std::vector<int64_t> get_int_list(const std::string& key, int64_t min, int64_t max) const {
    if (!has(key)) fail(key, "is required but missing");
    const json& v = j_.at(key);
    if (!v.is_array()) fail(key, "must be a list of integers");
    std::vector<int64_t> out;
    for (const json& e : v) {
      if (!e.is_number_integer() || e.get<int64_t>() < min || e.get<int64_t>() > max)
        fail(key, fmt::format("must be a list of integers between {} and {}", min, max));
      out.push_back(e.get<int64_t>());
    }
    return out;
  }
  // A list of strings, each one of `choices`.
  std::vector<std::string> get_choice_list(const std::string& key,
                                           const std::vector<std::string>& choices) const {
    if (!has(key)) fail(key, "is required but missing");
    const json& v = j_.at(key);
    const std::string rule = fmt::format("must be a list of {}", fmt::join(choices, "|"));
    if (!v.is_array()) fail(key, rule);
    std::vector<std::string> out;
    for (const json& e : v) {
      if (!e.is_string() ||
          std::find(choices.begin(), choices.end(), e.get<std::string>()) == choices.end())
        fail(key, rule);
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  // First present key of `keys`, else fallback.
  int64_t get_first(const std::vector<std::string>& keys, int64_t fallback, int64_t min,
                    int64_t max) const {
    for (const auto& k : keys)
      if (has(k)) return get_int(k, min, max);
    return fallback;
  }

 private:
  const json& j_;
  const std::string& text_;
  const std::string& file_;
};

std::string stem_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base == "config.json" && slash != std::string::npos) {
    auto prev = path.find_last_of('/', slash - 1);
    return path.substr(prev == std::string::npos ? 0 : prev + 1,
                       slash - (prev == std::string::npos ? 0 : prev + 1));
  }
  auto dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

// A block-quantized FP8 checkpoint (quantization_config {quant_method: fp8, weight_block_size:
// [n, k]}: DeepSeek-V3, Qwen3's -FP8 releases) or a MoE checkpoint with MXFP4 experts
// (quant_method mxfp4: gpt-oss; its modules_to_not_convert, the attention, router, embedding and
// LM head, are what WeightFormat::mxfp4 leaves in BF16); other quantization configs are ignored.
void read_quantization(const json& j, const std::string& text, const std::string& file,
                       ModelSpec& m) {
  if (!j.contains("quantization_config") || !j.at("quantization_config").is_object()) return;
  const ConfigReader q(j.at("quantization_config"), text, file);
  if (!q.has("quant_method")) return;
  const std::string method = q.get_string("quant_method");
  if (method == "mxfp4") {
    m.mxfp4_experts = m.moe.has_value();
    return;
  }
  if (method != "fp8" || !q.has("weight_block_size")) return;
  const std::vector<int64_t> block = q.get_int_list("weight_block_size", 1, kMaxWidth);
  if (block.size() != 2) q.fail("weight_block_size", "must be a list of two integers [n, k]");
  m.fp8_weight_block = WeightBlock{block[0], block[1]};
}

// Errors for fields whose value changes the parameter count in a way ModelSpec cannot express.
void refuse_inexpressible(const ConfigReader& r, const std::string& type) {
  // GLM-4.5's attention_bias puts biases on Q, K and V only (o_proj has none): Qwen2's, which
  // read_attention sets.
  // gpt-oss's is on every attention map, and its experts carry biases whatever it says: `bias`
  // (read_config) counts both, so only its false is inexpressible.
  if (type == "gpt_oss" && !r.get_bool("attention_bias", false))
    r.fail("attention_bias",
           "must be true for gpt_oss: its experts carry biases regardless, and meshplan models "
           "biases on every linear layer or on Q/K/V only, not on the experts alone");
  if (type != "glm4_moe" && type != "gpt_oss" && r.get_bool("attention_bias", false))
    r.fail("attention_bias",
           "true is not supported: meshplan models biases on all linear "
           "layers or on Q/K/V only (Qwen2), not on Q/K/V/O alone");
  if (r.get_bool("mlp_bias", false))
    r.fail("mlp_bias",
           "true is not supported: meshplan models biases on all linear layers, "
           "not on the MLP alone");
  if (r.get_int("moe_layer_freq", 1, 1, kMaxLayers) != 1)
    r.fail("moe_layer_freq",
           "must be 1: meshplan models an MoE block on every layer after "
           "first_k_dense_replace, not on every n-th");
}

void read_attention(const ConfigReader& r, const std::string& type, ModelSpec& m) {
  m.heads = r.get_int("num_attention_heads", 1, kMaxWidth);
  m.kv_heads = r.get_int("num_key_value_heads", m.heads, 1, kMaxWidth);
  m.head_dim = r.get_int("head_dim", 0, 1, kMaxWidth);
  if (type == "qwen3" || type == "qwen3_moe" || type == "gemma3_text" ||
      (type == "glm4_moe" && r.get_bool("use_qk_norm", false)))
    m.qk_norm = QkNorm::per_head;
  // MiniMax-M2 (use_qk_norm, qk_norm_type): its released configs norm Q and K per layer.
  if (type == "minimax_m2" && r.get_bool("use_qk_norm", false)) {
    const std::string kind = r.has("qk_norm_type") ? r.get_string("qk_norm_type") : "per_layer";
    if (kind != "per_layer" && kind != "per_head")
      r.fail("qk_norm_type", "must be per_layer or per_head");
    m.qk_norm = kind == "per_layer" ? QkNorm::per_layer : QkNorm::per_head;
  }
  m.qkv_bias = type == "qwen2" || (type == "glm4_moe" && r.get_bool("attention_bias", false));
  m.attention = AttentionKind::flash;
  if (r.has("kv_lora_rank")) {
    MlaSpec mla;
    mla.q_lora_rank = r.get_int("q_lora_rank", 0, 0, kMaxWidth);
    mla.kv_lora_rank = r.get_int("kv_lora_rank", 1, kMaxWidth);
    mla.qk_nope_head_dim = r.get_int("qk_nope_head_dim", 1, kMaxWidth);
    mla.qk_rope_head_dim = r.get_int("qk_rope_head_dim", 0, kMaxWidth);
    mla.v_head_dim = r.get_int("v_head_dim", 1, kMaxWidth);
    m.mla = mla;
    m.head_dim = mla.v_head_dim;
    m.kv_heads = m.heads;
  }
}

void read_moe(const ConfigReader& r, const std::string& type, ModelSpec& m) {
  int64_t experts =
      r.get_first({"num_local_experts", "num_experts", "n_routed_experts"}, 0, 1, kMaxExperts);
  if (experts == 0) return;
  MoeSpec moe;
  moe.experts = experts;
  moe.top_k = r.get_int("num_experts_per_tok", 1, kMaxExperts);
  moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", m.ffn_hidden, 1, kMaxWidth);
  moe.shared_experts = r.get_int("n_shared_experts", 0, 0, kMaxExperts);
  moe.first_dense_layers = r.get_int("first_k_dense_replace", 0, 0, kMaxLayers);
  moe.groups = r.get_int("n_group", 1, 1, kMaxExperts);
  moe.group_limit = r.get_int("topk_group", 0, 0, kMaxExperts);
  if (moe.top_k > moe.experts) r.fail("num_experts_per_tok", "must not exceed the expert count");
  if (moe.experts % moe.groups != 0) r.fail("n_group", "must divide the expert count");
  if (moe.group_limit > moe.groups) r.fail("topk_group", "must not exceed n_group");
  if (moe.groups == 1) moe.group_limit = 0;  // one group: no limit
  // DeepSeek's router (modeling_deepseek.py MoEGate): scoring_func softmax or sigmoid,
  // routed_scaling_factor on the chosen experts' weights, and topk_method noaux_tc's
  // e_score_correction_bias (the auxiliary-loss-free balancing bias).
  if (r.has("scoring_func")) {
    const std::string score = r.get_string("scoring_func");
    if (score != "softmax" && score != "sigmoid")
      r.fail("scoring_func", "must be softmax or sigmoid");
    moe.sigmoid_router = score == "sigmoid";
  }
  moe.routed_scaling = r.get_double("routed_scaling_factor", 1.0, 1e-3, 1000.0);
  moe.expert_bias = (r.has("topk_method") && r.get_string("topk_method") == "noaux_tc") ||
                    r.get_bool("use_routing_bias", false);  // MiniMax-M2's name for it
  // GLM-4.5's router has no such fields: it scores with a sigmoid and adds its
  // e_score_correction_bias always (Glm4MoeTopkRouter).
  if (type == "glm4_moe") moe.sigmoid_router = moe.expert_bias = true;
  moe.router_bias = type == "gpt_oss";  // GptOssTopKRouter: nn.Linear with bias
  // MiniMax-M2's shared expert width (0 in its releases): one of another width than the routed
  // experts' is not expressible.
  if (r.get_int("shared_intermediate_size", 0, 0, kMaxWidth) != 0)
    r.fail("shared_intermediate_size",
           "must be 0: meshplan models shared experts as wide as the routed ones "
           "(n_shared_experts)");
  m.moe = moe;
}

// Llama 4 text models (transformers Llama4TextConfig): routed experts of intermediate_size,
// one shared expert of the same width on every MoE layer, dense layers of
// intermediate_size_mlp between them (interleave_moe_layer_step; its moe_layers list must be
// that pattern), Q/K L2 norms without weights (no parameters).
void read_llama4(const ConfigReader& r, ModelSpec& m) {
  if (!m.moe) r.fail("num_local_experts", "is required for llama4_text");
  MoeSpec& moe = *m.moe;
  moe.shared_experts = 1;
  moe.layer_step = r.get_int("interleave_moe_layer_step", 1, 1, m.layers);
  if (r.has("moe_layers")) {
    std::vector<int64_t> expected;
    for (int64_t layer = moe.layer_step - 1; layer < m.layers; layer += moe.layer_step)
      expected.push_back(layer);
    if (r.get_int_list("moe_layers", 0, m.layers - 1) != expected)
      r.fail("moe_layers",
             fmt::format("must be every interleave_moe_layer_step-th layer ({}, {}, …): meshplan "
                         "models MoE layers at a fixed interval",
                         moe.layer_step - 1, 2 * moe.layer_step - 1));
  }
  m.ffn_hidden = r.get_int("intermediate_size_mlp", m.ffn_hidden, 1, kMaxWidth);
}

// The period P at which layers attend globally (layers P − 1, 2P − 1, …) given whether each is
// global; 0 when none is; -1 when the pattern has no such period.
int64_t global_period(const std::vector<bool>& global) {
  const auto n = static_cast<int64_t>(global.size());
  int64_t period = 0;
  for (int64_t i = 0; i < n && period == 0; ++i)
    if (global[static_cast<size_t>(i)]) period = i + 1;
  if (period == 0) return 0;
  for (int64_t i = 0; i < n; ++i)
    if (global[static_cast<size_t>(i)] != ((i + 1) % period == 0)) return -1;
  return period;
}

// Local attention (ModelSpec::window), as transformers builds it per family:
//   layer_types (transformers >= 4.53 writes it): "sliding_attention", "chunked_attention" or
//     "full_attention" per layer;
//   gemma2: sliding_window on the even layers (modeling_gemma2: is_sliding = not layer_idx % 2);
//   gemma3_text: sliding_window on all but every sliding_window_pattern-th layer (default 6);
//   mistral, phi3: sliding_window, when set, on every layer;
//   qwen2, qwen3, qwen3_moe: only with use_sliding_window, from layer max_window_layers on;
//   llama4_text: chunks of attention_chunk_size on the RoPE layers (no_rope_layers 1), every
//     layer but each fourth by default (no_rope_layer_interval 4).
void read_window(const ConfigReader& r, const std::string& type, ModelSpec& m) {
  const bool llama4 = type == "llama4_text";
  const char* size_key = llama4 ? "attention_chunk_size" : "sliding_window";
  if (type == "gpt_neox" || type == "llama" || type == "deepseek_v2" || type == "deepseek_v3" ||
      type == "deepseek_v32" || type == "glm_moe_dsa" || type == "kimi_k2" || type == "glm4_moe")
    return;
  if ((type == "qwen2" || type == "qwen3" || type == "qwen3_moe")) {
    if (!r.get_bool("use_sliding_window", false)) return;
    r.fail("use_sliding_window",
           "sliding windows from layer max_window_layers on are not a fixed interval of layers, "
           "which meshplan models local attention as");
  }
  if (!r.has(size_key)) return;
  AttentionWindow w;
  w.tokens = r.get_int(size_key, 1, kMaxSeqLen);
  w.kind = llama4 ? WindowKind::chunked : WindowKind::sliding;
  std::vector<bool> global(static_cast<size_t>(m.layers), false);
  const char* pattern_key = "layer_types";
  if (r.has("layer_types")) {
    const std::vector<std::string> types = r.get_choice_list(
        "layer_types", {"full_attention", "sliding_attention", "chunked_attention"});
    if (static_cast<int64_t>(types.size()) != m.layers)
      r.fail("layer_types", fmt::format("must name num_hidden_layers ({}) layers", m.layers));
    for (size_t i = 0; i < types.size(); ++i) global[i] = types[i] == "full_attention";
  } else if (llama4 && r.has("no_rope_layers")) {
    pattern_key = "no_rope_layers";
    const std::vector<int64_t> rope = r.get_int_list("no_rope_layers", 0, 1);
    if (static_cast<int64_t>(rope.size()) != m.layers)
      r.fail("no_rope_layers", fmt::format("must name num_hidden_layers ({}) layers", m.layers));
    for (size_t i = 0; i < rope.size(); ++i) global[i] = rope[i] == 0;
  } else {
    const int64_t every = type == "gemma2" ? 2
                          : type == "gemma3_text"
                              ? r.get_int("sliding_window_pattern", 6, 1, kMaxLayers)
                          : llama4 ? 4
                                   : 0;
    for (int64_t i = 0; every > 0 && i < m.layers; ++i)
      global[static_cast<size_t>(i)] = (i + 1) % every == 0;
  }
  w.global_every = global_period(global);
  if (w.global_every < 0)
    r.fail(pattern_key,
           "must put full attention on every N-th layer (N − 1, 2N − 1, …) or on none: meshplan "
           "models local attention at a fixed interval");
  m.window = w;
}

// deepseek_v32 (DeepSeek-V3.2-Exp, V3.2, V3.2-Speciale) and glm_moe_dsa (GLM-5: DeepSeek-V3.2's
// layout at other widths, GlmMoeDsaForCausalLM): DeepSeek-V3's fields and the lightning
// indexer's (index_n_heads, index_head_dim, index_topk; the three are required, as DeepSeek's
// own config_671B_v3.2.json and GLM-5's config.json state them).
void read_sparse_attention(const ConfigReader& r, ModelSpec& m) {
  SparseAttentionSpec s;
  s.index_heads = r.get_int("index_n_heads", 1, kMaxWidth);
  s.index_head_dim = r.get_int("index_head_dim", 1, kMaxWidth);
  s.top_k = r.get_int("index_topk", 1, kMaxSeqLen);
  m.sparse_attention = s;
}

// The longest sequence the engines serve the model at, as vLLM derives its default
// max_model_len (vllm/config/model.py _get_and_verify_max_len at 0052a5b8; SGLang's
// get_context_length applies the same rule): the least of the length keys present
// (max_position_embeddings, n_positions, max_seq_len, seq_length, max_sequence_length,
// max_seq_length, seq_len), model_max_length where given instead; then, under RoPE scaling
// (rope_scaling, or transformers 5's rope_parameters, possibly one per layer type) of a type other
// than su, longrope and llama3, times its factor (default 1), counted from
// original_max_position_embeddings for yarn; not for Gemma 3, whose length is scaled already. A
// LongRoPE model defaults to its original_max_position_embeddings. 0 where no key is present
// (vLLM then assumes 2048 and warns; meshplan checks nothing).
int64_t read_context_tokens(const json& j, const ConfigReader& r, const std::string& type,
                            const std::string& text, const std::string& file) {
  double tokens = 0;
  for (const char* key : {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                          "max_sequence_length", "max_seq_length", "seq_len"})
    if (r.has(key)) {
      const auto v = static_cast<double>(r.get_int(key, 1, kMaxSeqLen));
      tokens = tokens == 0 ? v : std::min(tokens, v);
    }
  if (r.has("model_max_length"))
    tokens = static_cast<double>(r.get_int("model_max_length", 1, kMaxSeqLen));
  if (tokens == 0) return 0;
  const char* rope_key = r.has("rope_scaling") ? "rope_scaling" : "rope_parameters";
  if (!r.has(rope_key) || !j.at(rope_key).is_object() || type == "gemma3_text")
    return static_cast<int64_t>(tokens);
  // One set of parameters, or one per layer type (all with the same factor, as vLLM assumes).
  const json& rope = j.at(rope_key);
  std::vector<const json*> sets;
  if (rope.contains("rope_type") || rope.contains("type") || rope.contains("factor")) {
    sets.push_back(&rope);
  } else {
    for (const auto& [layer_type, params] : rope.items())
      if (params.is_object()) sets.push_back(&params);
  }
  double factor = 1;
  bool longrope = false;
  for (const json* params : sets) {
    const ConfigReader p(*params, text, file);
    const std::string rope_type = p.has("rope_type") ? p.get_string("rope_type")
                                  : p.has("type")    ? p.get_string("type")
                                                     : "default";
    if (rope_type == "longrope") longrope = true;
    if (rope_type == "su" || rope_type == "longrope" || rope_type == "llama3") continue;
    factor = p.get_double("factor", factor, 1e-6, 1e6);
    if (rope_type == "yarn" && p.has("original_max_position_embeddings"))
      tokens = static_cast<double>(p.get_int("original_max_position_embeddings", 1, kMaxSeqLen));
  }
  tokens *= factor;
  if (longrope && r.has("original_max_position_embeddings"))
    tokens = static_cast<double>(r.get_int("original_max_position_embeddings", 1, kMaxSeqLen));
  if (tokens < 1 || tokens > static_cast<double>(kMaxSeqLen))
    r.fail(rope_key, fmt::format("scales the model's length to {:.0f} tokens; it must be between "
                                 "1 and {}",
                                 tokens, kMaxSeqLen));
  return static_cast<int64_t>(tokens);
}

// The model_type of a multimodal config's text model (its text_config object), "" where it has
// none.
std::string multimodal_text_type(const json& j) {
  if (!j.contains("text_config") || !j.at("text_config").is_object()) return "";
  const json& t = j.at("text_config");
  return t.contains("model_type") && t.at("model_type").is_string()
             ? t.at("model_type").get<std::string>()
             : "";
}

ModelSpec read_config(const json& j, const std::string& text, const std::string& file) {
  ConfigReader r(j, text, file);
  const std::vector<std::string> types = {"llama",       "mistral",      "phi3",      "qwen2",
                                          "qwen3",       "mixtral",      "qwen3_moe", "deepseek_v2",
                                          "deepseek_v3", "deepseek_v32", "kimi_k2",   "glm4_moe",
                                          "glm_moe_dsa", "minimax_m2",   "gemma2",    "gemma3_text",
                                          "gpt_neox",    "llama4_text",  "gpt_oss"};
  std::string type = r.get_string("model_type");
  // Families met in practice whose structure ModelSpec cannot hold: refused with the reason.
  if (type == "llama4")
    r.fail("model_type",
           "llama4 is the multimodal config: pass its text model instead (the text_config "
           "object, model_type llama4_text, saved as its own file)");
  if (type == "gemma3")
    r.fail("model_type",
           "gemma3 is the multimodal config: pass its text model instead (the "
           "text_config object, model_type gemma3_text, saved as its own file)");
  if (std::find(types.begin(), types.end(), type) == types.end()) {
    // Another multimodal wrapper around a text model meshplan reads (Kimi K2.5: kimi_k25 around
    // kimi_k2): name the text model to pass, as for the two above.
    const std::string text = multimodal_text_type(j);
    if (std::find(types.begin(), types.end(), text) != types.end())
      r.fail("model_type",
             fmt::format("{} is a multimodal config: pass its text model instead (the "
                         "text_config object, model_type {}, saved as its own file)",
                         type, text));
    r.fail("model_type", fmt::format("must be one of {}", fmt::join(types, "|")));
  }
  refuse_inexpressible(r, type);
  const bool gemma = type == "gemma2" || type == "gemma3_text";
  const bool neox = type == "gpt_neox";
  ModelSpec m;
  m.name = stem_of(file);
  m.layers = r.get_int("num_hidden_layers", 1, kMaxLayers);
  m.hidden = r.get_int("hidden_size", 1, kMaxWidth);
  m.vocab = r.get_int("vocab_size", 1, kMaxVocab);
  m.ffn_hidden = r.get_int("intermediate_size", 1, kMaxWidth);
  read_attention(r, type, m);
  // GPT-NeoX: LayerNorm with β, biases on every linear layer, a plain GeLU MLP. The others
  // have gated MLPs (SwiGLU, Gemma's GeGLU: the same three matrices) and RMSNorm.
  m.mlp = neox ? MlpKind::gelu : MlpKind::swiglu;
  m.norm = neox ? NormKind::layernorm : NormKind::rmsnorm;
  m.bias = neox || type == "gpt_oss";
  m.attention_sinks = type == "gpt_oss";
  m.post_norms = gemma;
  m.tied_embeddings = r.get_bool("tie_word_embeddings", gemma);
  // Training defaults: the pre-training length of these families is 4K-8K tokens; the model's
  // max_position_embeddings is a ceiling, not what pre-training used.
  m.training.seq_len =
      std::min<int64_t>(8192, r.get_int("max_position_embeddings", 8192, 1, kMaxSeqLen));
  // GPT-NeoX names the RoPE base rotary_emb_base; both default to 10000 in transformers.
  m.rope_theta = r.get_double(neox ? "rotary_emb_base" : "rope_theta", 10000, 1, kMaxRopeTheta);
  // transformers 5 moves it into rope_parameters (GLM-5's config.json: {"rope_theta": 1000000,
  // "rope_type": "default"}).
  if (!r.has("rope_theta") && j.contains("rope_parameters") && j.at("rope_parameters").is_object())
    m.rope_theta = ConfigReader(j.at("rope_parameters"), text, file)
                       .get_double("rope_theta", 10000, 1, kMaxRopeTheta);
  read_moe(r, type, m);
  if (type == "llama4_text") read_llama4(r, m);
  read_window(r, type, m);
  if (type == "deepseek_v32" || type == "glm_moe_dsa") read_sparse_attention(r, m);
  m.mtp_layers = r.get_int("num_nextn_predict_layers", 0, 0, kMaxLayers);
  m.context_tokens = read_context_tokens(j, r, type, text, file);
  read_quantization(j, text, file, m);
  complete_and_check_model(m, [&](const std::string& field, const std::string& rule) {
    return r.diagnostic(field, rule);
  });
  return m;
}

}  // namespace

Result<ModelSpec> parse_hf_config(const std::string& text, const std::string& file) {
  return capture_input_errors([&]() -> ModelSpec {
    const json j = parse_json_input(text, file);
    if (!j.is_object()) {
      throw InputError{{Diagnostic{{file, 1, 1, ""}, "", "", "must be a JSON object"}}};
    }
    return read_config(j, text, file);
  });
}

}  // namespace meshplan
