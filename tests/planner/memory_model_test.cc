#include "planner/memory_model.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <string>

#include "planner/activation_memory.h"
#include "planner/param_count.h"
#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

// Decimal places the table printed a number with ("31.4" -> 1).
int decimals(const std::string& s) {
  auto dot = s.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
}

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.head_dim = 128;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.dropout = true;
  m.attention = AttentionKind::standard;
  return m;
}

ActivationShape shape(int64_t tp, bool sp) { return ActivationShape{1, 2048, tp, 1, 1, sp}; }

// Llama 3 70B's layout in the per-stage tests: tp 8, pp 4, dp 16, ZeRO-1.
Layout tp8_pp4_dp16() {
  Layout l;
  l.tp = 8;
  l.pp = 4;
  l.dp = 16;
  l.zero = 1;
  return l;
}

}  // namespace

TEST_CASE("ZeRO Table 1: model-state memory for every DP degree, to the table's rounding") {
  YAML::Node runs = YAML::LoadFile(std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml");
  MemoryOptions zero_paper;
  zero_paper.grad_bytes_per_param = 2;  // the paper's fp16 gradients
  int checked = 0;
  for (const auto& row : runs["zero_model_state_memory_gb"]["rows"]) {
    const double psi = row["params_b"].as<double>() * 1e9;
    for (const auto& by_dp : row["by_dp"]) {
      const int64_t dp = by_dp.first.as<int64_t>();
      for (int stage = 1; stage <= 3; ++stage) {
        const std::string printed = by_dp.second[stage - 1].Scalar();
        const double table_gb = by_dp.second[stage - 1].as<double>();
        const double ours_gb = model_state_bytes(psi, stage, dp, zero_paper).total() / 1e9;
        CAPTURE(psi);
        CAPTURE(dp);
        CAPTURE(stage);
        // The table rounds or truncates to its last printed digit.
        CHECK(std::fabs(ours_gb - table_gb) < std::pow(10.0, -decimals(printed)));
        ++checked;
      }
    }
  }
  CHECK(checked == 54);
}

TEST_CASE("ZeRO example: 7.5B parameters on DP 64 need 120, 31.4, 16.6 and 1.9 GB") {
  MemoryOptions o;
  o.grad_bytes_per_param = 2;
  CHECK(model_state_bytes(7.5e9, 0, 64, o).total() == doctest::Approx(120e9).epsilon(1e-12));
  CHECK(model_state_bytes(7.5e9, 1, 64, o).total() == doctest::Approx(31.40625e9).epsilon(1e-12));
  CHECK(model_state_bytes(7.5e9, 2, 64, o).total() == doctest::Approx(16.640625e9).epsilon(1e-12));
  CHECK(model_state_bytes(7.5e9, 3, 64, o).total() == doctest::Approx(1.875e9).epsilon(1e-12));
}

TEST_CASE("Korthikanti: GPT-3 175B layer stores sbh(34 + 5as/h) bytes with no parallelism") {
  const double s = 2048, b = 1, h = 12288, a = 96;
  LayerActivations act = layer_activations(gpt3_175b(), 0, shape(1, false));
  CHECK(act.no_recompute() == doctest::Approx(s * b * h * (34 + 5 * a * s / h)).epsilon(1e-9));
}

TEST_CASE("Korthikanti: tensor parallelism alone leaves 10·sbh replicated") {
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  LayerActivations act = layer_activations(gpt3_175b(), 0, shape(8, false));
  CHECK(act.no_recompute() ==
        doctest::Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))).epsilon(1e-9));
}

TEST_CASE("Korthikanti: sequence parallelism splits the rest: sbh(34/t + 5as/(ht))") {
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  LayerActivations act = layer_activations(gpt3_175b(), 0, shape(8, true));
  CHECK(act.no_recompute() ==
        doctest::Approx(s * b * h * (34 / t + 5 * a * s / (h * t))).epsilon(1e-9));
  CHECK(act.stored(Recompute::selective) == doctest::Approx(34 * s * b * h / t).epsilon(1e-9));
  CHECK(act.stored(Recompute::full) == doctest::Approx(2 * s * b * h / t).epsilon(1e-9));
}

TEST_CASE("flash attention drops the s² scores and keeps fp32 softmax statistics") {
  ModelSpec m = gpt3_175b();
  m.attention = AttentionKind::flash;
  m.dropout = false;
  const double s = 2048, h = 12288, a = 96, t = 8;
  LayerActivations act = layer_activations(m, 0, shape(8, true));
  // 34 − 2 dropout masks = 32·sbh/t, plus 4 bytes per query and head.
  CHECK(act.no_recompute() == doctest::Approx(32 * s * h / t + 4 * s * a / t).epsilon(1e-9));
}

TEST_CASE("in-flight micro-batches: 1F1B p − i, GPipe m, interleaved 1 + (p−1)/(p·v) times p") {
  Layout l;
  l.pp = 4;
  l.schedule = Schedule::one_f_one_b;
  CHECK(in_flight_micro_batches(l, 8, 0) == 4);
  CHECK(in_flight_micro_batches(l, 8, 3) == 1);
  CHECK(in_flight_micro_batches(l, 2, 0) == 2);
  l.schedule = Schedule::gpipe;
  CHECK(in_flight_micro_batches(l, 8, 3) == 8);
  l.schedule = Schedule::interleaved;
  l.vpp = 2;
  CHECK(in_flight_micro_batches(l, 8, 0) == doctest::Approx(4 * (1 + 3.0 / 8)));
}

TEST_CASE("per-stage model states: first and last stages carry embeddings and the LM head") {
  ModelSpec m = testing::shipped_model("llama3-70b");
  Layout l = tp8_pp4_dp16();
  std::vector<StageParams> s = stage_params(m, l);
  const int64_t per_layer_split = (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672) / 8;
  const int64_t norms = 2 * 8192;
  CHECK(s[1].dense_per_gpu == 20 * (per_layer_split + norms));
  CHECK(s[0].dense_per_gpu == 20 * (per_layer_split + norms) + 128256 * 8192 / 8);
  CHECK(s[3].dense_per_gpu == 20 * (per_layer_split + norms) + 128256 * 8192 / 8 + 8192);
  GpuSpec gpu{"g", 1e15, 0, 80LL << 30, 3e12, "", 0, {}};
  MemoryEstimate e = estimate_memory(m, gpu, l, {8192, 1024, Precision::bf16});
  const double p1 = static_cast<double>(s[1].dense_per_gpu);
  CHECK(e.stages[1].params_bytes == doctest::Approx(2 * p1));
  CHECK(e.stages[1].grads_bytes == doctest::Approx(4 * p1));
  CHECK(e.stages[1].optimizer_bytes == doctest::Approx(12 * p1 / 16));
  CHECK(e.stages[1].in_flight_micro_batches == 3);
  CHECK(e.peak_stage == 0);
  CHECK(e.fits());
}

TEST_CASE("dualpipe: each rank also holds the mirror stage, so twice the parameters") {
  ModelSpec m = testing::shipped_model("llama3-70b");
  Layout l = tp8_pp4_dp16();
  l.schedule = Schedule::dualpipe;
  std::vector<StageParams> s = stage_params(m, l);
  const int64_t per_layer_split = (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672) / 8;
  const int64_t layer = per_layer_split + 2 * 8192;
  const int64_t embedding = 128256 * 8192 / 8;
  // Ranks 1 and 2 hold stages 1 and 2 (40 layers); ranks 0 and 3 stages 0 and 3 with the
  // embedding, the LM head and the final norm.
  CHECK(s[1].dense_per_gpu == 40 * layer);
  CHECK(s[2].dense_per_gpu == 40 * layer);
  CHECK(s[0].dense_per_gpu == 40 * layer + 2 * embedding + 8192);
  CHECK(s[3].dense_per_gpu == s[0].dense_per_gpu);
  CHECK(s[0].layers == 40);
  // Activations: (pp + 1)/2 micro-batches of a rank's two stages, the repository's "PP + 1".
  CHECK(in_flight_micro_batches(l, 64, 0) == 2.5);
}

TEST_CASE("dualpipev: the V puts the first and last chunks, embedding and LM head, on rank 0") {
  ModelSpec m = testing::shipped_model("llama3-70b");
  Layout l = tp8_pp4_dp16();
  l.vpp = 2;
  l.schedule = Schedule::dualpipev;
  std::vector<StageParams> s = stage_params(m, l);
  const int64_t per_layer_split = (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672) / 8;
  const int64_t layer = per_layer_split + 2 * 8192;
  CHECK(s[0].dense_per_gpu == 20 * layer + 128256 * 8192 / 8 + 128256 * 8192 / 8 + 8192);
  CHECK(s[3].dense_per_gpu == 20 * layer);  // chunks 3 and 4: the V's turn
  CHECK(stage_layer_mix(m, l)[3].dense_layers == 20);
  GpuSpec gpu{"g", 1e15, 0, 80LL << 30, 3e12, "", 0, {}};
  MemoryEstimate e = estimate_memory(m, gpu, l, {8192, 1024, Precision::bf16});
  CHECK(e.stages[0].logits_bytes > 0);
  CHECK(e.stages[3].logits_bytes == 0);
  CHECK(e.stages[1].in_flight_micro_batches == 4.5);  // (2·4 + 1)/2
}

TEST_CASE("uniform full recompute keeps every N-th layer input and rebuilds N layers at once") {
  ModelSpec m = testing::shipped_model("llama3-70b");
  Layout l = tp8_pp4_dp16();
  l.recompute = Recompute::full;
  GpuSpec gpu{"g", 1e15, 0, 80LL << 30, 3e12, "", 0, {}};
  const TrainingSpec t{8192, 1024, Precision::bf16};
  const LayerActivations a = layer_activations(m, 0, activation_shape(l, t.seq_len));
  const StageMemory every = estimate_memory(m, gpu, l, t).stages[1];
  // Every layer (N = 1): 20 inputs per micro-batch, one layer rebuilt at a time; 3 in flight.
  CHECK(every.activations_bytes == doctest::Approx(3 * 20 * a.layer_input + a.no_recompute()));
  l.recompute_layers = 4;  // groups of 4: 5 inputs kept, 4 layers rebuilt at once
  const StageMemory grouped = estimate_memory(m, gpu, l, t).stages[1];
  CHECK(grouped.activations_bytes == doctest::Approx(3 * 5 * a.layer_input + 4 * a.no_recompute()));
  CHECK(short_label(l) == "tp8 pp4 dp16 z1 mbs1 full/4 1f1b");
}

TEST_CASE("FP8 training stores the four linear-layer inputs in one byte instead of two") {
  // GPT-3 175B with TP 8 and SP: per token, the QKV input (h/t), the out-projection input (h/t),
  // the MLP input (h/t) and the down-projection input (4h/t) each lose one byte.
  const double s = 2048, h = 12288, t = 8;
  ActivationShape bf16 = shape(8, true), fp8 = shape(8, true);
  fp8.fp8 = true;
  const LayerActivations a = layer_activations(gpt3_175b(), 0, bf16);
  const LayerActivations b = layer_activations(gpt3_175b(), 0, fp8);
  CHECK(a.no_recompute() - b.no_recompute() ==
        doctest::Approx(s * (h + h + h + 4 * h) / t).epsilon(1e-12));
}

TEST_CASE("FP8 activations of a small flash-attention layer, by hand, per recompute mode") {
  // h = 1024, 8 heads of 128, GELU MLP of 4h, no dropout, flash attention; tp 1, b = 1,
  // s = 1024: T = 1024 tokens. Per token, in BF16: norm and QKV inputs 2h + 2h; Q, K, V 6h;
  // out-projection input (flash attention's output) 2h; log-sum-exp 4 B × 8 heads; MLP norm
  // and MLP inputs 2h + 2h; GELU input 2·4h; down-projection input 2·4h: 32h + 32 bytes.
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  const double T = 1024, h = 1024;
  ActivationShape a{1, 1024, 1, 1, 1, false};
  const LayerActivations bf16 = layer_activations(m, 0, a);
  CHECK(bf16.no_recompute() == T * (32 * h + 32));
  CHECK(bf16.selective() == bf16.no_recompute());  // flash attention: no scores to drop
  CHECK(bf16.stored(Recompute::full) == 2 * T * h);
  // FP8 with Transformer Engine: the QKV, MLP and down-projection inputs take 1 byte (h + h +
  // 4h saved); the out-projection keeps a 1-byte FP8 cast beside flash attention's 2-byte
  // output (h more): 27h + 32 per token.
  a.fp8 = true;
  const LayerActivations fp8 = layer_activations(m, 0, a);
  CHECK(fp8.no_recompute() == T * (27 * h + 32));
  CHECK(bf16.no_recompute() - fp8.no_recompute() == 5 * T * h);
  // Recomputing the attention core drops the BF16 attention output only: 25h + 32.
  CHECK(fp8.attention_scores == 2 * T * h);
  CHECK(fp8.stored(Recompute::selective) == T * (25 * h + 32));
  // Full recompute keeps the BF16 layer input either way.
  CHECK(fp8.stored(Recompute::full) == 2 * T * h);
  // torchao's Float8Linear saves the BF16 inputs: as BF16.
  a.fp8_quantized_inputs = false;
  CHECK(layer_activations(m, 0, a).no_recompute() == bf16.no_recompute());
  CHECK(layer_activations(m, 0, a).attention_scores == 0);
}

TEST_CASE("FP8 delayed scaling keeps 5 quantizers' scale, scale_inv and amax history per GEMM") {
  // Per GEMM: 5 quantizers × 4 B × (2 + history). Megatron-Core (history 1): 60 B; NeMo and
  // Transformer Engine's default (1024): 20,520 B; current scaling: none.
  MemoryOptions o;
  CHECK(fp8_scaling_bytes_per_gemm(o) == 60);
  o.fp8_amax_history_len = 1024;
  CHECK(fp8_scaling_bytes_per_gemm(o) == 20520);
  o.fp8_amax_history_len = 0;
  CHECK(fp8_scaling_bytes_per_gemm(o) == 0);
  // Llama 3 70B: 4 GEMMs a layer (QKV, out-projection, gate/up, down); a middle stage of
  // tp8 pp4 holds 20 layers: 80 GEMMs, 4,800 B under Megatron-Core, 1,641,600 B under NeMo.
  const ModelSpec m = testing::shipped_model("llama3-70b");
  CHECK(layer_params(m, 0).gemms == 4);
  Layout l = tp8_pp4_dp16();
  CHECK(stage_params(m, l)[1].fp8_gemms == 80);
  GpuSpec gpu{"g", 1e15, 2e15, 80LL << 30, 3e12, "", 0, {}};
  const TrainingSpec fp8{8192, 1024, Precision::fp8};
  CHECK(estimate_memory(m, gpu, l, fp8).stages[1].fp8_scaling_bytes == 4800);
  MemoryOptions nemo;
  nemo.fp8_amax_history_len = 1024;
  CHECK(estimate_memory(m, gpu, l, fp8, nemo).stages[1].fp8_scaling_bytes == 1641600);
  CHECK(estimate_memory(m, gpu, l, {8192, 1024, Precision::bf16}).stages[1].fp8_scaling_bytes == 0);
  // Mixtral 8x7B: the router stays BF16; 8 experts' up and down GEMMs, 4 per rank at ep 2.
  const ModelSpec mixtral = testing::shipped_model("mixtral-8x7b");
  CHECK(layer_params(mixtral, 0).gemms == 2);
  CHECK(layer_params(mixtral, 0).expert_gemms == 16);
  Layout moe;
  moe.ep = 2;
  moe.dp = 2;
  CHECK(stage_params(mixtral, moe)[0].fp8_gemms == mixtral.layers * (2 + 8));
}

TEST_CASE("the memory estimate sets the peak stage's FP8 activations beside their BF16 size") {
  const ModelSpec m = testing::shipped_model("llama3-70b");
  Layout l = tp8_pp4_dp16();
  GpuSpec gpu{"g", 1e15, 2e15, 80LL << 30, 3e12, "", 0, {}};
  const MemoryEstimate bf16 = estimate_memory(m, gpu, l, {8192, 1024, Precision::bf16});
  const MemoryEstimate fp8 = estimate_memory(m, gpu, l, {8192, 1024, Precision::fp8});
  CHECK_FALSE(bf16.fp8);
  CHECK(fp8.fp8);
  const auto peak = static_cast<size_t>(fp8.peak_stage);
  CHECK(fp8.peak_bf16_activations_bytes == bf16.stages[peak].activations_bytes);
  CHECK(fp8.stages[peak].activations_bytes < bf16.stages[peak].activations_bytes);
}

TEST_CASE(
    "FP8 training keeps 2 bytes per linear-layer parameter for cached FP8 weights and "
    "transposes, none with FP8 parameters, under BF16 or under ZeRO-3") {
  // Llama 3 70B, tp 8, pp 4: a middle stage holds 20 layers of
  // (2·8192² + 2·8192·1024 + 3·8192·28672) / 8 linear parameters (norms and embeddings excluded).
  ModelSpec m = testing::shipped_model("llama3-70b");
  Layout l = tp8_pp4_dp16();
  const int64_t linear = 20 * ((2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672) / 8);
  CHECK(stage_params(m, l)[1].linear_per_gpu == linear);
  CHECK(stage_params(m, l)[0].linear_per_gpu == linear);  // the embedding is not a linear map
  GpuSpec gpu{"g", 1e15, 2e15, 80LL << 30, 3e12, "", 0, {}};
  const MemoryEstimate fp8 = estimate_memory(m, gpu, l, {8192, 1024, Precision::fp8});
  CHECK(fp8.stages[1].fp8_weight_cache_bytes == doctest::Approx(2.0 * linear));
  // FP8 parameters: the FP8 weight and its transpose take the BF16 weight's 2 bytes.
  MemoryOptions fp8_params;
  fp8_params.fp8_params = true;
  CHECK(estimate_memory(m, gpu, l, {8192, 1024, Precision::fp8}, fp8_params)
            .stages[1]
            .fp8_weight_cache_bytes == 0);
  const MemoryEstimate bf16 = estimate_memory(m, gpu, l, {8192, 1024, Precision::bf16});
  CHECK(bf16.stages[1].fp8_weight_cache_bytes == 0);
  l.zero = 3;
  CHECK(estimate_memory(m, gpu, l, {8192, 1024, Precision::fp8}).stages[1].fp8_weight_cache_bytes ==
        0);
  // A GPU without FP8 tensor cores runs the job in BF16: nothing cached.
  GpuSpec no_fp8{"g", 1e15, 0, 80LL << 30, 3e12, "", 0, {}};
  l.zero = 1;
  CHECK(estimate_memory(m, no_fp8, l, {8192, 1024, Precision::fp8})
            .stages[1]
            .fp8_weight_cache_bytes == 0);
}

TEST_CASE("an interleaved MoE model's stages hold its dense and MoE layers as they alternate") {
  // Llama 4 Maverick, 48 layers, MoE on layers 1, 3, …, 47. pp = 4: 12 layers a stage, 6 of each;
  // pp = 3 with vpp = 2: chunks of 8 layers, 4 of each.
  const ModelSpec m = testing::shipped_model("llama4-maverick");
  Layout l = parse_layout("tp=2,pp=4,dp=64,ep=64", "test").value();
  for (const StageLayerMix& x : stage_layer_mix(m, l)) {
    CHECK(x.dense_layers == 6);
    CHECK(x.moe_layers == 6);
  }
  l = parse_layout("tp=2,pp=3,vpp=2,dp=64,ep=64,schedule=interleaved", "test").value();
  for (const StageLayerMix& x : stage_layer_mix(m, l)) {
    CHECK(x.dense_layers == 8);
    CHECK(x.moe_layers == 8);
  }
}

TEST_CASE("the search's memory totals equal the built stage's sums bit for bit, stage by stage") {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const TrainingSpec t{4096, 64, Precision::bf16};
  const MemoryOptions o;
  for (const char* text :
       {"tp=2,pp=4,dp=4,ep=4,zero=3,mbs=1,vpp=2,schedule=interleaved",
        "tp=4,pp=2,dp=4,ep=2,zero=0,mbs=2,recompute=selective,recompute_layers=3",
        "tp=1,pp=8,dp=4,ep=4,zero=2,mbs=1,recompute=full,recompute_layers=2"}) {
    CAPTURE(text);
    Layout l = parse_layout(text, "test").value();
    REQUIRE(check_layout(l, m, 32, t).empty());
    ActivationShape shape = activation_shape(l, t.seq_len);
    const LayerActivations dense = layer_activations(m, 0, shape);
    const LayerActivations moe = layer_activations(m, m.moe->first_dense_layers, shape);
    const std::vector<StageLayerMix> mix = stage_layer_mix(m, l);
    const int64_t micro_batches = t.global_batch / (l.dp * l.mbs);
    for (const StageParams& p : stage_params(m, l)) {
      const StageLayerMix& x = mix[static_cast<size_t>(p.stage)];
      const StageMemory frame = stage_memory_frame(p, l, micro_batches, 1e9, false, o);
      const StageActivations a = stage_activations(x, dense, moe, l, p.stage);
      const StageTotals totals = stage_totals(frame, a, o);
      const StageMemory built = stage_memory(p, x, dense, moe, l, micro_batches, 1e9, false, o);
      CHECK(totals.total == built.total_bytes());
      CHECK(totals.states == built.params_bytes + built.grads_bytes + built.optimizer_bytes);
      CHECK(totals.activations == built.activations_bytes);
      CHECK(totals.other == built.other_bytes());
      // From the frame's sums (the search's cache) the same, bit for bit.
      const StageTotals summed = stage_totals(frame_sums(frame), a, o);
      CHECK(summed.total == totals.total);
      CHECK(summed.states == totals.states);
      CHECK(summed.activations == totals.activations);
      CHECK(summed.other == totals.other);
    }
  }
}

namespace {

// Each stage of mixtral-8x7b's frames for BF16 and FP8 (scaling state, weight cache) under
// layouts with interleaved chunks, a V-shaped schedule (logits on stage 0) and a shard group:
// `check(p, l, micro_batches, fp8, o)`, the ZeRO-3 buffer capped so that it differs from the
// default and FP8 scaling state kept.
template <class Check>
void for_each_frame_case(Check check) {
  const ModelSpec m = testing::shipped_model("mixtral-8x7b");
  const TrainingSpec t{4096, 64, Precision::bf16};
  MemoryOptions o;
  o.zero3_max_live_params = 1e8;
  o.fp8_amax_history_len = 16;
  for (const bool fp8 : {false, true})
    for (const char* text : {"tp=2,pp=4,dp=4,ep=4,mbs=1,vpp=2,schedule=interleaved",
                             "tp=1,pp=4,dp=4,ep=2,mbs=1,vpp=2,schedule=dualpipev",
                             "tp=1,pp=8,dp=4,ep=2,mbs=1,shard=2"}) {
      CAPTURE(fp8);
      CAPTURE(text);
      Layout l = parse_layout(text, "test").value();
      const int64_t micro_batches = t.global_batch / (l.dp * l.mbs);
      for (const StageParams& p : stage_params(m, l)) {
        CAPTURE(p.stage);
        check(p, l, micro_batches, fp8, o);
      }
    }
}

}  // namespace

TEST_CASE("a frame takes another ZeRO stage's terms and becomes that stage's frame bit for bit") {
  for_each_frame_case(
      [](const StageParams& p, Layout l, int64_t micro_batches, bool fp8, const MemoryOptions& o) {
        for (int from = 0; from <= 3; ++from)
          for (int to = 0; to <= 3; ++to) {
            if ((from == 0 || to == 0) && l.shard > 0) continue;  // a shard group shards: ZeRO ≥ 1
            l.zero = from;
            StageMemory frame = stage_memory_frame(p, l, micro_batches, 1e9, fp8, o);
            l.zero = to;
            set_zero_terms(frame, p, l, fp8, o);
            const StageMemory own = stage_memory_frame(p, l, micro_batches, 1e9, fp8, o);
            CHECK(frame.params_bytes == own.params_bytes);
            CHECK(frame.grads_bytes == own.grads_bytes);
            CHECK(frame.optimizer_bytes == own.optimizer_bytes);
            CHECK(frame.zero3_buffer_bytes == own.zero3_buffer_bytes);
            CHECK(frame.fp8_weight_cache_bytes == own.fp8_weight_cache_bytes);
            CHECK(frame.total_bytes() == own.total_bytes());
            CHECK(frame_sums(frame).states == frame_sums(own).states);
            CHECK(frame_sums(frame).fixed_other == frame_sums(own).fixed_other);
          }
      });
}

TEST_CASE("a frame's sums from its two parts equal the built frame's sums bit for bit") {
  // The search sums frames without building them (CostModel::sums_by_zero): every field of
  // frame_sums, each ZeRO stage.
  for_each_frame_case(
      [](const StageParams& p, Layout l, int64_t micro_batches, bool fp8, const MemoryOptions& o) {
        for (int zero = l.shard > 0 ? 1 : 0; zero <= 3; ++zero) {
          CAPTURE(zero);
          l.zero = zero;
          const FrameSums built = frame_sums(stage_memory_frame(p, l, micro_batches, 1e9, fp8, o));
          const FrameSums parts =
              frame_sums(frame_fixed(p, l, micro_batches, 1e9, fp8, o), zero_terms(p, l, fp8, o));
          CHECK(parts.in_flight_micro_batches == built.in_flight_micro_batches);
          CHECK(parts.states == built.states);
          CHECK(parts.logits == built.logits);
          CHECK(parts.zero3_buffer == built.zero3_buffer);
          CHECK(parts.fp8_weight_cache == built.fp8_weight_cache);
          CHECK(parts.fp8_scaling == built.fp8_scaling);
          CHECK(parts.fixed_other == built.fixed_other);
        }
      });
}

TEST_CASE("stage activations from their terms equal stage_activations bit for bit") {
  // Llama 4 Maverick alternates dense and MoE layers; DeepSeek-V3 leads with dense ones.
  for (const char* name : {"llama4-maverick", "deepseek-v3", "mixtral-8x7b"}) {
    CAPTURE(name);
    const ModelSpec m = testing::shipped_model(name);
    Layout l = parse_layout("tp=2,pp=4,dp=8,ep=8,mbs=1", "test").value();
    const ActivationShape shape = activation_shape(l, 4096);
    const LayerActivations dense = layer_activations(m, 0, shape);
    const LayerActivations moe = layer_activations(m, m.first_moe_layer(), shape);
    const std::vector<StageLayerMix> mix = stage_layer_mix(m, l);
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
      for (RecomputeModules modules :
           {kDefaultRecomputeModules,
            static_cast<RecomputeModules>(bit(RecomputeModule::mlp) | bit(RecomputeModule::moe))}) {
        l.recompute = r, l.recompute_modules = modules;
        for (size_t stage = 0; stage < mix.size(); ++stage) {
          const StageActivationTerms terms =
              stage_activation_terms(mix[stage], dense, moe, r, modules);
          // Full recompute counts above 1 are uniform groups, which the terms do not serve.
          const int64_t most = r == Recompute::full ? 1 : mix[stage].layers() + 2;
          for (int64_t layers = 0; layers <= most; ++layers) {
            CAPTURE(static_cast<int>(r));
            CAPTURE(stage);
            CAPTURE(layers);
            l.recompute_layers = layers;
            const StageActivations a =
                stage_activations(mix[stage], dense, moe, l, static_cast<int64_t>(stage));
            const StageActivations b = stage_activations(terms, layers);
            CHECK(a.per_micro_batch == b.per_micro_batch);
            CHECK(a.recompute_buffer == b.recompute_buffer);
            CHECK(a.first_layer == b.first_layer);
          }
        }
      }
    }
  }
}

TEST_CASE("FP8 parameters are gathered in FP8: a linear weight one byte, every other two") {
  MemoryOptions o;
  CHECK(gathered_bytes_per_param(1000, 800, true, o) == 2);  // BF16 parameters
  o.fp8_params = true;
  CHECK(gathered_bytes_per_param(1000, 800, false, o) == 2);  // a BF16 job
  CHECK(gathered_bytes_per_param(1000, 800, true, o) == (1000 * 2 - 800) / 1000.0);
  CHECK(gathered_bytes_per_param(0, 0, true, o) == 2);
  // ZeRO-3 holds two layers gathered: 2 × (200 × 2 + 800 × 1) bytes for a one-layer stage.
  StageParams p;
  p.layers = 1, p.dense_per_gpu = 1000, p.linear_per_gpu = 800;
  Layout l;
  l.dp = 8, l.zero = 3;
  CHECK(stage_memory_frame(p, l, 1, 0, true, o).zero3_buffer_bytes == 2 * (400 + 800));
  o.fp8_params = false;
  CHECK(stage_memory_frame(p, l, 1, 0, true, o).zero3_buffer_bytes == 2 * 2000);
}
