// Weight bytes, engine budget rules and max concurrency, hand-derived.
#include "serving/serving_memory.h"

#include <doctest/doctest.h>

#include "serving/kv_cache.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::serving;
using meshplan::testing::shipped_cluster;
using meshplan::testing::shipped_model;

// Llama 3.1 8B: 32 layers × 218,103,808 linear weights (qkv 4096·6144, out 4096², up
// 4096·2·14336, down 14336·4096) + 2·8192 norm weights per layer; embedding and LM head
// 128,256·4096 each; final norm 4096: 8,030,261,248 parameters.
constexpr double kLlama8bLinear = 32.0 * 218'103'808;
constexpr double kLlama8bOther = 2.0 * 128'256 * 4096 + 32 * 8192 + 4096;

TEST_CASE("serving memory: BF16 weights are two bytes per parameter of llama3-8b") {
  const ModelSpec m = shipped_model("llama3-8b");
  CHECK(weight_bytes_per_gpu(m, ServingLayout{}, WeightFormat::bf16) == 2 * 8'030'261'248.0);
}

TEST_CASE("serving memory: FP8 quantizes the linear layers, embedding, head and norms stay BF16") {
  const ModelSpec m = shipped_model("llama3-8b");
  CHECK(weight_bytes_per_gpu(m, ServingLayout{}, WeightFormat::fp8) ==
        kLlama8bLinear + 2 * kLlama8bOther);  // 9,081,200,640
}

TEST_CASE("serving memory: INT4 stores half a byte per weight plus an FP16 scale per 128") {
  const ModelSpec m = shipped_model("llama3-8b");
  CHECK(weight_bytes_per_gpu(m, ServingLayout{}, WeightFormat::int4) ==
        doctest::Approx(kLlama8bLinear * (0.5 + 2.0 / 128) + 2 * kLlama8bOther));
}

TEST_CASE("serving memory: tp splits every weight of llama3-8b evenly (8 KV heads, tp 8)") {
  const ModelSpec m = shipped_model("llama3-8b");
  ServingLayout l;
  l.tp = 8;
  CHECK(weight_bytes_per_gpu(m, l, WeightFormat::bf16) ==
        doctest::Approx(2 * (kLlama8bLinear + 2.0 * 128'256 * 4096) / 8 + 2 * (32 * 8192 + 4096)));
}

TEST_CASE("serving memory: each engine's budget rule") {
  const double cap = 100, weights = 40, act = 5, reserved = 5;
  CHECK(kv_budget_bytes(engine_preset(Engine::vllm), 0.9, cap, weights, act, reserved) ==
        doctest::Approx(40));  // 0.9·100 − 40 − 5 − 5
  CHECK(kv_budget_bytes(engine_preset(Engine::sglang), 0.88, cap, weights, act, reserved) ==
        doctest::Approx(48));  // 0.88·100 − 40
  CHECK(kv_budget_bytes(engine_preset(Engine::trtllm), 0.9, cap, weights, act, reserved) ==
        doctest::Approx(45));  // 0.9·(100 − 50)
  CHECK(kv_budget_bytes(engine_preset(Engine::vllm), 0.9, cap, 95, act, reserved) == 0);
}

namespace {

// Llama 3 70B in FP8 (weights and KV) on 4 H100s under TensorRT-LLM, max batch 256.
ServingMemory llama70b_fp8_tp4_trtllm(int64_t isl, int64_t osl, int64_t prefix_tokens) {
  ServingLayout l;
  l.tp = 4;
  l.max_batch = 256;
  ServingOptions o;
  o.engine = Engine::trtllm;
  o.weights = WeightFormat::fp8;
  o.kv = KvFormat::fp8;
  return serving_memory(shipped_model("llama3-70b"), shipped_cluster("dgx-h100-1n").gpu, l, o, isl,
                        osl, prefix_tokens);
}

}  // namespace

TEST_CASE("serving memory: KV tokens are whole blocks and max concurrency whole requests") {
  const ServingMemory mem = llama70b_fp8_tp4_trtllm(2000, 500, 0);
  CHECK(mem.kv_bytes_per_token == 2 * 2 * 128 * 80);
  CHECK(mem.block_tokens == 32);
  CHECK(mem.kv_tokens % 32 == 0);
  CHECK(mem.kv_tokens ==
        static_cast<int64_t>(mem.kv_budget_bytes / mem.kv_bytes_per_token) / 32 * 32);
  CHECK(mem.tokens_per_request == 2528);
  CHECK(mem.max_concurrency == mem.kv_tokens / 2528);
  CHECK(mem.kv_budget_bytes == doctest::Approx(0.9 * (mem.capacity_bytes - mem.weight_bytes -
                                                      mem.activation_bytes - mem.reserved_bytes)));
}

TEST_CASE(
    "serving memory: a shared prefix is held once per replica and each request holds the rest") {
  const ServingMemory mem = llama70b_fp8_tp4_trtllm(2000, 500, 1000);
  CHECK(mem.prefix.shared_tokens == 992);    // 31 blocks of 32
  CHECK(mem.prefix.reused_tokens == 1000);   // partial reuse
  CHECK(mem.prefix_resident_tokens == 992);  // one cache per replica
  CHECK(mem.tokens_per_request == 1536);     // 2500 - 992 = 1508, rounded up to 48 blocks
  CHECK(mem.max_concurrency == (mem.kv_tokens - 992) / 1536);
}

TEST_CASE("serving memory: a model too big for the GPU leaves no KV and no concurrency") {
  const ModelSpec m = shipped_model("llama3-405b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  const ServingMemory mem = serving_memory(m, c.gpu, ServingLayout{}, ServingOptions{}, 1000, 1000);
  CHECK(mem.kv_budget_bytes == 0);
  CHECK(mem.max_concurrency == 0);
  CHECK_FALSE(mem.fits());
}

TEST_CASE("serving memory: attention-DP keeps whole attention on each rank and tp caches") {
  const ModelSpec m = shipped_model("deepseek-v3");
  const ClusterSpec c = shipped_cluster("dgx-h200-64n");
  ServingLayout tp8, adp8;
  tp8.tp = adp8.tp = 8;
  tp8.ep = adp8.ep = 8;
  tp8.max_batch = adp8.max_batch = 256;
  adp8.attention_dp = true;
  ServingOptions o;
  o.weights = WeightFormat::fp8;
  const ServingMemory a = serving_memory(m, c.gpu, tp8, o, 1024, 1024);
  const ServingMemory b = serving_memory(m, c.gpu, adp8, o, 1024, 1024);
  // The latent is replicated on every TP rank either way: same bytes per token and GPU...
  CHECK(a.kv_bytes_per_token == 576 * 61 * 2);
  CHECK(b.kv_bytes_per_token == a.kv_bytes_per_token);
  // ...but under attention-DP the eight ranks cache different sequences.
  CHECK(b.kv_tokens % 8 == 0);
  CHECK(b.kv_tokens / 8 ==
        static_cast<int64_t>(b.kv_budget_bytes / b.kv_bytes_per_token) / 16 * 16);
  // Whole attention (and dense layers, embedding, head) on every rank costs weight memory.
  CHECK(b.weight_bytes > a.weight_bytes);
  CHECK(b.max_concurrency > a.max_concurrency);
}

namespace {

ModelSpec gpt_oss_120b() {
  Result<ModelSpec> r =
      load_model(std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/hf/gpt-oss-120b.json");
  REQUIRE(r.ok());
  return r.value();
}

// gpt-oss-120b (tests/data/hf/gpt-oss-120b.json): 36 layers, hidden 2,880, 64 query and 8 K/V
// heads of 64, 128 experts 2,880 wide with biases, biased attention maps, a biased router, an
// untied vocabulary of 201,088.
constexpr double kOssExpertWeights = 36.0 * 128 * (2880 * 5760 + 2880 * 2880);  // gate_up, down
constexpr double kOssExpertBiases = 36.0 * 128 * (5760 + 2880);
constexpr double kOssRouter = 36.0 * (2880 * 128 + 128);       // weights and bias
constexpr double kOssNorms = 36.0 * 2 * 2880 + 2880;           // two a layer, the final one
constexpr double kOssEmbeddingAndHead = 2.0 * 201'088 * 2880;  // untied

}  // namespace

TEST_CASE(
    "serving memory: MXFP4 holds gpt-oss-120b's routed experts in 4.25 bits a weight, every "
    "other weight and every bias in BF16") {
  // One GPU: qkv 2,880 → 64·64 + 2·8·64 = 5,120 and out 4,096 → 2,880, biases 5,120 + 2,880.
  const double attention = 36.0 * (2880 * 5120 + 4096 * 2880), attention_biases = 36.0 * 8000;
  const double expected =
      kOssExpertWeights * (0.5 + 1.0 / 32) + 2 * (kOssExpertBiases + attention + attention_biases +
                                                  kOssRouter + kOssNorms + kOssEmbeddingAndHead);
  CHECK(expected == 65'248'811'136.0);  // 60.77 GiB; the checkpoint's safetensors: 60.8 GiB
  CHECK(weight_bytes_per_gpu(gpt_oss_120b(), ServingLayout{}, WeightFormat::mxfp4) == expected);
}

TEST_CASE(
    "serving memory: tp 2 splits column-parallel biases with their maps and keeps row-parallel "
    "ones whole (gpt-oss-120b, MXFP4)") {
  ServingLayout l;
  l.tp = 2;
  // qkv's 5,120 columns (16 K/V heads' worth over 8 groups) split in two, out's 4,096 rows too;
  // qkv's bias splits (2,560 a rank), out's 2,880 stay whole; the router is replicated.
  const double attention = 36.0 * (2880 * 2560 + 2048 * 2880), attention_biases = 36.0 * 5440;
  const double expected = kOssExpertWeights / 2 * (0.5 + 1.0 / 32) +
                          2 * (kOssExpertBiases / 2 + attention + attention_biases + kOssRouter +
                               kOssNorms + kOssEmbeddingAndHead / 2);
  CHECK(weight_bytes_per_gpu(gpt_oss_120b(), l, WeightFormat::mxfp4) == doctest::Approx(expected));
}
