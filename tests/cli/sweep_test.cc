// meshplan sweep end to end: the same best layout as plan at every count, the documented CSV
// and JSON shapes, the no-layout reason, identical bytes for any thread count, bad input, and
// time to train in estimate and plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "run_meshplan.h"

using namespace meshplan::testing;

namespace {

const std::string k8b_inputs = "--model " + repo_path("models/llama3-8b.yaml") + " --cluster " +
                               repo_path("topologies/dgx-h100-1n.yaml");
const std::string k8b = k8b_inputs + " --global-batch 64";

}  // namespace

TEST_CASE("sweep: the best layout at each count is plan's best layout for that count") {
  Run s = run_meshplan("sweep " + k8b + " --gpus 2,4,8 --format json");
  REQUIRE(s.rc == 0);
  nlohmann::json j = nlohmann::json::parse(s.out);
  REQUIRE(j["rows"].size() == 3);
  for (const auto& row : j["rows"]) {
    const int64_t gpus = row["gpus"].get<int64_t>();
    CAPTURE(gpus);
    Run p = run_meshplan("plan " + k8b + " --gpus " + std::to_string(gpus) + " --format json");
    REQUIRE(p.rc == 0);
    nlohmann::json plan = nlohmann::json::parse(p.out);
    CHECK(row["best"]["layout"] == plan["ranked"][0]["layout"]);
    CHECK(row["best"]["step_time_s"] == plan["ranked"][0]["step_time_s"]);
    CHECK(row["search"]["evaluated"] == plan["search"]["evaluated"]);
  }
}

TEST_CASE("sweep --simulate-top K keeps plan --simulate-top K's best layout at each count") {
  Run s = run_meshplan("sweep " + k8b + " --gpus 4,8 --simulate-top 3 --format json");
  REQUIRE(s.rc == 0);
  nlohmann::json j = nlohmann::json::parse(s.out);
  REQUIRE(j["rows"].size() == 2);
  for (const auto& row : j["rows"]) {
    const int64_t gpus = row["gpus"].get<int64_t>();
    CAPTURE(gpus);
    Run p = run_meshplan("plan " + k8b + " --gpus " + std::to_string(gpus) +
                         " --simulate-top 3 --format json");
    REQUIRE(p.rc == 0);
    nlohmann::json plan = nlohmann::json::parse(p.out);
    CHECK(row["best"]["layout"] == plan["ranked"][0]["layout"]);
    CHECK(row["best"]["simulated_step_time_s"] == plan["ranked"][0]["simulated_step_time_s"]);
  }
  CHECK(run_meshplan("sweep " + k8b + " --gpus 4,8 --simulate-top 3").out.find("simulated") !=
        std::string::npos);
}

TEST_CASE("sweep --format json: documented fields, no_layout with its rule, extension flag") {
  Run s =
      run_meshplan("sweep " + k8b + " --gpus 5,8,16 --tokens 1e12 --gpu-hour-cost 2 --format json");
  REQUIRE(s.rc == 0);
  nlohmann::json j = nlohmann::json::parse(s.out);
  for (const char* key : {"model", "cluster", "gpu", "framework", "sweep", "batch", "tokens",
                          "gpu_hour_cost_usd", "rows"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(j["sweep"] == "gpus");
  CHECK(j["batch"]["rule"] == "fixed_sequences");
  REQUIRE(j["rows"].size() == 3);
  const auto& none = j["rows"][0];
  CHECK(none["gpus"] == 5);
  CHECK_FALSE(none.contains("best"));
  CHECK(none["no_layout"]["kind"] == "divisibility");
  CHECK(none["no_layout"]["text"].get<std::string>().find("dp must divide the global batch") !=
        std::string::npos);
  const auto& eight = j["rows"][1];
  CHECK(eight["cluster_extended"] == false);
  CHECK(eight["scaling_efficiency"] == 1.0);
  const double t = eight["time_to_train_s"].get<double>();
  CHECK(t == doctest::Approx(1e12 / eight["best"]["tokens_per_s"].get<double>()));
  CHECK(eight["gpu_hours"].get<double>() == doctest::Approx(8 * t / 3600));
  CHECK(eight["cost_usd"].get<double>() == doctest::Approx(2 * 8 * t / 3600));
  const auto& sixteen = j["rows"][2];
  CHECK(sixteen["cluster_extended"] == true);
  CHECK(sixteen["nodes"] == 2);
}

TEST_CASE("sweep --format csv: the documented header and one line per count") {
  Run s = run_meshplan("sweep " + k8b + " --gpus 4,8 --format csv");
  REQUIRE(s.rc == 0);
  CHECK(s.out.rfind("gpus,seq_len,global_batch,nodes,cluster_extended,layout,step_time_s,"
                    "tokens_per_s,mfu,peak_bytes,capacity_bytes,time_to_train_s,gpu_hours,"
                    "cost_usd,scaling_efficiency,no_layout\n",
                    0) == 0);
  CHECK(std::count(s.out.begin(), s.out.end(), '\n') == 3);
}

TEST_CASE("sweep: the table says when the cluster was extended and why a count has no layout") {
  Run s = run_meshplan("sweep " + k8b + " --gpus 5,8,16");
  REQUIRE(s.rc == 0);
  CHECK(s.out.find("16+") != std::string::npos);
  CHECK(s.out.find("+ beyond the cluster's 8 GPUs: dgx-h100-1n extended with more nodes of 8 × "
                   "H100-SXM-80GB and the same network levels") != std::string::npos);
  CHECK(s.out.find("no layout at 5 GPUs: divisibility: ") != std::string::npos);
  CHECK(s.out.find("no valid layout") == std::string::npos);
}

TEST_CASE("sweep prints the same bytes for 1 and 2 threads in every format") {
  for (const char* format : {"table", "csv", "json", "md"}) {
    CAPTURE(format);
    const std::string args = "sweep " + k8b + " --gpus 4..16 --tokens 1e12 --format " + format;
    Run one = run_meshplan(args + " --threads 1");
    Run two = run_meshplan(args + " --threads 2");
    REQUIRE(one.rc == 0);
    CHECK(one.out == two.out);
  }
}

TEST_CASE("sweep: bad input exits 2 with one message and nothing on stdout") {
  Run bad_list = run_meshplan("sweep " + k8b + " --gpus 8,x");
  CHECK(bad_list.rc == 2);
  CHECK(bad_list.out.empty());
  CHECK(bad_list.err.rfind("--gpus:1:3: error: field 'gpus' = 'x': must be a positive integer",
                           0) == 0);
  Run tokens = run_meshplan("sweep " + k8b_inputs + " --gpus 8 --tokens-per-step 1000");
  CHECK(tokens.rc == 2);
  CHECK(tokens.err.find("must be a multiple of the sequence length (8192)") != std::string::npos);
  CHECK(run_meshplan("sweep " + k8b + " --batch-per-gpu 2").rc == 2);
  Run two_axes = run_meshplan("sweep " + k8b + " --gpus 4,8 --seq-len 4096,8192");
  CHECK(two_axes.rc == 2);
  CHECK(two_axes.err.find("one --gpus count") != std::string::npos);
  CHECK(run_meshplan("sweep " + k8b + " --gpus 8 --gpu-hour-cost 2").rc == 2);
}

TEST_CASE("estimate and plan print the time to train with --tokens, and only then") {
  const std::string layout = " --layout tp=1,pp=1,zero=1";
  Run e = run_meshplan("estimate " + k8b + layout + " --tokens 1e12");
  REQUIRE(e.rc == 0);
  CHECK(e.out.find("time to train 1.00 T tokens: ") != std::string::npos);
  CHECK(run_meshplan("estimate " + k8b + layout).out.find("time to train") == std::string::npos);
  Run ej = run_meshplan("estimate " + k8b + layout + " --tokens 1e12 --format json");
  REQUIRE(ej.rc == 0);
  nlohmann::json j = nlohmann::json::parse(ej.out);
  CHECK(j["time_to_train"]["seconds"].get<double>() ==
        doctest::Approx(1e12 / j["tokens_per_s"].get<double>()));
  CHECK(j["time_to_train"]["gpu_hours"].get<double>() ==
        doctest::Approx(8 * j["time_to_train"]["seconds"].get<double>() / 3600));
  Run p = run_meshplan("plan " + k8b + " --top 2 --tokens 1e12");
  REQUIRE(p.rc == 0);
  CHECK(p.out.find("time to train 1.00 T tokens: ") != std::string::npos);
  CHECK(run_meshplan("plan " + k8b + " --top 2").out.find("time to train") == std::string::npos);
}

TEST_CASE("sweep --seq-len at one count: one row per length, the batch from --tokens-per-step") {
  Run s = run_meshplan("sweep " + k8b_inputs +
                       " --gpus 8 --seq-len 4096,8192 --tokens-per-step 524288 --format json");
  REQUIRE(s.rc == 0);
  nlohmann::json j = nlohmann::json::parse(s.out);
  CHECK(j["sweep"] == "seq_len");
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["seq_len"] == 4096);
  CHECK(j["rows"][0]["global_batch"] == 128);
  CHECK(j["rows"][1]["global_batch"] == 64);
  CHECK(j["rows"][0]["scaling_efficiency"].is_null());
}

TEST_CASE("sweep --global-batch with several values sweeps the batch at one count") {
  Run s = run_meshplan("sweep " + k8b_inputs + " --gpus 8 --global-batch 32,64 --format json");
  REQUIRE(s.rc == 0);
  nlohmann::json j = nlohmann::json::parse(s.out);
  CHECK(j["sweep"] == "global_batch");
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["global_batch"] == 32);
  CHECK(j["rows"][1]["global_batch"] == 64);
  Run p = run_meshplan("plan " + k8b_inputs + " --gpus 8 --global-batch 32 --format json");
  REQUIRE(p.rc == 0);
  CHECK(j["rows"][0]["best"]["layout"] == nlohmann::json::parse(p.out)["ranked"][0]["layout"]);
  Run two_axes = run_meshplan("sweep " + k8b_inputs + " --gpus 4,8 --global-batch 32,64");
  CHECK(two_axes.rc == 2);
  CHECK(two_axes.err.find("several batches need one --gpus count") != std::string::npos);
}
