// The serving step-time model against one measured GPU: whole engine steps (decode batches and
// prefills) of Llama 3.1 8B, Llama 3 70B layers and Mixtral layers on one H200
// (tests/data/one_gpu_serve_steps/steps-h200.json, scripts/device/measure_serve_step.py: the
// step captured in one CUDA graph, its layers compiled by torch.compile as vLLM V1 compiles
// them), priced by serving/step_time.h with the profile measured on that GPU and no engine
// host overhead (the replayed graph has no scheduler). A TP rank is measured without its
// all-reduces, so the prediction's communication is left out too. Mean |error| per profile
// (21 steps each), before → after the serving roofline took the best CTA tile for skinny GEMMs
// (planner/gemm_model.h best_tile_wave_efficiency): h100-published 9.3% → 4.1% (max 40% → 11%),
// h200-published 12.7% → 6.7% (max 51% → 19%), h100-measured 10.4% → 7.8%, h200-measured 12.0%
// → 6.2% (max 45% → 17%).
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

StepBatch batch_of(const nlohmann::json& step) {
  StepBatch b;
  if (step["kind"] == "decode") {
    b.decodes = step["batch"];
    b.sampled = b.decodes;
    b.decode_context_tokens = static_cast<double>(b.decodes) * (step["context"].get<double>() + 1);
  } else {
    b.chunks.push_back({step["tokens"].get<int64_t>(), 0});
    b.sampled = 1;
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
  const StepBreakdown t = m.time(batch_of(step));
  return 1e3 * (t.total_s() - t.communication_s);
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

void check_errors(const std::vector<double>& errors, double max_abs, double mean_abs) {
  REQUIRE(errors.size() == 21);
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
    "one H100's serving steps are priced within 12% each and 5% on average (published profile)") {
  check_errors(step_errors({"steps-h100.json", "dgx-h100-1n", "h100-published.yaml"}), 0.12, 0.05);
}

TEST_CASE(
    "one H200's serving steps are priced within 20% each and 7.5% on average (published profile)") {
  check_errors(step_errors({"steps-h200.json", "dgx-h200-64n", "h200-published.yaml"}), 0.20,
               0.075);
}

// The measured profiles' HBM figure is the copy bandwidth, faster than the weight streams of
// small-batch decode GEMMs (about 0.85 of it on both GPUs): decode at batch ≤ 32 is priced
// 12-17% fast with them.
TEST_CASE(
    "one H100's serving steps are priced within 18% each and 8.5% on average (measured profile)") {
  check_errors(step_errors({"steps-h100.json", "dgx-h100-1n", "h100-measured.yaml"}), 0.18, 0.085);
}

TEST_CASE(
    "one H200's serving steps are priced within 18% each and 7% on average (measured profile)") {
  check_errors(step_errors({"steps-h200.json", "dgx-h200-64n", "h200-measured.yaml"}), 0.18, 0.07);
}

// FP8 weights (W8A8 through torch._scaled_mm, steps-*-fp8.json): decode at batch ≤ 8 and the
// 512-token prefill run 13-20% slower than priced with the published profiles (PyTorch casts each
// GEMM's input to FP8 in a kernel of its own where TensorRT-LLM fuses it into the norm, the
// attention and the activation), the rest within −8% to +15%; the measured profiles' FP8 rates
// (burst, no sustained figure measured for FP8) and copy-rate HBM make every step 3-31% fast.
TEST_CASE("one H100's FP8 serving steps are priced within 19% each and 8% on average (published)") {
  check_errors(step_errors({"steps-h100-fp8.json", "dgx-h100-1n", "h100-published.yaml"}), 0.19,
               0.08);
}

TEST_CASE("one H200's FP8 serving steps are priced within 21% each and 8% on average (published)") {
  check_errors(step_errors({"steps-h200-fp8.json", "dgx-h200-64n", "h200-published.yaml"}), 0.21,
               0.08);
}

TEST_CASE(
    "one H100's FP8 serving steps are priced within 29% each and 16.5% on average (measured)") {
  check_errors(step_errors({"steps-h100-fp8.json", "dgx-h100-1n", "h100-measured.yaml"}), 0.29,
               0.165);
}

TEST_CASE(
    "one H200's FP8 serving steps are priced within 32% each and 17.5% on average (measured)") {
  check_errors(step_errors({"steps-h200-fp8.json", "dgx-h200-64n", "h200-measured.yaml"}), 0.32,
               0.175);
}
