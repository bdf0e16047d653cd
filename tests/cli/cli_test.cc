// The meshplan executable end to end: exit codes, stdout/stderr discipline, stable JSON fields,
// identical output for any thread count.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/profile.h"
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

TEST_CASE("an unknown command names the closest one and exits 2") {
  Run r = run_meshplan("memroy " + k8b);
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "error: unknown command 'memroy' (did you mean 'memory'?); 'meshplan help' lists the "
        "commands\n");
  CHECK(run_meshplan("foo").err ==
        "error: unknown command 'foo'; 'meshplan help' lists the commands\n");
}

TEST_CASE("help walks nested commands, a mistyped subcommand names the closest one") {
  Run nested = run_meshplan("help calibrate import");
  CHECK(nested.rc == 0);
  CHECK(nested.out == run_meshplan("calibrate import --help").out);
  Run wrong = run_meshplan("help calibrate imprt");
  CHECK(wrong.rc == 2);
  CHECK(wrong.err ==
        "error: unknown command 'meshplan calibrate imprt' (did you mean 'import'?); 'meshplan "
        "help calibrate' lists its commands\n");
  CHECK(run_meshplan("help memory foo").err ==
        "error: 'meshplan memory' has no subcommands; 'meshplan help memory' lists its options\n");
  Run typo = run_meshplan("calibrate imprt");
  CHECK(typo.rc == 2);
  CHECK(typo.out.empty());
  CHECK(typo.err ==
        "error: unknown command 'meshplan calibrate imprt' (did you mean 'import'?); 'meshplan "
        "help calibrate' lists its options\n");
}

TEST_CASE("meshplan help lists the commands, help <command> prints that command's help") {
  Run all = run_meshplan("help");
  CHECK(all.rc == 0);
  CHECK(all.out.find("plan") != std::string::npos);
  CHECK(all.out.find("calibrate") != std::string::npos);
  CHECK(all.out == run_meshplan("--help").out);
  Run plan = run_meshplan("help plan");
  CHECK(plan.rc == 0);
  CHECK(plan.out == run_meshplan("plan --help").out);
  Run wrong = run_meshplan("help plna");
  CHECK(wrong.rc == 2);
  CHECK(wrong.err.find("unknown command 'plna' (did you mean 'plan'?)") != std::string::npos);
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

TEST_CASE("memory --precision fp8 adds the FP8 terms and its line, bf16 has neither") {
  const std::string layout = " --layout tp=8,pp=4,zero=1,recompute=selective";
  Run bf16 = run_meshplan("memory " + k70b + layout + " --precision bf16 --format json");
  Run fp8 = run_meshplan("memory " + k70b + layout + " --precision fp8 --format json");
  REQUIRE(bf16.rc == 0);
  REQUIRE(fp8.rc == 0);
  const nlohmann::json a = nlohmann::json::parse(bf16.out), b = nlohmann::json::parse(fp8.out);
  CHECK(a["stages"][1]["other"]["fp8_scaling_bytes"] == 0);
  // Megatron-Core's defaults: 80 GEMMs on a stage of 20 layers, 60 B each.
  CHECK(b["stages"][1]["other"]["fp8_scaling_bytes"] == 4800);
  CHECK(b["stages"][1]["activations_bytes"] < a["stages"][1]["activations_bytes"]);
  Run text = run_meshplan("memory " + k70b + layout + " --precision fp8");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("\nfp8      stage 0: cached FP8 weights ") != std::string::npos);
  CHECK(run_meshplan("memory " + k70b + layout).out.find("\nfp8 ") == std::string::npos);
  CHECK(run_meshplan("memory " + k70b + layout + " --precision fp16").rc == 2);
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

TEST_CASE("estimate --ops prices the layer op by op, in the table and as JSON layer_ops") {
  Run text = run_meshplan("estimate " + k8b + " --layout tp=2 --ops");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("layer ops: one micro-batch (8,192 tokens on this GPU: mbs 1 × sequence "
                      "8,192), tp 2\ndense layer (32 of 32)\n") != std::string::npos);
  CHECK(text.out.find("LM head and loss (last stage)") != std::string::npos);
  Run json = run_meshplan("estimate " + k8b + " --layout tp=2 --ops --format json");
  REQUIRE(json.rc == 0);
  const nlohmann::json ops = nlohmann::json::parse(json.out)["layer_ops"];
  CHECK(ops["micro_batch_tokens"] == 8192);
  CHECK(!ops.contains("moe"));
  const nlohmann::json& qkv = ops["dense"]["ops"][0];
  CHECK(qkv["name"] == "qkv");
  CHECK(qkv["cols"] == 3072.0);
  CHECK(qkv["forward_flops"] == 2.0 * 8192 * 3072 * 4096);
  CHECK(ops["head"]["ops"][0]["name"] == "logits");
  // Without --ops neither appears.
  CHECK(run_meshplan("estimate " + k8b + " --layout tp=2").out.find("layer ops") ==
        std::string::npos);
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
  const std::string trace = (std::filesystem::temp_directory_path() /
                             (std::to_string(::getpid()) + "-meshplan-cli-trace.json"))
                                .string();
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
    "validate --max-run-error names each run beyond it and exits 1, --require-fit passes when all "
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

TEST_CASE("validate finds --profile's OTHER in --profile-dir and in $MESHPLAN_DATA/profiles") {
  // A copy of h100-measured under another name, outside the source tree: the runs priced with it
  // print what they print with h100-measured itself.
  const auto dir =
      std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-meshplan-cli-pdir");
  std::filesystem::create_directories(dir / "profiles");
  std::filesystem::copy_file(std::string(MESHPLAN_SOURCE_DIR) + "/profiles/h100-measured.yaml",
                             dir / "profiles" / "my-h100.yaml");
  const std::string runs =
      "validate --runs '" + std::string(MESHPLAN_TEST_DATA) + "/published_runs_modern.yaml'";
  Run shipped = run_meshplan(runs + " --profile h100-published=h100-measured");
  REQUIRE(shipped.rc == 0);
  Run mine = run_meshplan(runs + " --profile h100-published=my-h100 --profile-dir '" +
                          (dir / "profiles").string() + "'");
  CHECK(mine.rc == 0);
  CHECK(mine.out == shipped.out);
  Run env = run_shell("MESHPLAN_DATA='" + dir.string() + "' '" + MESHPLAN_BINARY + "' " + runs +
                      " --profile h100-published=my-h100");
  CHECK(env.rc == 0);
  CHECK(env.out == shipped.out);
  Run nowhere = run_meshplan(runs + " --profile h100-published=my-h100");
  CHECK(nowhere.rc == 2);
  CHECK(nowhere.err.find("no such calibration profile (looked for my-h100.yaml in ") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibrate merge lays a measured profile over a published one, section by section") {
  const auto dir =
      std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-meshplan-cli-merge");
  std::filesystem::create_directories(dir);
  const std::string cpu = (dir / "cpu.yaml").string(), out = (dir / "merged.yaml").string();
  REQUIRE(run_meshplan("calibrate --backend cpu --quick --out '" + cpu + "'").rc == 0);
  const std::string base = std::string(MESHPLAN_SOURCE_DIR) + "/profiles/h100-published.yaml";
  Run r = run_meshplan("calibrate merge '" + base + "' '" + cpu + "' --name mixed --out '" + out +
                       "' --source 'power limit 700 W'");
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("2 profiles merged") != std::string::npos);
  auto merged = meshplan::load_profile(out);
  REQUIRE(merged.ok());
  CHECK(merged->name == "mixed");
  CHECK(merged->provenance.sources.front() == "power limit 700 W");
  CHECK(merged->gemm.count("fp32") == 1);                  // the CPU's
  CHECK(merged->gemm.at("bf16").max_efficiency == 0.803);  // the published H100's
  CHECK_FALSE(merged->collectives.empty());                // the CPU measured none: the base's stay
  Run one = run_meshplan("calibrate merge '" + base + "' --out '" + out + "'");
  CHECK(one.rc == 2);  // a merge needs two profiles
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibrate compare prints two profiles' ratios, a missing or broken one exits 2") {
  const std::string profiles = std::string(MESHPLAN_SOURCE_DIR) + "/profiles/";
  const std::string both = "calibrate compare '" + profiles + "h200-published.yaml' '" + profiles +
                           "h200-measured.yaml'";
  Run table = run_meshplan(both);
  REQUIRE(table.rc == 0);
  CHECK(table.out.find("base: h200-published (published, ") == 0);
  CHECK(table.out.find("\nother: h200-measured (measured, NVIDIA H200, ") != std::string::npos);
  CHECK(table.out.find("HBM bandwidth (GB/s)") != std::string::npos);
  Run json = run_meshplan(both + " --format json");
  REQUIRE(json.rc == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["base"]["name"] == "h200-published");
  CHECK(j["scalars"][0]["name"] == "HBM bandwidth (GB/s)");
  CHECK(j["scalars"][0]["base"].get<double>() == doctest::Approx(3534));
  CHECK(j["scalars"][0]["ratio"].get<double>() == doctest::Approx(4259.9335578294316 / 3534));
  CHECK(!j.contains("gemm_model"));  // only with --gpu
  Run priced = run_meshplan(both + " --gpu H200-SXM-141GB --format json");
  REQUIRE(priced.rc == 0);
  const auto p = nlohmann::json::parse(priced.out);
  CHECK(p["gemm_model"]["gpu"] == "H200-SXM-141GB");
  CHECK(p["gemm_model"]["dtypes"][0]["dtype"] == "bf16");
  CHECK(p["gemm_model"]["dtypes"][0]["speedup"]["count"].get<int>() > 1000);  // its samples
  Run unknown_gpu = run_meshplan(both + " --gpu H300");
  CHECK(unknown_gpu.rc == 2);
  CHECK(unknown_gpu.err.find("--gpu") != std::string::npos);
  Run md = run_meshplan(both + " --format md");
  CHECK(md.rc == 0);
  CHECK(md.out.find("# Calibration profiles compared") == 0);
  Run missing =
      run_meshplan("calibrate compare '" + profiles + "h200-published.yaml' /nonexistent.yaml");
  CHECK(missing.rc == 2);
  const auto dir = std::filesystem::temp_directory_path() /
                   (std::to_string(::getpid()) + "-meshplan-cli-compare");
  std::filesystem::create_directories(dir);
  const std::string broken = (dir / "broken.yaml").string();
  std::ofstream(broken) << "name: x\n";
  Run bad =
      run_meshplan("calibrate compare '" + broken + "' '" + profiles + "h200-published.yaml'");
  CHECK(bad.rc == 2);
  CHECK(bad.err.find(broken + ":1:1: error: field 'provenance': is required but missing\n") == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibrate --backend cuda without a GPU exits 2 saying what failed") {
  // With CUDA at build time the module loads and cudaGetDeviceCount fails on this GPU-less
  // machine; without it the backend says it was not built. Either way: one message, exit 2.
  Run r = run_meshplan("calibrate --backend cuda --quick --out /dev/null");
  CHECK(r.rc == 2);
  CHECK(r.err.find("error: field '--backend' = 'cuda': ") == 0);
}

TEST_CASE("calibrate --dry-run sizes a model sweep, a dtype the device lacks exits 2") {
  Run dry =
      run_meshplan("calibrate --backend cpu --dry-run --model " + std::string(MESHPLAN_SOURCE_DIR) +
                   "/models/llama3-8b.yaml --tp 1,8 --tokens 4096 --gemm");
  REQUIRE(dry.rc == 0);
  CHECK(dry.out.find("shapes per dtype (every dtype the device offers)") != std::string::npos);
  CHECK(dry.out.find("4096 6144 4096 fwd qkv\n") != std::string::npos);
  Run fp8 = run_meshplan("calibrate --backend cpu --quick --dtypes fp8 --out /dev/null");
  CHECK(fp8.rc == 2);
  CHECK(fp8.err.find("this device runs GEMMs in fp32") != std::string::npos);
}

TEST_CASE("validate --profile prices one profile's clusters with another, and refuses a typo") {
  const std::string runs =
      "validate --runs " + std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/published_runs.yaml";
  Run swapped = run_meshplan(runs + " --profile a100-published=h100-published --format json");
  REQUIRE(swapped.rc == 0);
  Run plain = run_meshplan(runs + " --format json");
  REQUIRE(plain.rc == 0);
  CHECK(swapped.out != plain.out);  // the A100 runs priced on H100 throughput
  Run typo = run_meshplan(runs + " --profile a100-publish=h100-published");
  CHECK(typo.rc == 2);
  CHECK(typo.err.find("no run's cluster uses profile a100-publish") != std::string::npos);
  Run bad = run_meshplan(runs + " --profile a100-published");
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("must be NAME=OTHER") != std::string::npos);
}

TEST_CASE("a profile from the CPU calibration backend drives plan end to end") {
  const std::string profile = (std::filesystem::temp_directory_path() /
                               (std::to_string(::getpid()) + "-meshplan-cli-cpu-profile.yaml"))
                                  .string();
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

TEST_CASE("--grad-reduce-dtype bf16 halves the gradient buffer and says so, a typo exits 2") {
  Run fp32 = run_meshplan("estimate " + k8b + " --layout tp=8,mbs=1 --format json");
  Run bf16 = run_meshplan("estimate " + k8b +
                          " --layout tp=8,mbs=1 --format json --grad-reduce-dtype bf16");
  REQUIRE(fp32.rc == 0);
  REQUIRE(bf16.rc == 0);
  const nlohmann::json a = nlohmann::json::parse(fp32.out), b = nlohmann::json::parse(bf16.out);
  CHECK(!a.contains("grad_reduce_dtype"));
  CHECK(b["grad_reduce_dtype"] == "bf16");
  CHECK(b["stages"][0]["grads_bytes"].get<double>() * 2 ==
        a["stages"][0]["grads_bytes"].get<double>());
  Run text = run_meshplan("estimate " + k8b + " --layout tp=8 --grad-reduce-dtype bf16");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("; gradients reduced in bf16\n") != std::string::npos);
  Run typo = run_meshplan("estimate " + k8b + " --layout tp=8 --grad-reduce-dtype fp33");
  CHECK(typo.rc == 2);
  CHECK(typo.out.empty());
  CHECK(typo.err ==
        "--grad-reduce-dtype: error: field 'grad_reduce_dtype' = 'fp33': must be one of "
        "bf16|fp16|fp32 (did you mean 'fp32'?)\n");
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
  CHECK(j["runs"].size() == 51);
  CHECK(j["summaries"].back()["name"] == "all");
  CHECK(j["summaries"].back()["runs"] == 51);
  Run modern =
      run_meshplan("validate --threads 2 --runs '" + data + "/published_runs_modern.yaml'");
  REQUIRE(modern.rc == 0);
  CHECK(modern.out.find("framework") != std::string::npos);
  CHECK(modern.out.find("fits") != std::string::npos);
  CHECK(modern.out.find("runs predicted not to fit in GPU memory") != std::string::npos);
}

namespace {

// Writes `text` to a fresh file in the temporary folder; returns its path.
std::string temp_input(const std::string& name, const std::string& text) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("meshplan-cli-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

const std::string k8bLayout = "--model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                              repo_path("topologies/dgx-h100-1n.yaml") + " --layout tp=8";

}  // namespace

TEST_CASE("--layout with a key given twice exits 2 naming both columns") {
  Run r = run_meshplan("estimate " + k8b + " --layout tp=8,tp=4");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--layout:1:6: error: field 'tp' = '4': is given twice; the first is at column 1\n"
        "  tp=8,tp=4\n"
        "       ^\n");
}

TEST_CASE("--fix with a key given twice exits 2 naming both columns") {
  Run r = run_meshplan("plan " + k8b + " --fix tp=8,tp=2");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--fix:1:6: error: field 'tp' = '2': is given twice; the first is at column 1\n"
        "  tp=8,tp=2\n"
        "       ^\n");
}

TEST_CASE("layout-check errors point at the key in the --layout string") {
  Run r = run_meshplan("estimate " + k70b + " --layout pp=7,tp=3");
  CHECK(r.rc == 2);
  CHECK(r.err.find("--layout:1:6: error: field 'tp' = '3': must divide heads (64)\n"
                   "  pp=7,tp=3\n"
                   "       ^\n") != std::string::npos);
  CHECK(r.err.find("--layout:1:1: error: field 'pp' = '7': pp·vpp = 7 must divide layers (80)") !=
        std::string::npos);
}

TEST_CASE("--layout degrees whose product overflows are reported without wrapping") {
  Run r = run_meshplan("estimate " + k8b + " --layout tp=1000000,pp=1000000,cp=1000000,dp=1000000");
  CHECK(r.rc == 2);
  CHECK(r.err.rfind("--layout:1:34: error: field 'dp' = '1000000': dp·tp·pp·cp = "
                    "1000000·1000000·1000000·1000000 = more than 2^63 must equal the GPU count "
                    "(8)\n",
                    0) == 0);
}

TEST_CASE("--seq-len beyond its range exits 2 with the range, not a saturated value") {
  for (const char* value : {"9000000000000000000", "99999999999999999999"}) {
    CAPTURE(value);
    Run r = run_meshplan("estimate " + k8bLayout + " --seq-len " + value);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(r.err == std::string("error: --seq-len: '") + value +
                       "' must be an integer between 1 and 100000000 (in 'meshplan estimate'); "
                       "'meshplan help estimate' lists its options\n");
  }
}

TEST_CASE("--global-batch beyond its range exits 2 at once") {
  Run r = run_meshplan("plan " + k8b + " --global-batch 9000000000000000000");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "error: --global-batch: '9000000000000000000' must be an integer between 1 and "
        "1000000000 (in 'meshplan plan'); 'meshplan help plan' lists its options\n");
}

TEST_CASE("--threads beyond 1024 exits 2") {
  Run r = run_meshplan("plan " + k8b + " --threads 100000000");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
}

TEST_CASE("a simulation beyond its pass limit exits 2 at once with the limit") {
  Run r = run_meshplan("simulate " + k8bLayout + " --global-batch 1000000000");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--layout: error: field 'schedule' = '1f1b: pp=1, vpp=1, micro_batches=1000000000': the "
        "simulation would run 2000000000 passes; at most 4000000 are simulated (raise mbs or dp "
        "for fewer micro-batches, or use estimate)\n");
}

TEST_CASE("regress --tolerance nan exits 2 instead of passing everything") {
  Run r =
      run_meshplan("regress --scenarios " + repo_path("tests/regress/scenarios.yaml") +
                   " --baseline " + repo_path("tests/regress/baseline.yaml") + " --tolerance nan");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "error: --tolerance: 'nan' must be a number between 0 and 100 (in 'meshplan regress'); "
        "'meshplan help regress' lists its options\n");
}

TEST_CASE("validate --max-error foo exits 2 before printing anything") {
  Run r = run_meshplan("validate --runs '" + std::string(MESHPLAN_TEST_DATA) +
                       "/published_runs.yaml' --max-error foo");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "--max-error: error: field 'max-error' = 'foo': must be NAME=FRACTION, e.g. all=0.15\n");
}

TEST_CASE("validate --max-error naming no summary exits 2 before printing anything") {
  Run r = run_meshplan("validate --runs '" + std::string(MESHPLAN_TEST_DATA) +
                       "/published_runs.yaml' --max-error nothing=0.5");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
}

TEST_CASE("validate names the runs file, line and column of an unknown cluster") {
  std::string runs = read_file(std::string(MESHPLAN_TEST_DATA) + "/published_runs.yaml");
  const size_t at = runs.find("cluster: selene");
  REQUIRE(at != std::string::npos);
  runs.replace(at, 15, "cluster: selen");
  const std::string path = temp_input("runs.yaml", runs);
  Run r = run_meshplan("validate --runs '" + path + "'");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(path + ":") == 0);
  CHECK(r.err.find("error: field 'runs[0].cluster' = 'selen': must be one of "
                   "dgx_h100|dgx_h200|jean_zay_a100|mosaic_a100|mosaic_h100|selene (did you mean "
                   "'selene'?)\n") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a typo in the cluster's profile: is an error for memory and export too") {
  std::string cluster =
      read_file(std::string(MESHPLAN_SOURCE_DIR) + "/topologies/dgx-h100-1n.yaml");
  const size_t at = cluster.find("profile: h100-published");
  REQUIRE(at != std::string::npos);
  cluster.replace(at, 23, "profile: h100-publishd");
  const std::string path = temp_input("cluster.yaml", cluster);
  const std::string args =
      "--model " + repo_path("models/llama3-8b.yaml") + " --cluster '" + path + "' --layout tp=8";
  for (const char* command : {"memory", "export --format megatron", "estimate"}) {
    CAPTURE(command);
    Run r = run_meshplan(std::string(command) + " " + args);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind(path + ":6:10: error: field 'profile' = 'h100-publishd': no such "
                             "calibration profile",
                      0) == 0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("calibrate import --out a directory exits 2 saying it is a directory") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  Run r = run_meshplan("calibrate import nccl-tests '" + std::string(MESHPLAN_TEST_DATA) +
                       "/nccl-tests/all_reduce_perf.txt' --out '" + dir + "'");
  CHECK(r.rc == 2);
  CHECK(r.err == dir + ": error: cannot write: it is a directory\n");
}

TEST_CASE("a model with a key given twice exits 2 naming both places") {
  std::string model = read_file(std::string(MESHPLAN_SOURCE_DIR) + "/models/llama3-8b.yaml");
  model += "layers: 64\n";
  const std::string path = temp_input("model.yaml", model);
  Run r = run_meshplan("memory --model '" + path + "' --cluster " +
                       repo_path("topologies/dgx-h100-1n.yaml") + " --layout tp=8");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err == path + ":21:1: error: field 'layers': is given twice; the first is at " + path +
                     ":3:1\n  layers: 64\n  ^\n");
  std::filesystem::remove(path);
}

TEST_CASE("plan refuses a search beyond 10^8 layouts up front, naming the count") {
  std::string model = read_file(std::string(MESHPLAN_SOURCE_DIR) + "/models/llama3-8b.yaml");
  const size_t at = model.find("layers: 32");
  REQUIRE(at != std::string::npos);
  model.replace(at, 10, "layers: 100000");
  const std::string path = temp_input("deep.yaml", model);
  Run r = run_meshplan("plan --model '" + path + "' --cluster " +
                       repo_path("topologies/dgx-h100-1n.yaml"));
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "plan: error: the search would evaluate 171501112 layouts; at most 100000000 are "
        "searched (pin fields such as pp, vpp or recompute with --fix)\n");
  std::filesystem::remove(path);
}

TEST_CASE("a --gpus beyond any cluster exits 2 with the range") {
  Run r = run_meshplan("memory " + k8bLayout + " --gpus 1000000000000");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "error: --gpus: '1000000000000' must be an integer between 1 and 100000000 (in 'meshplan "
        "memory'); 'meshplan help memory' lists its options\n");
}

TEST_CASE("plan on a GPU count no layout splits names the divisibility rules, not a bare refusal") {
  Run r = run_meshplan("plan " + k70b + " --gpus 100");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("no layout: divisibility: no tp·cp·pp·dp split of 100 GPUs passes the layout "
                   "rules: ") != std::string::npos);
  CHECK(r.out.find("dp must divide the global batch (1024 sequences)") != std::string::npos);
  CHECK(r.out.find("no valid layout") == std::string::npos);
}

TEST_CASE("report --objective memory ranks the table by peak memory, lowest first") {
  const auto out = std::filesystem::temp_directory_path() /
                   (std::to_string(::getpid()) + "-meshplan-cli-report-memory");
  std::filesystem::remove_all(out);
  Run r = run_meshplan("report " + k8b + " --top 3 --sample 50 --threads 2 --objective memory " +
                       "--out '" + out.string() + "'");
  REQUIRE(r.rc == 0);
  const std::string md = read_file(out / "report.md");
  CHECK(md.find("Ranked by peak memory per GPU, lowest first (`--objective memory`)") !=
        std::string::npos);
  // Rows "| 1 | `layout` | 12.3 / 79.6 | …": the peaks must not decrease.
  std::vector<double> peaks;
  for (const char* row : {"\n| 1 | ", "\n| 2 | ", "\n| 3 | "}) {
    size_t at = md.find(row);
    REQUIRE(at != std::string::npos);
    at = md.find(" | ", md.find('`', md.find('`', at + 1) + 1));
    peaks.push_back(std::stod(md.substr(at + 3)));
  }
  CHECK(peaks[0] <= peaks[1]);
  CHECK(peaks[1] <= peaks[2]);
  CHECK(run_meshplan("report " + k8b + " --objective speed --out '" + out.string() + "'").rc == 2);
  std::filesystem::remove_all(out);
}

TEST_CASE("memory of DeepSeek-V3's config.json counts its MTP module apart, on the last stage") {
  Run r = run_meshplan("memory --model " + repo_path("tests/data/hf/deepseek-v3.json") +
                       " --cluster " + repo_path("topologies/dgx-h100-64n.yaml") +
                       " --layout tp=1,pp=16,ep=32,zero=1,recompute=full,uneven=true");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("deepseek-v3 (671,026,404,352 parameters; ") != std::string::npos);
  CHECK(r.out.find(" more in 1 MTP module on the last stage) on ") != std::string::npos);
  Run yaml = run_meshplan("memory --model " + repo_path("models/deepseek-v3.yaml") + " --cluster " +
                          repo_path("topologies/dgx-h100-64n.yaml") +
                          " --layout tp=1,pp=16,ep=32,zero=1,recompute=full,uneven=true");
  REQUIRE(yaml.rc == 0);
  CHECK(yaml.out.find("MTP") == std::string::npos);
}

TEST_CASE(
    "estimate of DeepSeek-V3's config.json says it trains the MTP module, the YAML does not") {
  const std::string args = " --cluster " + repo_path("topologies/dgx-h100-64n.yaml") +
                           " --layout tp=1,pp=16,ep=32,zero=1,recompute=full,uneven=true";
  Run r = run_meshplan("estimate --model " + repo_path("tests/data/hf/deepseek-v3.json") + args);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("\nmtp: trains 1 multi-token-prediction module (mtp_layers) on the last "
                   "pipeline stage, each a layer with its own pass through the LM head and "
                   "loss\n") != std::string::npos);
  Run yaml = run_meshplan("estimate --model " + repo_path("models/deepseek-v3.yaml") + args);
  REQUIRE(yaml.rc == 0);
  CHECK(yaml.out.find("mtp:") == std::string::npos);
}

TEST_CASE("the build writes a man page and bash/zsh completions from --help") {
  const std::filesystem::path doc = std::filesystem::path(MESHPLAN_BINARY).parent_path() / "doc";
  const std::string man = read_file(doc / "meshplan.1");
  CHECK(man.rfind(".TH MESHPLAN 1 ", 0) == 0);
  CHECK(
      man.find("meshplan \\- plan DP/TP/PP/CP/EP layouts for large-model training and serving\n") !=
      std::string::npos);
  for (const char* command : {"memory", "plan", "report", "export"})
    CHECK(man.find(std::string(".SS ") + command + "\n") != std::string::npos);
  CHECK(man.find(".SS \"calibrate import nccl-tests\"\n") != std::string::npos);
  const std::string bash = read_file(doc / "meshplan.bash");
  CHECK(bash.find("complete -o filenames -F _meshplan meshplan") != std::string::npos);
  CHECK(bash.find(" --objective --top --sample ") != std::string::npos);  // report's options
  const std::string zsh = read_file(doc / "_meshplan");
  CHECK(zsh.rfind("#compdef meshplan\n", 0) == 0);
  CHECK(zsh.find("help memory estimate plan sweep") != std::string::npos);
}

TEST_CASE(
    "--max-uneven-deficit 3 plans DeepSeek-V3's 61 layers on 16 stages, torchtitan's job "
    "file names them") {
  const std::string in = "--model " + repo_path("models/deepseek-v3.yaml") + " --cluster " +
                         repo_path("topologies/dgx-h100-2048n.yaml") + " --gpus 2048";
  const std::string fix = " --fix tp=1,pp=16,vpp=1,ep=64 --top 1";
  // By default chunk counts at most 2 layers short are searched: none of pp 16.
  Run none = run_meshplan("plan --framework torchtitan " + in + fix);
  CHECK(none.out.find("pp·vpp must split the 61 layers evenly, or at most 2 short") !=
        std::string::npos);
  Run r = run_meshplan("plan --framework torchtitan " + in + fix + " --max-uneven-deficit 3");
  REQUIRE(r.rc == 0);
  const size_t at = r.out.find("best: --layout ");
  REQUIRE(at != std::string::npos);
  const std::string layout = r.out.substr(at + 15, r.out.find('\n', at) - (at + 15));
  CHECK(layout.find("pp=16") != std::string::npos);
  CHECK(layout.find("uneven=true") != std::string::npos);
  Run toml = run_meshplan("export --format torchtitan-toml " + in + " --layout " + layout);
  REQUIRE(toml.rc == 0);
  CHECK(toml.out.find("module_fqns_per_model_part = [\n  [\"tok_embeddings\", \"layers.0\", "
                      "\"layers.1\", \"layers.2\"],\n") != std::string::npos);
  CHECK(run_meshplan("export --format torchtitan " + in + " --layout " + layout).rc == 2);
}

TEST_CASE("a report names the model's local attention: Llama 4 Scout's chunks on 36 of 48 layers") {
  const auto out = std::filesystem::temp_directory_path() /
                   (std::to_string(::getpid()) + "-meshplan-cli-report-window");
  Run r = run_meshplan("report --model " + repo_path("models/llama4-scout.yaml") + " --cluster " +
                       repo_path("topologies/dgx-h100-1n.yaml") + " --global-batch 64 --out '" +
                       out.string() + "'");
  REQUIRE(r.rc == 0);
  CHECK(read_file(out / "report.md")
            .find("| local attention | chunks of 8192 tokens on 36 of 48 layers |\n") !=
        std::string::npos);
  std::filesystem::remove_all(out);
}

TEST_CASE("calibrate import of a pasted table asks for --collective, then notes what it read") {
  const std::string log = repo_path("tests/data/nccl-tests/nccl_tests_issue232.txt");
  const auto out = std::filesystem::temp_directory_path() /
                   (std::to_string(::getpid()) + "-meshplan-cli-import.yaml");
  Run bare = run_meshplan("calibrate import nccl-tests " + log + " --out '" + out.string() + "'");
  CHECK(bare.rc == 2);
  CHECK(bare.err.find("error: the log does not name its collective") != std::string::npos);
  CHECK(bare.err.find("pass --collective (all_reduce, ") != std::string::npos);
  Run r = run_meshplan("calibrate import nccl-tests " + log +
                       " --collective all_reduce --ranks 2 --nodes 2 --out '" + out.string() + "'");
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("wrote ") == 0);
  CHECK(r.err.find("nccl_tests_issue232.txt:5: no '# nThread") != std::string::npos);
  CHECK(r.err.find("all_reduce x2 (ib): fit within ±10% from ") != std::string::npos);
  CHECK(read_file(out).find("notes:\n") != std::string::npos);
  // The provenance names every option that shaped the profile, to run it again.
  CHECK(read_file(out).find("command: meshplan calibrate import nccl-tests " +
                            std::string(MESHPLAN_SOURCE_DIR) +
                            "/tests/data/nccl-tests/nccl_tests_issue232.txt --collective "
                            "all_reduce --ranks 2 --nodes 2 --out " +
                            out.string() + "\n") != std::string::npos);
  std::filesystem::remove(out);
}

TEST_CASE("--profile is merged over the cluster's profile, stderr says from where, and warns") {
  const std::string a100 = std::string(MESHPLAN_SOURCE_DIR) + "/profiles/a100-published.yaml";
  Run r = run_meshplan("estimate " + k8b + " --layout tp=8 --profile '" + a100 + "'");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("framework: megatron-core") != std::string::npos);
  CHECK(r.err.find("profile: ") == 0);
  CHECK(r.err.find(" from h100-published (the cluster's profile) (published)\n") !=
        std::string::npos);
  CHECK(r.err.find(" from " + a100 + " (published)\n") != std::string::npos);
  CHECK(r.err.find("warning: profile 'a100-published' was measured on 'A100-SXM-80GB', but the "
                   "cluster's GPUs are H100-SXM-80GB") != std::string::npos);
  // Without --profile: nothing on stderr.
  Run plain = run_meshplan("estimate " + k8b + " --layout tp=8");
  CHECK(plain.err.empty());
}

TEST_CASE("a --profile whose fits are all on levels the cluster lacks is named, merged or not") {
  const std::string roce = (std::filesystem::temp_directory_path() /
                            (std::to_string(::getpid()) + "-meshplan-cli-roce.yaml"))
                               .string();
  Run imported = run_meshplan("calibrate import nccl-tests " +
                              repo_path("tests/data/nccl-tests/all_reduce_perf.txt") +
                              " --level roce --out " + roce);
  REQUIRE(imported.rc == 0);
  // Merged over h100-published, whose nvlink fits still price the node: the file's own are idle.
  Run r = run_meshplan("estimate " + k8b + " --layout tp=8 --profile " + roce);
  std::filesystem::remove(roce);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("\nwarning: profile '" + std::filesystem::path(roce).stem().string() +
                   "' has collective fits only on network levels the cluster does not have "
                   "(roce; the cluster's: nvlink): those fits are not used\n") !=
        std::string::npos);
}

TEST_CASE("memory --framework prices with the framework's memory rules, as estimate does") {
  const std::string m70 = "--model " + repo_path("models/llama3-70b.yaml") + " --cluster " +
                          repo_path("topologies/dgx-h100-64n.yaml") +
                          " --layout tp=8,pp=4,recompute=selective --precision fp8";
  Run core = run_meshplan("memory " + m70);
  Run nemo = run_meshplan("memory " + m70 + " --framework nemo");
  Run titan = run_meshplan("memory " + m70 + " --framework torchtitan");
  REQUIRE(core.rc == 0);
  REQUIRE(nemo.rc == 0);
  REQUIRE(titan.rc == 0);
  // Delayed scaling keeps an amax history of 1 (Megatron-Core) or 1024 (NeMo) per quantizer:
  // 80 GEMMs x 60 B = 4.7 KiB, 80 x 20,520 B = 1,603.1 KiB; torchtitan's current scaling none.
  CHECK(core.out.find("scaling state 4.7 KiB") != std::string::npos);
  CHECK(nemo.out.find("scaling state 1603.1 KiB") != std::string::npos);
  CHECK(titan.out.find("scaling state 0.0 KiB") != std::string::npos);
  Run typo = run_meshplan("memory " + m70 + " --framework nemoo");
  CHECK(typo.rc == 2);
}

TEST_CASE(
    "estimate plan and sweep of an MoE model caution that its training times are optimistic") {
  const std::string mixtral = "--model " + repo_path("models/mixtral-8x7b.yaml") + " --cluster " +
                              repo_path("topologies/dgx-h100-1n.yaml");
  const std::string caution =
      "caution: MoE training times are not validated to the dense models' standard: meshplan's "
      "errors on the published MoE runs of tests/data/published_runs_moe.yaml are several times "
      "larger, most of them too fast (README, `meshplan validate`); compare MoE layouts with "
      "care\n";
  for (const std::string& command :
       {"estimate " + mixtral + " --layout ep=8,mbs=1,recompute=full",
        "plan " + mixtral + " --top 1", "sweep " + mixtral + " --gpus 8"}) {
    CAPTURE(command);
    const Run r = run_meshplan(command);
    REQUIRE(r.rc == 0);
    CHECK(r.out.ends_with(caution));
  }
  // A dense model's answers carry none.
  const Run dense = run_meshplan("estimate " + k8b + " --layout tp=8");
  REQUIRE(dense.rc == 0);
  CHECK(dense.out.find("caution:") == std::string::npos);
}
