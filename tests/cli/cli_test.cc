// The meshplan executable end to end: exit codes, stdout/stderr discipline, stable JSON fields,
// identical output for any thread count.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run_meshplan.h"

using namespace meshplan::testing;

namespace {

const std::string k70b = "--model " + repo_path("models/llama3-70b.yaml") + " --cluster " +
                         repo_path("topologies/dgx-h100-64n.yaml");
const std::string k8b = "--model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                        repo_path("topologies/dgx-h100-1n.yaml") + " --global-batch 64";

}  // namespace

TEST_CASE("a missing model file exits 2 with its name on stderr and nothing on stdout") {
  Run r = run_meshplan("memory --model no/such.yaml --cluster " +
                       repo_path("topologies/dgx-h100-1n.yaml") + " --layout tp=8");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "no/such.yaml: error: cannot open file (does it exist?)\n");
}

TEST_CASE("an impossible layout exits 2 listing every violation") {
  Run r = run_meshplan("estimate " + k70b + " --layout tp=3,pp=7");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("field 'tp' = '3': must divide heads (64)") != std::string::npos);
  CHECK(r.err.find("field 'pp' = '7': pp·vpp = 7 must divide layers (80)") != std::string::npos);
}

TEST_CASE("an unknown subcommand or flag exits 2") {
  CHECK(run_meshplan("plann").rc == 2);
  CHECK(run_meshplan("plan " + k8b + " --topp 3").rc == 2);
}

TEST_CASE("memory --format json carries the documented fields with integer bytes") {
  Run r = run_meshplan("memory " + k70b +
                       " --layout tp=8,pp=4,zero=1,recompute=selective --format json");
  REQUIRE(r.rc == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["params_total"] == 70553706496LL);
  REQUIRE(j["stages"].size() == 4);
  for (const char* key :
       {"stage", "params", "params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes",
        "activations_per_layer_bytes", "other_bytes", "total_bytes"}) {
    CAPTURE(key);
    CHECK(j["stages"][0][key].is_number_integer());
  }
  CHECK(j["peak_bytes"].is_number_integer());
  CHECK(j["capacity_bytes"] == 81559LL * 1048576);
  CHECK(j["fits"] == true);
}

TEST_CASE("estimate --format json adds time, bubble, MFU and a breakdown that sums to the step") {
  Run r = run_meshplan("estimate " + k70b + " --layout tp=8,pp=4,vpp=5 --format json");
  REQUIRE(r.rc == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  double sum = 0;
  for (auto& [k, v] : j["time_breakdown"].items()) sum += v.get<double>();
  CHECK(sum == doctest::Approx(j["step_time_s"].get<double>()).epsilon(1e-12));
  for (const char* key : {"bubble_fraction", "mfu", "hfu", "model_tflops_per_gpu",
                          "hardware_tflops_per_gpu", "tokens_per_s"}) {
    CAPTURE(key);
    CHECK(j[key].get<double>() > 0);
  }
}

TEST_CASE("plan prints the same bytes for 1 and 2 threads") {
  Run one = run_meshplan("plan " + k8b + " --threads 1 --top 5");
  Run two = run_meshplan("plan " + k8b + " --threads 2 --top 5");
  REQUIRE(one.rc == 0);
  CHECK(one.out == two.out);
  CHECK(run_meshplan("plan " + k8b + " --threads 2 --top 5 --format md").out ==
        run_meshplan("plan " + k8b + " --threads 1 --top 5 --format md").out);
}

TEST_CASE("plan --format json reports the search and a ranked list") {
  Run r = run_meshplan("plan " + k8b + " --top 3 --simulate-top 2 --format json");
  REQUIRE(r.rc == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["search"]["evaluated"].get<int64_t>() >= j["search"]["feasible"].get<int64_t>());
  CHECK(j["search"]["wall_s"].get<double>() >= 0);
  REQUIRE(j["ranked"].size() == 3);
  CHECK(j["ranked"][0].contains("simulated_step_time_s"));
  CHECK_FALSE(j["ranked"][2].contains("simulated_step_time_s"));
}

TEST_CASE("plan explains when nothing fits") {
  Run r = run_meshplan("plan --model " + repo_path("models/llama3-405b.yaml") + " --cluster " +
                       repo_path("topologies/dgx-h100-1n.yaml") + " --global-batch 8");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("nothing fits in 79.65 GiB per GPU.") != std::string::npos);
  CHECK(r.out.find("what would make it fit:") != std::string::npos);
}

TEST_CASE("simulate --trace writes Chrome trace JSON with complete and metadata events") {
  const std::string trace =
      (std::filesystem::temp_directory_path() / "meshplan-cli-trace.json").string();
  Run r = run_meshplan("simulate " + k70b + " --layout tp=8,pp=4 --trace '" + trace + "'");
  REQUIRE(r.rc == 0);
  nlohmann::json j = nlohmann::json::parse(read_file(trace));
  int complete = 0, metadata = 0;
  for (const auto& e : j["traceEvents"]) {
    complete += e["ph"] == "X";
    metadata += e["ph"] == "M";
    if (e["ph"] == "X") CHECK(e["dur"].get<double>() >= 0);
  }
  CHECK(complete > 0);
  CHECK(metadata > 0);
  std::filesystem::remove(trace);
}

TEST_CASE("validate --max-error exits 1 when a bound is exceeded, 2 when it names nothing") {
  const std::string runs =
      "validate --runs '" + std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml'";
  CHECK(run_meshplan(runs + " --max-error all=0.001").rc == 1);
  CHECK(run_meshplan(runs + " --max-error nothing=0.5").rc == 2);
  CHECK(run_meshplan(runs + " --max-error all=0.5").rc == 0);
}

TEST_CASE(
    "validate --max-run-error names each run beyond it and exits 1; --require-fit passes when all "
    "fit") {
  const std::string runs =
      "validate --runs '" + std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml'";
  Run tight = run_meshplan(runs + " --max-run-error 0");
  CHECK(tight.rc == 1);
  CHECK(tight.err.find("narayanan21-t1-1.7b error ") != std::string::npos);
  CHECK(tight.err.find("exceeds the per-run bound 0.0%") != std::string::npos);
  Run loose = run_meshplan(runs + " --max-run-error 0.5 --require-fit");
  CHECK(loose.rc == 0);
  CHECK(loose.err.find("validate: every run within 50.0% and predicted to fit: ok") !=
        std::string::npos);
}

TEST_CASE("a profile from the CPU calibration backend drives plan end to end") {
  const std::string profile =
      (std::filesystem::temp_directory_path() / "meshplan-cli-cpu-profile.yaml").string();
  Run cal = run_meshplan("calibrate --backend cpu --quick --out '" + profile + "'");
  REQUIRE(cal.rc == 0);
  Run plan = run_meshplan("plan " + k8b + " --top 2 --profile '" + profile + "' --format json");
  REQUIRE(plan.rc == 0);
  nlohmann::json j = nlohmann::json::parse(plan.out);
  REQUIRE(j["ranked"].size() == 2);
  // The CPU's memory bandwidth (tens of GB/s) stands in for the GPU's 2,575 GB/s, so the
  // memory-bound part of the step, and the step, are far slower than on the H100 profile (11x
  // on this machine; 5x leaves room for faster CPU memory).
  Run defaults = run_meshplan("plan " + k8b + " --top 1 --format json");
  CHECK(j["ranked"][0]["step_time_s"].get<double>() >
        5 * nlohmann::json::parse(defaults.out)["ranked"][0]["step_time_s"].get<double>());
  std::filesystem::remove(profile);
}

TEST_CASE("estimate and plan say which framework preset they used, and --framework picks another") {
  Run text = run_meshplan("estimate " + k8b + " --layout tp=8");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("\nframework: megatron-core — ") != std::string::npos);
  Run json = run_meshplan("estimate " + k8b + " --layout tp=8 --format json --framework deepspeed");
  REQUIRE(json.rc == 0);
  CHECK(nlohmann::json::parse(json.out)["framework"] == "deepspeed");
  Run plan = run_meshplan("plan " + k8b + " --top 2 --framework fsdp2");
  REQUIRE(plan.rc == 0);
  CHECK(plan.out.find("\nframework: fsdp2 — ") != std::string::npos);
  Run plan_json = run_meshplan("plan " + k8b + " --top 1 --format json");
  CHECK(nlohmann::json::parse(plan_json.out)["framework"] == "megatron-core");
}

TEST_CASE("an unknown --framework exits 2 with the choices and the closest name") {
  Run r = run_meshplan("estimate " + k8b + " --layout tp=8 --framework deepspeeed");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--framework: error: field 'framework' = 'deepspeeed': must be one of "
        "megatron-core|nemo|megatron-2021|deepspeed|deepspeed-2021|megatron-deepspeed|fsdp2|"
        "torchtitan|composer (did you mean 'deepspeed'?)\n");
}

TEST_CASE("validate takes several --runs files and shows each modern run's framework and fit") {
  const std::string data = std::string(MESHPLAN_TEST_DATA);
  Run both = run_meshplan("validate --threads 2 --format json --runs '" + data +
                          "/published_runs.yaml' --runs '" + data + "/published_runs_modern.yaml'");
  REQUIRE(both.rc == 0);
  nlohmann::json j = nlohmann::json::parse(both.out);
  CHECK(j["runs"].size() == 47);
  CHECK(j["summaries"].back()["name"] == "all");
  CHECK(j["summaries"].back()["runs"] == 47);
  Run modern =
      run_meshplan("validate --threads 2 --runs '" + data + "/published_runs_modern.yaml'");
  REQUIRE(modern.rc == 0);
  CHECK(modern.out.find("framework") != std::string::npos);
  CHECK(modern.out.find("fits") != std::string::npos);
  CHECK(modern.out.find("runs predicted not to fit in GPU memory") != std::string::npos);
}

TEST_CASE("plan on a GPU count no layout splits names the divisibility rules, not a bare refusal") {
  Run r = run_meshplan("plan " + k70b + " --gpus 100");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("no layout: divisibility: no tp·cp·pp·dp split of 100 GPUs passes the layout "
                   "rules: ") != std::string::npos);
  CHECK(r.out.find("dp must divide the global batch (1024 sequences)") != std::string::npos);
  CHECK(r.out.find("no valid layout") == std::string::npos);
}
