// The transformer being trained: shapes only, no parallelism. Key names follow DESIGN.md §2.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace meshplan {

enum class MlpKind { gelu, swiglu, relu };
enum class NormKind { layernorm, rmsnorm };
enum class AttentionKind { flash, standard };
enum class PositionEmbedding { rope, alibi, learned };
enum class Precision { bf16, fp8 };
// RMSNorm on queries and keys before RoPE: none; per head (Qwen3, Gemma 3: one head_dim-wide
// weight for Q and one for K, shared by the heads); per layer (MiniMax-M2's qk_norm_type
// per_layer: one weight over all of Q's heads × head_dim and one over K's).
enum class QkNorm { none, per_head, per_layer };

struct MoeSpec {
  int64_t experts = 0;             // routed experts per MoE layer
  int64_t top_k = 0;               // routed experts per token
  int64_t expert_ffn_hidden = 0;   // FFN width of one expert
  int64_t shared_experts = 0;      // always-active experts of the same width (DeepSeek)
  int64_t first_dense_layers = 0;  // leading layers with a dense MLP of width ffn_hidden
  // After the leading dense layers, every layer_step-th layer is MoE and the others are dense
  // MLPs of width ffn_hidden: layers first_dense_layers + layer_step − 1, + 2·layer_step − 1, …
  // (Hugging Face Llama 4's interleave_moe_layer_step, whose MoE layers are step − 1, 2·step −
  // 1, …; Maverick 2, Scout 1). 1: every layer after the dense ones.
  int64_t layer_step = 1;
  // Tokens an expert accepts relative to a perfectly even split (GShard's capacity factor).
  // Default 1.0: dropless routing balanced on average (Megatron-core's default is dropless).
  double capacity_factor = 1.0;
  // Group-limited routing (DeepSeek-V2/V3; Megatron-Core moe_router_num_groups and
  // moe_router_group_topk; HF n_group, topk_group): the experts form `groups` equal groups and a
  // token's top_k experts come from at most `group_limit` of them (0: no limit). DeepSeek-V3
  // puts one group on each of 8 nodes and limits a token to 4 (report §2.1.2, "node-limited").
  int64_t groups = 1;
  int64_t group_limit = 0;
  // The router's scoring (Megatron-Core --moe-router-score-function; HF scoring_func): softmax
  // (Mixtral, Qwen, DeepSeek-V2) or sigmoid (DeepSeek-V3, report §2.1.2); its routed-weight
  // scale (--moe-router-topk-scaling-factor; HF routed_scaling_factor, 2.5 for DeepSeek-V3; 1:
  // none); and the auxiliary-loss-free balancing bias on each expert's score (DeepSeek-V3 §2.1.2;
  // --moe-router-enable-expert-bias; HF topk_method noaux_tc). Not priced: a router's work is
  // a few element-wise operations per token. Exported, so that the launcher trains this model.
  bool sigmoid_router = false;
  double routed_scaling = 1.0;
  bool expert_bias = false;
  // The router's logits carry a bias (gpt-oss's GptOssTopKRouter: nn.Linear with bias): one
  // parameter per expert, counted; not priced.
  bool router_bias = false;
};

struct MlaSpec {            // DeepSeek-V2/V3 multi-head latent attention
  int64_t q_lora_rank = 0;  // 0: queries projected directly from the hidden state
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// DeepSeek Sparse Attention (DeepSeek-V3.2-Exp: DeepSeek_V3_2.pdf and inference/model.py of
// github.com/deepseek-ai/DeepSeek-V3.2-Exp; config.json index_n_heads, index_head_dim,
// index_topk; Megatron-Core --experimental-attention-variant dsa): a lightning indexer of
// `index_heads` heads of `index_head_dim` scores every earlier token for each query, and the MLA
// attends to the `top_k` best (its whole prefix while shorter). The indexer's weights (DeepSeek's
// inference/model.py Indexer): wq_b from the query latent to index_heads × index_head_dim, wk from
// the hidden state to one key of index_head_dim, a LayerNorm on that key and weights_proj from the
// hidden state to one weight per index head. Its keys are cached (FP8 and one FP32 scale per 128
// elements) beside the MLA latent. REQUIRES: mla with a q_lora_rank.
struct SparseAttentionSpec {
  int64_t index_heads = 0;
  int64_t index_head_dim = 0;
  int64_t top_k = 0;
};

// Block-wise FP8 scales: one scale for each block of `n` output × `k` input weights (Hugging Face
// quantization_config.weight_block_size [n, k] with quant_method fp8).
struct WeightBlock {
  int64_t n = 0, k = 0;
};

struct TrainingSpec {
  int64_t seq_len = 4096;       // tokens per sequence
  int64_t global_batch = 1024;  // sequences per optimizer step
  Precision precision = Precision::bf16;
};

// Local attention on some layers: a sliding window of the last `tokens` keys (Mistral 7B, Gemma
// 2/3) or chunks of `tokens` within which queries attend causally (Llama 4's chunked attention).
enum class WindowKind { sliding, chunked };
struct AttentionWindow {
  int64_t tokens = 0;
  WindowKind kind = WindowKind::sliding;
  // Every global_every-th layer (layers global_every − 1, 2·global_every − 1, …) attends to the
  // whole sequence; 0: every layer is local. Gemma 2: 2; Gemma 3: 6; Llama 4: 4.
  int64_t global_every = 0;
};

struct ModelSpec {
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // default: heads (MHA)
  int64_t head_dim = 0;    // default: hidden / heads
  int64_t ffn_hidden = 0;  // default 4·hidden for gelu/relu; required for swiglu
  int64_t vocab = 0;
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  bool tied_embeddings = false;
  bool dropout = false;  // dropout masks cost activation memory when true
  bool bias = false;     // linear layers carry biases (GPT-2/3, BLOOM); LayerNorm has β anyway
  QkNorm qk_norm = QkNorm::none;
  bool qkv_bias = false;  // Q, K and V projections carry biases though `bias` is false (Qwen2)
  // A learned logit per attention head that every softmax of its layer adds to its keys' (gpt-oss
  // "sinks", GptOssAttention.sinks): `heads` parameters a layer, split with the heads; not priced
  // (one more element in each row's softmax).
  bool attention_sinks = false;
  bool post_norms = false;  // two more norms per layer, after attention and after the MLP
                            // (Gemma 2/3 "sandwich" norms): 4 per layer instead of 2
  // Multi-token-prediction modules after the last layer (DeepSeek-V3 num_nextn_predict_layers,
  // Megatron-Core --mtp-num-layers), trained with the model: each a layer of the last layer's
  // kind behind a projection of [hidden; next token's embedding], with its own pass through the
  // shared LM head and loss. Training places them after the last layer, on the last pipeline
  // chunk (Megatron-Core's placement without a pipeline layout): layer indices layers …
  // layers + mtp_layers − 1 of chunk_boundaries. Serving does not price them (no speculative
  // decoding).
  int64_t mtp_layers = 0;
  AttentionKind attention = AttentionKind::flash;
  PositionEmbedding position_embedding = PositionEmbedding::rope;
  int64_t max_positions = 0;  // rows of a learned position table
  // The longest sequence (prompt + answer) the model serves, as the engines derive it from
  // config.json (hf_config.h: max_position_embeddings, scaled as vLLM scales it under RoPE
  // scaling); 0: not stated, nothing checked. Learned positions: max_positions unless given.
  // `serve` refuses longer requests (vLLM, SGLang and TensorRT-LLM do) and passes the workload's
  // longest to the engines (--max-model-len, --context-length, --max_seq_len). Not a training
  // limit: a run may train past it (context extension).
  int64_t context_tokens = 0;
  // RoPE base frequency θ (Llama 3: 500000). Changes no cost; launcher exports pass it on
  // (Megatron-LM --rotary-base, NeMo rotary_base). 10000 where a config omits it, the default of
  // Hugging Face's RoPE models and of Megatron-LM.
  double rope_theta = 10000;
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::optional<AttentionWindow> window;  // local attention (core/attention_span.h prices it)
  std::optional<SparseAttentionSpec> sparse_attention;  // DSA; never with `window`
  // The weight blocks of the model's published FP8 checkpoint (DeepSeek-V3's own weights,
  // Qwen3's -FP8 releases: 128 × 128), which `serve --weights fp8` takes as what the engine
  // loads; absent: per-tensor or per-channel FP8 (Llama 3.1 FP8, Mixtral FP8, or FP8 quantized
  // on load). Not priced (one scale per 16,384 weights); serving refuses the tensor-parallel
  // splits an engine refuses to load (serving/fp8_block_split.h).
  std::optional<WeightBlock> fp8_weight_block;
  // The model's published checkpoint holds its routed experts in MXFP4 and the rest in BF16
  // (Hugging Face quantization_config quant_method mxfp4: gpt-oss), which `serve --weights auto`
  // searches beside BF16 and FP8 (serving/serving_options.h WeightFormat::mxfp4). REQUIRES moe.
  bool mxfp4_experts = false;
  TrainingSpec training;

  // The keys a query attends to, as a window: `window`, or under sparse attention a sliding
  // window of top_k keys on every layer (a query's top_k best earlier tokens: as many keys as the
  // last top_k, its whole prefix while shorter). What attention's FLOPs and a decode's attention
  // reads follow; what the KV cache keeps is `window`'s alone (sparse attention keeps every token).
  std::optional<AttentionWindow> attended_window() const {
    if (sparse_attention) return AttentionWindow{sparse_attention->top_k, WindowKind::sliding, 0};
    return window;
  }

  // Whether `layer` attends within attended_window() rather than to the whole sequence.
  bool attends_locally(int64_t layer) const {
    if (sparse_attention) return true;
    return window && (window->global_every == 0 || (layer + 1) % window->global_every != 0);
  }

  bool is_moe_layer(int64_t layer) const {
    return moe && layer >= moe->first_dense_layers &&
           (layer - moe->first_dense_layers + 1) % moe->layer_step == 0;
  }
  // MoE layers among layers [begin, end); indices from `layers` on are multi-token-prediction
  // layers, each of the last layer's kind.
  int64_t moe_layers_in(int64_t begin, int64_t end) const;
  int64_t moe_layers() const { return moe_layers_in(0, layers); }
  // The layers training runs: the model's and the multi-token-prediction modules' (mtp_layers).
  int64_t trained_layers() const { return layers + mtp_layers; }
  // Whether the stage holding the LM head keeps its own copy of the word embedding where it does
  // not hold the embedding (synced with the first stage's): for tied embeddings, or for the
  // multi-token-prediction modules (Megatron-Core LanguageModule
  // setup_embeddings_and_output_layer).
  bool head_stage_shares_embedding() const { return tied_embeddings || mtp_layers > 0; }
  int64_t dense_layers() const { return layers - moe_layers(); }
  // Index of the first MoE layer (the one every MoE layer's shape and cost is taken from);
  // `layers` for a dense model.
  int64_t first_moe_layer() const {
    return moe ? moe->first_dense_layers + moe->layer_step - 1 : layers;
  }
  int64_t q_width() const;   // columns of Q = heads · (qk head dim)
  int64_t kv_width() const;  // columns of K (and of V for non-MLA) = kv_heads · head_dim
};

const char* to_string(MlpKind k);
const char* to_string(NormKind k);
const char* to_string(AttentionKind k);
const char* to_string(WindowKind k);
const char* to_string(Precision p);

// Loads a model from our YAML (models/*.yaml) or from a Hugging Face config.json (chosen by
// extension .json). Unknown YAML fields are errors; unknown config.json fields are ignored.
Result<ModelSpec> load_model(const std::string& path);
Result<ModelSpec> parse_model_yaml(const std::string& text, const std::string& file);
Result<ModelSpec> parse_hf_config(const std::string& text, const std::string& file);

}  // namespace meshplan
