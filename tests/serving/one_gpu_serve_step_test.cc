// The serving step-time model against one measured GPU: whole engine steps (decode batches and
// prefills) of Llama 3.1 8B, Llama 3 70B layers and Mixtral layers on one H200
// (tests/data/one_gpu_serve_steps/steps-h200.json, scripts/device/measure_serve_step.py: the
// step captured in one CUDA graph, its layers compiled by torch.compile as vLLM V1 compiles
// them), priced by serving/step_time.h with the profile measured on that GPU and no engine
// host overhead (the replayed graph has no scheduler). A TP rank is measured without its
// all-reduces and samples its own share of the vocabulary, so the prediction's communication and
// the rest of the vocabulary's sampling are left out too. Mean |error| per profile
// (21 steps each), before → after the serving roofline took the best CTA tile for skinny GEMMs
// (planner/gemm_model.h best_tile_wave_efficiency): h100-published 9.3% → 4.1% (max 40% → 11%),
// h200-published 12.7% → 6.7% (max 51% → 19%), h100-measured 10.4% → 7.8%, h200-measured 12.0%
// → 6.2% (max 45% → 17%). Then each kernel paid its fixed cost on top of its work instead of the
// larger of the two (serving/step_time.h kKernelLatencyS, after one TP rank's steps at TP 1-8,
// steps-h200-tp.json, showed the fixed cost unpriced at high TP): h100-published 4.1% → 7.2%
// (max 11% → 14%), h200-published 6.7% → 11.0% (max 19% → 23%), h100-measured 7.8% → 3.7% (max
// 18% → 8%), h200-measured 6.2% → 3.1% (max 17% → 7%); FP8 (published, measured): H100 8% → 5.4%
// and 16.5% → 9.7%, H200 8% → 6.3% and 17.5% → 9.6%.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "planner/profile_lookup.h"
#include "serving/step_time.h"
#include "tests/test_inputs.h"

namespace {

using namespace meshplan;
using namespace meshplan::serving;

const std::string kSource = std::string(MESHPLAN_SOURCE_DIR) + "/";

// A step of the file as the engine's scheduler hands it to the model: decodes (each reading its
// cached tokens and the new one), a prompt chunk (after `chunk_context` of its prompt cached), or
// both (mixed); every decode and a chunk's last token sample.
StepBatch batch_of(const nlohmann::json& step) {
  StepBatch b;
  const std::string kind = step["kind"];
  if (kind == "decode" || kind == "mixed") {
    b.decodes = step["batch"];
    b.sampled = b.decodes;
    b.decode_context_tokens = static_cast<double>(b.decodes) * (step["context"].get<double>() + 1);
  }
  if (kind == "prefill" || kind == "mixed") {
    b.chunks.push_back({step["tokens"].get<int64_t>(), step.value("chunk_context", int64_t{0})});
    b.sampled += 1;
  }
  return b;
}

double predicted_ms(const nlohmann::json& step, const ClusterSpec& cluster,
                    const CalibrationProfile& profile) {
  Result<ModelSpec> model = load_model(kSource + step["model_file"].get<std::string>());
  REQUIRE(model.ok());
  ServingLayout layout;
  layout.tp = step["tp"];
  ServingOptions options;
  if (step.value("weights", "bf16") == "fp8") options.weights = WeightFormat::fp8;
  const StepTimeModel m(model.value(), cluster, profile, layout, options, HostOverhead{});
  const StepBatch batch = batch_of(step);
  const StepBreakdown t = m.time(batch);
  // The measured rank samples its own vocab / tp columns of the logits (the script gathers
  // none), where an engine samples the whole vocabulary on every rank: the rest of the FP32
  // logits' write and read is left out with the communication.
  const double tp = static_cast<double>(layout.tp);
  const double unsampled_logit_bytes = 2 * static_cast<double>(batch.sampled) *
                                       static_cast<double>(model.value().vocab) * (1 - 1 / tp) * 4;
  return 1e3 * (t.total_s() - t.communication_s -
                unsampled_logit_bytes / read_bandwidth(profile, cluster.gpu));
}

struct MeasuredGpu {
  const char* steps_file;  // under tests/data/one_gpu_serve_steps/
  const char* cluster;     // a topology of that GPU
  const char* profile;     // a profile of it
};

// Each step's relative error (predicted / measured − 1) against its torch.compile build, in the
// file's order.
std::vector<double> step_errors(const MeasuredGpu& gpu) {
  const ClusterSpec cluster = meshplan::testing::shipped_cluster(gpu.cluster);
  Result<CalibrationProfile> profile =
      resolve_profile(cluster, kSource + "profiles/" + gpu.profile, ProfileSearchPath{});
  REQUIRE(profile.ok());
  // The steps ran PyTorch's SDPA, not an engine's own attention kernels: the profile's samples
  // of those (step_time.h prompt_attention_kernels) are left out, so the prompts' attention
  // takes the kernels SDPA dispatches to (FlashAttention, cuDNN).
  std::erase_if(profile.value().attention, [](const AttentionSample& s) {
    for (const char* engine : {"vllm", "sglang", "trtllm"})
      if (s.kernel.rfind(engine, 0) == 0) return true;
    return false;
  });
  std::ifstream in(kSource + "tests/data/one_gpu_serve_steps/" + gpu.steps_file);
  const nlohmann::json data = nlohmann::json::parse(in);
  std::vector<double> errors;
  for (const nlohmann::json& step : data["steps"]) {
    if (!step.contains("compiled_ms")) continue;  // MoE steps: graph build only
    const double measured = step["compiled_ms"];
    const double predicted = predicted_ms(step, cluster, profile.value());
    CAPTURE(step.dump());
    CAPTURE(predicted);
    errors.push_back(predicted / measured - 1);
  }
  return errors;
}

void check_errors(const std::vector<double>& errors, double max_abs, double mean_abs,
                  size_t steps = 21) {
  REQUIRE(errors.size() == steps);
  double sum_abs = 0;
  for (size_t i = 0; i < errors.size(); ++i) {
    CAPTURE(i);  // the step's index among the file's compiled steps
    CHECK(std::fabs(errors[i]) <= max_abs);
    sum_abs += std::fabs(errors[i]);
  }
  CHECK(sum_abs / static_cast<double>(errors.size()) <= mean_abs);
}

}  // namespace

TEST_CASE(
    "one H100's serving steps are priced within 15% each and 7.5% on average (published profile)") {
  check_errors(step_errors({"steps-h100.json", "dgx-h100-1n", "h100-published.yaml"}), 0.15, 0.075);
}

// The published H200 HBM figure (3534 GB/s, gpu-stream triad) is below what these steps stream
// (the measured copy rate is 4260): with each kernel's fixed cost on top, decode comes out 12-15%
// slow on average with it, 0-3% with the measured profile.
TEST_CASE(
    "one H200's serving steps are priced within 24% each and 11.5% on average (published "
    "profile)") {
  check_errors(step_errors({"steps-h200.json", "dgx-h200-64n", "h200-published.yaml"}), 0.24,
               0.115);
}

TEST_CASE(
    "one H100's serving steps are priced within 8% each and 4% on average (measured profile)") {
  check_errors(step_errors({"steps-h100.json", "dgx-h100-1n", "h100-measured.yaml"}), 0.08, 0.04);
}

TEST_CASE(
    "one H200's serving steps are priced within 8% each and 3.5% on average (measured profile)") {
  check_errors(step_errors({"steps-h200.json", "dgx-h200-64n", "h200-measured.yaml"}), 0.08, 0.035);
}

// One tensor-parallel rank's steps (its shard widths, no all-reduce) at TP 1, 2, 4 and 8:
// Llama 3.1 8B, Llama 3 70B and Qwen3-32B (8 layers each for the two larger), decode batches 1-64
// at 2,048 cached tokens and Qwen3-32B prefills of 2,048 tokens (steps-h200-tp.json, measured on
// 2026-11-27). Pricing each kernel at the larger of its work and a floor left the fixed cost per
// kernel out as the shards shrank: mean signed decode error tp1 −1%, tp2 −6%, tp4 −12%, tp8 −20%
// with the published profile (11.6% mean |error|, worst −37%; measured profile 21.1%, worst
// −41%). With the fixed cost on top of the work: +2.6%, +2.3%, +1.5%, −1.7% (6.6%, worst 17%);
// with the measured profile −13%, −11%, −10%, −10% (11.3%, worst 22%: its copy-rate HBM is faster
// than small-batch weight streams).
TEST_CASE(
    "one H200 tensor-parallel rank's steps at TP 1-8 are priced within 17% each and 7% on "
    "average (published profile)") {
  check_errors(step_errors({"steps-h200-tp.json", "dgx-h200-64n", "h200-published.yaml"}), 0.17,
               0.07, 52);
}

TEST_CASE(
    "one H200 tensor-parallel rank's steps at TP 1-8 are priced within 22% each and 11.5% on "
    "average (measured profile)") {
  check_errors(step_errors({"steps-h200-tp.json", "dgx-h200-64n", "h200-measured.yaml"}), 0.22,
               0.115, 52);
}

// The same 52 steps on an H100 (steps-h100-tp.json, the same day): with the larger of work and
// floor, mean signed decode error tp1 +1.5%, tp2 −2.4%, tp4 −8.0%, tp8 −16.4% with the published
// profile (7.7% mean |error|, worst 32%; measured profile −12.8% to −24.8%, 17.2%, worst 37%);
// with the fixed cost on top of the work +5.7%, +4.9%, +4.1%, +0.7% (5.2%, worst 13%) and
// −8.8% to −8.3% (8.2%, worst 16%). The 3.4 µs was not fitted to either GPU.
TEST_CASE(
    "one H100 tensor-parallel rank's steps at TP 1-8 are priced within 14% each and 5.5% on "
    "average (published profile)") {
  check_errors(step_errors({"steps-h100-tp.json", "dgx-h100-1n", "h100-published.yaml"}), 0.14,
               0.055, 52);
}

TEST_CASE(
    "one H100 tensor-parallel rank's steps at TP 1-8 are priced within 16.5% each and 8.5% on "
    "average (measured profile)") {
  check_errors(step_errors({"steps-h100-tp.json", "dgx-h100-1n", "h100-measured.yaml"}), 0.165,
               0.085, 52);
}

// FP8 weights (W8A8 through torch._scaled_mm, steps-*-fp8.json): PyTorch casts each GEMM's input
// to FP8 in a kernel of its own where TensorRT-LLM fuses it into the norm, the attention and the
// activation; the measured profiles' HBM is the copy rate, so they price these steps fast. Their
// FP8 GEMMs were burst figures until the sustained FP8 rate was measured (2026-11-28, 30 s of
// 8192^3 back to back: H100 1,219.6 TFLOP/s, H200 1,235.8; profiles/measured/*-2026-11-28/):
// mean |error| H100 9.7% → 7.5%, H200 9.6% → 6.6% (each still fast on average, −7.0% and −6.0%).
// The steps ran their LM head in BF16, as the engines do (step_time.cc bf16_linear_s); until
// 2026-12-04 the model priced it as an FP8 GEMM reading FP8 weights: with the measured profiles
// H100 7.5% → 4.2%, H200 6.6% → 3.9%; with the published ones, which price these steps slow,
// H100 5.4% → 7.4%, H200 6.3% → 9.1%.
TEST_CASE(
    "one H100's FP8 serving steps are priced within 16% each and 7.5% on average (published)") {
  check_errors(step_errors({"steps-h100-fp8.json", "dgx-h100-1n", "h100-published.yaml"}), 0.16,
               0.075);
}

TEST_CASE(
    "one H200's FP8 serving steps are priced within 22.5% each and 9.5% on average (published)") {
  check_errors(step_errors({"steps-h200-fp8.json", "dgx-h200-64n", "h200-published.yaml"}), 0.225,
               0.095);
}

TEST_CASE(
    "one H100's FP8 serving steps are priced within 10% each and 4.5% on average (measured)") {
  check_errors(step_errors({"steps-h100-fp8.json", "dgx-h100-1n", "h100-measured.yaml"}), 0.10,
               0.045);
}

TEST_CASE(
    "one H200's FP8 serving steps are priced within 11.5% each and 4% on average (measured)") {
  check_errors(step_errors({"steps-h200-fp8.json", "dgx-h200-64n", "h200-measured.yaml"}), 0.115,
               0.04);
}

// Steps continuous batching with chunked prefill forms (steps-{h200,h100}-mixed.json, measured
// on 2026-11-27 with scripts/device/measure-mixed-steps.sh): decode batches 8 and 64 at 2,048
// cached tokens with one prompt chunk of 512 or 2,048 tokens, first or after 2,048 of its prompt
// cached, as one flattened token batch; Llama 3.1 8B (TP 1) and Llama 3 70B (8 layers, a TP-4
// rank), with the same models' prefills. Priced as they were, with no change to the model: mean
// |error| 6.5% (H200, published), 6.2% (H200, measured), 5.3% (H100, published), 6.4% (H100,
// measured); the mixed steps come out 3-6% fast on average, a chunk after 2,048 cached tokens 2-3
// points more (its attention over the cached prefix), worst Llama 3.1 8B with 64 decodes and a
// second 2,048-token chunk (12-16% fast).
TEST_CASE(
    "mixed decode and prompt-chunk steps on one H200 are priced within 16.5% each and 7% on "
    "average") {
  check_errors(step_errors({"steps-h200-mixed.json", "dgx-h200-64n", "h200-published.yaml"}), 0.165,
               0.07, 20);
  check_errors(step_errors({"steps-h200-mixed.json", "dgx-h200-64n", "h200-measured.yaml"}), 0.16,
               0.07, 20);
}

TEST_CASE(
    "mixed decode and prompt-chunk steps on one H100 are priced within 16% each and 7% on "
    "average") {
  check_errors(step_errors({"steps-h100-mixed.json", "dgx-h100-1n", "h100-published.yaml"}), 0.13,
               0.06, 20);
  check_errors(step_errors({"steps-h100-mixed.json", "dgx-h100-1n", "h100-measured.yaml"}), 0.16,
               0.07, 20);
}

// MoE steps with their layers compiled (steps-h200-moe.json, scripts/device/measure-moe-steps.sh,
// 2026-11-27): Mixtral 8x7B and Qwen3-235B-A22B layers as one rank of TP 1-8 with every expert
// split TP ways, decode batches 1-256 and 2,048-token prefills, routed experts as grouped GEMMs
// (torch._grouped_mm). All come out fast: the decodes 18-42% with the published profile. Part is
// the grouped kernel itself (experts-h100.json: thin experts stream at 1.7 TB/s, and at 64-128
// rows per expert it does not overlap loads with math), part PyTorch's routing (sort, gather,
// scatter-add) where engines run a few fused kernels. Pricing grouped GEMMs as loads plus math
// took these to 25% but the development set's throughput from 11.7% to 12.7%, so the model keeps
// the overlapped roofline; bounded here at today's values. The prefills' experts are bound by
// their math, which the step prices at the engine's fused-MoE share of the dense rate (vLLM's
// here, engine_preset.h MoeGemmEfficiency: BF16 0.752 for Mixtral's 14,336-wide experts); the
// measured steps ran PyTorch's grouped GEMM instead, so they say how close the engines' kernels
// are to it: Mixtral's 6.5% fast, Qwen3's 53% fast (128 rows per expert: the weights' reads bound
// it, as the decodes).
TEST_CASE(
    "compiled MoE steps on one H200 are priced fast, within 55% each and 30% on average "
    "(published profile)") {
  const std::vector<double> errors =
      step_errors({"steps-h200-moe.json", "dgx-h200-64n", "h200-published.yaml"});
  check_errors(errors, 0.55, 0.30, 22);
  for (double e : errors) CHECK(e < 0);
  constexpr size_t kMixtralPrefill = 4;  // the file's fifth compiled step
  CHECK(errors[kMixtralPrefill] >= -0.07);
}

// Decode steps at the batches TensorRT-LLM's offline benchmark runs (steps-h200-fp8-large.json,
// scripts/device/measure-large-batch-steps.sh, 2026-11-28): Llama 3.1 8B at 128-2,048 sequences
// and Llama 3 70B layers at 512 and 1,024, FP8 weights, BF16 K/V. The perf-overview file's
// Llama 3.1 8B FP8 rows (about 750-870 sequences a step) come out 13-19% under with the
// published profiles. These steps say how much of that is the GPU's time: with the measured
// profile the model prices them within 4.5% each from 128 to 1,024 sequences (mean |error|
// 3.8%), the one outlier 2,048 sequences at 128 cached tokens (17% fast: GEMMs at 2,048 rows and
// the batch's element-wise work); with the published one (HBM 3,534 GB/s, gpu-stream's triad)
// 8-19% slow from 384 to 1,024 sequences, where the K/V streams at close to the copy rate
// (4,260 GB/s measured). So the published HBM figure prices large-batch attention slow, and what
// the measured profile leaves (the 8B rows still 5-10% under with it) is outside the GPU.
TEST_CASE(
    "one H200's FP8 decode steps at offline batches are priced within 14% each and 3.5% on average "
    "with the measured profile") {
  check_errors(step_errors({"steps-h200-fp8-large.json", "dgx-h200-64n", "h200-measured.yaml"}),
               0.14, 0.035, 9);
}

TEST_CASE(
    "one H200's FP8 decode steps at 384-1,024 sequences are priced 8-20% slow with the published "
    "profile") {
  const std::vector<double> errors =
      step_errors({"steps-h200-fp8-large.json", "dgx-h200-64n", "h200-published.yaml"});
  check_errors(errors, 0.20, 0.145, 9);
  // The file's order: 8B at 128, 384, 512, 640 (1,024 cached), 1,024 (512), 2,048 (128), 256
  // (2,048); 70B layers at 512 (2,048) and 1,024 (1,024).
  for (size_t i : {1, 2, 3, 4, 6, 7}) {
    CAPTURE(i);
    CHECK(errors[i] >= 0.08);
  }
}

// Whole Llama 3 70B decode steps (all 80 layers, 70 GB of FP8 weights) on one H200
// (steps-h200-fp8-70b.json, scripts/device/measure-70b-whole-steps.sh, 2026-11-28), batches of
// 1-128 at 512-4,096 cached tokens: the layout of the perf-overview file's Llama 3.1 70B rows on
// one H200. With the measured profile within 3.5% each (mean 1.7%; 4.2% and 1.9% with an FP8 LM
// head, before 2026-12-04), as the 8-layer cuts; with the published one 13-20% slow. The measured
// profile's +16..+26% on those rows' throughput (tpo-024, tpo-032) is therefore not the GPU's time.
TEST_CASE(
    "whole Llama 3 70B FP8 decode steps on one H200 are priced within 4.5% each with the "
    "measured profile and 13-20% slow with the published one") {
  check_errors(step_errors({"steps-h200-fp8-70b.json", "dgx-h200-64n", "h200-measured.yaml"}),
               0.045, 0.02, 5);
  for (double e : step_errors({"steps-h200-fp8-70b.json", "dgx-h200-64n", "h200-published.yaml"})) {
    CAPTURE(e);
    CHECK((e >= 0.13 && e <= 0.20));
  }
}
