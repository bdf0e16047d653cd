// Launcher exports: pinned text for known layouts (tests/launchers/golden/), DeepSpeed's
// batch identity, and the refusals with their messages.
#include "launchers/launcher_export.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/diagnostic.h"
#include "tests/test_files.h"

using namespace meshplan;
namespace fs = std::filesystem;

namespace {

ModelSpec model(const std::string& name) {
  Result<ModelSpec> m = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/models/" + name + ".yaml");
  REQUIRE(m.ok());
  return m.value();
}

Layout layout(const std::string& text, const ModelSpec& m, int64_t gpus) {
  Result<Layout> l = parse_layout(text);
  REQUIRE(l.ok());
  Layout out = l.value();
  REQUIRE(check_layout(out, m, gpus, m.training).empty());
  return out;
}

std::string exported(Launcher launcher, const ModelSpec& m, const Layout& l) {
  Result<std::string> r = export_launcher(launcher, m, m.training, l);
  if (!r) FAIL(format_diagnostics(r.errors()));
  return r.value();
}

void check_golden(const std::string& name, const std::string& text) {
  const fs::path p = fs::path(MESHPLAN_SOURCE_DIR) / "tests/launchers/golden" / name;
  if (test::update_golden()) test::write_file(p, text);
  CHECK(text == test::read_file(p));
}

std::string refusal(Launcher launcher, const ModelSpec& m, const Layout& l) {
  Result<std::string> r = export_launcher(launcher, m, m.training, l);
  REQUIRE(!r.ok());
  return format_diagnostics(r.errors());
}

}  // namespace

TEST_CASE("export: table of launchers") {
  CHECK(launcher_names() ==
        std::vector<std::string>{"megatron", "deepspeed", "nemo", "torchtitan"});
  CHECK(parse_launcher("nemo") == Launcher::nemo);
  CHECK_FALSE(parse_launcher("fsdp").has_value());
  CHECK(std::string(launcher_title(Launcher::megatron)) == "Megatron-LM");
}

TEST_CASE("export: pinned text for llama3-70b tp8 pp4 vpp5 selective ZeRO-1") {
  const ModelSpec m = model("llama3-70b");
  const Layout l = layout("tp=8,pp=4,vpp=5,zero=1,mbs=1,recompute=selective", m, 512);
  check_golden("llama3-70b-megatron.txt", exported(Launcher::megatron, m, l));
  check_golden("llama3-70b-nemo.yaml", exported(Launcher::nemo, m, l));
}

TEST_CASE("export: pinned text for mixtral-8x7b and llama3-8b FSDP") {
  const ModelSpec mixtral = model("mixtral-8x7b");
  const Layout moe = layout("tp=2,pp=2,ep=4,zero=1,mbs=1,recompute=full", mixtral, 64);
  check_golden("mixtral-8x7b-megatron.txt", exported(Launcher::megatron, mixtral, moe));
  const ModelSpec small = model("llama3-8b");
  const Layout fsdp = layout("tp=2,pp=1,zero=3,mbs=2,recompute=selective", small, 64);
  check_golden("llama3-8b-torchtitan.txt", exported(Launcher::torchtitan, small, fsdp));
  check_golden("llama3-8b-deepspeed.json",
               exported(Launcher::deepspeed, small, layout("tp=1,pp=1,zero=3,mbs=2", small, 64)));
  const Layout pipe =
      layout("tp=8,pp=4,vpp=2,zero=2,mbs=1,recompute=full,schedule=interleaved", small, 64);
  check_golden("llama3-8b-torchtitan-pp.txt", exported(Launcher::torchtitan, small, pipe));
}

TEST_CASE("export: DeepSpeed JSON parses and train_batch_size = micro x accumulation x dp") {
  const ModelSpec m = model("llama3-8b");
  for (const char* text : {"tp=1,pp=1,zero=3,mbs=2", "tp=1,pp=4,zero=1,mbs=1,recompute=full",
                           "tp=2,sp=false,pp=2,zero=0,mbs=4"}) {
    CAPTURE(text);
    const Layout l = layout(text, m, 64);
    const nlohmann::json j = nlohmann::json::parse(exported(Launcher::deepspeed, m, l));
    const int64_t micro = j["train_micro_batch_size_per_gpu"],
                  accumulation = j["gradient_accumulation_steps"];
    CHECK(j["train_batch_size"].get<int64_t>() == micro * accumulation * l.dp);
    CHECK(j["train_batch_size"].get<int64_t>() == m.training.global_batch);
    CHECK(j["zero_optimization"]["stage"].get<int>() == l.zero);
    CHECK(j.contains("pipeline") == (l.pp > 1));
    if (l.pp > 1) CHECK(j["pipeline"]["stages"].get<int64_t>() == l.pp);
  }
}

TEST_CASE("export: refused layouts name the launcher and the field") {
  const ModelSpec m = model("llama3-8b");
  CHECK(refusal(Launcher::megatron, m, layout("tp=2,zero=3", m, 64)) ==
        "--layout: error: field 'zero' = '3': Megatron-LM cannot express this: Megatron-LM shards "
        "optimizer states only (--use-distributed-optimizer, ZeRO-1); use zero=0 or 1\n");
  CHECK(refusal(Launcher::megatron, m, layout("tp=2,pp=4,schedule=zb-h1", m, 64))
            .find("field 'schedule' = 'zb-h1': Megatron-LM cannot express this") !=
        std::string::npos);
  CHECK(refusal(Launcher::nemo, m, layout("tp=2,pp=4,schedule=gpipe", m, 64))
            .find("field 'schedule' = 'gpipe': NeMo cannot express this") != std::string::npos);
  CHECK(refusal(Launcher::torchtitan, m, layout("tp=2,zero=1", m, 64))
            .find("field 'zero' = '1': torchtitan cannot express this") != std::string::npos);
  CHECK(refusal(Launcher::torchtitan, m, layout("tp=2,pp=4,schedule=zb-h1", m, 64))
            .find("field 'schedule' = 'zb-h1': torchtitan cannot express this") !=
        std::string::npos);
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=1,pp=4,zero=3", m, 64))
            .find("field 'zero' = '3': DeepSpeed cannot express this: the pipeline engine supports "
                  "ZeRO stages 0 and 1 only") != std::string::npos);
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=1,cp=2", m, 64))
            .find("field 'cp' = '2': DeepSpeed") != std::string::npos);
}

TEST_CASE("export: hybrid sharding as each launcher spells it, or refused") {
  const ModelSpec m = model("llama3-8b");
  // 64 GPUs as tp2: dp 32, shard groups of 8, 4 replicas.
  const std::string megatron =
      exported(Launcher::megatron, m, layout("tp=2,zero=1,shard=8", m, 64));
  CHECK(megatron.find("--num-distributed-optimizer-instances 4") != std::string::npos);
  CHECK(exported(Launcher::megatron, m, layout("tp=2,zero=1", m, 64))
            .find("--num-distributed-optimizer-instances") == std::string::npos);
  const std::string titan = exported(Launcher::torchtitan, m, layout("tp=2,zero=3,shard=8", m, 64));
  CHECK(titan.find("--parallelism.data_parallel_replicate_degree 4") != std::string::npos);
  CHECK(titan.find("--parallelism.data_parallel_shard_degree 8") != std::string::npos);
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=2,zero=1,shard=8", m, 64))
            .find("field 'shard' = '8': DeepSpeed cannot express this") != std::string::npos);
  CHECK(refusal(Launcher::nemo, m, layout("tp=2,zero=1,shard=8", m, 64))
            .find("field 'shard' = '8': NeMo cannot express this") != std::string::npos);
}

TEST_CASE("export: the CLI prints the config, and refuses with exit 2") {
  const fs::path dir = test::fresh_dir("export-cli");
  CHECK(
      test::run_meshplan(
          "export --format megatron --model models/llama3-70b.yaml --cluster "
          "topologies/dgx-h100-64n.yaml --layout tp=8,pp=4,vpp=5,zero=1,mbs=1,recompute=selective",
          dir) == 0);
  CHECK(test::read_file(dir / "stdout.txt") ==
        test::read_file(fs::path(MESHPLAN_SOURCE_DIR) /
                        "tests/launchers/golden/llama3-70b-megatron.txt"));
  CHECK(test::run_meshplan("export --format megatron --model models/llama3-8b.yaml --cluster "
                           "topologies/dgx-h100-64n.yaml --gpus 64 --layout tp=2,zero=3",
                           dir) == 2);
  CHECK(test::read_file(dir / "stderr.txt").find("Megatron-LM cannot express this") !=
        std::string::npos);
  fs::remove_all(dir);
}
