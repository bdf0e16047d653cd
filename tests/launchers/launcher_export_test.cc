// Launcher exports: pinned text for known layouts (tests/launchers/golden/), DeepSpeed's
// batch identity, and the refusals with their messages.
#include "launchers/launcher_export.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "core/diagnostic.h"
#include "tests/launchers/launcher_test_util.h"
#include "tests/test_files.h"

using namespace meshplan;
namespace fs = std::filesystem;

using namespace meshplan::launcher_test;

namespace {

void check_golden(const std::string& name, const std::string& text) {
  const fs::path p = fs::path(MESHPLAN_SOURCE_DIR) / "tests/launchers/golden" / name;
  if (test::update_golden()) test::write_file(p, text);
  CHECK(text == test::read_file(p));
}

}  // namespace

TEST_CASE("export: table of launchers") {
  CHECK(launcher_names() == std::vector<std::string>{"megatron", "deepspeed", "nemo", "nemo2",
                                                     "torchtitan", "torchtitan-toml"});
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
  check_golden("llama3-8b-torchtitan-pp.toml", exported(Launcher::torchtitan_toml, small, pipe));
}

TEST_CASE("export: DeepSpeed JSON parses and train_batch_size = micro x accumulation x dp") {
  const ModelSpec m = model("llama3-8b");
  for (const char* text :
       {"tp=1,pp=1,zero=3,mbs=2", "tp=1,pp=4,zero=1,mbs=1,recompute=full",
        "tp=2,sp=false,pp=2,zero=0,mbs=4", "tp=1,pp=4,zero=1,mbs=1,recompute=selective"}) {
    CAPTURE(text);
    const Layout l = layout(text, m, 64);
    const nlohmann::json j = nlohmann::json::parse(exported(Launcher::deepspeed, m, l));
    const int64_t micro = j["train_micro_batch_size_per_gpu"],
                  accumulation = j["gradient_accumulation_steps"];
    CHECK(j["train_batch_size"].get<int64_t>() == micro * accumulation * l.dp);
    CHECK(j["train_batch_size"].get<int64_t>() == m.training.global_batch);
    CHECK(j["zero_optimization"]["stage"].get<int>() == l.zero);
    // Only full recomputation under pp writes a pipeline key (interval 1); never stages.
    CHECK(j.contains("pipeline") == (l.pp > 1 && l.recompute == Recompute::full));
    if (j.contains("pipeline")) {
      CHECK(j["pipeline"] == nlohmann::json::parse(R"({"activation_checkpoint_interval": 1})"));
    }
  }
}

// "key.path" → "integer" | "boolean" from the committed table of DeepSpeed's config keys.
std::map<std::string, std::string> deepspeed_keys() {
  std::map<std::string, std::string> keys;
  std::istringstream in(
      test::read_file(fs::path(MESHPLAN_TEST_DATA) / "launchers/deepspeed-0.16.5-config-keys.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key, type;
    fields >> key >> type;
    keys[key] = type;
  }
  return keys;
}

void check_keys(const nlohmann::json& j, const std::string& prefix,
                const std::map<std::string, std::string>& known) {
  for (const auto& [name, value] : j.items()) {
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    CAPTURE(key);
    if (value.is_object()) {
      check_keys(value, key, known);
      continue;
    }
    REQUIRE(known.count(key) == 1);
    CHECK(known.at(key) == (value.is_boolean()  ? "boolean"
                            : value.is_string() ? "string"
                                                : "integer"));
    CHECK((value.is_boolean() || value.is_number_integer() || value.is_string()));
  }
}

TEST_CASE("export: every DeepSpeed key is one DeepSpeed 0.16.5 reads, with its type") {
  const ModelSpec m = model("llama3-8b");
  const std::map<std::string, std::string> known = deepspeed_keys();
  REQUIRE(known.size() == 16);
  for (const char* text :
       {"tp=1,pp=1,zero=3,mbs=2", "tp=1,pp=4,zero=1,mbs=1,recompute=full", "zero=2,offload=cpu",
        "zero=3,offload=nvme", "tp=2,sp=false,pp=2,zero=0,mbs=4,recompute=selective",
        "tp=4,sp=false,zero=2"}) {
    CAPTURE(text);
    check_keys(nlohmann::json::parse(exported(Launcher::deepspeed, m, layout(text, m, 64))), "",
               known);
  }
}

TEST_CASE("export: DeepSpeed refuses AutoTP with ZeRO-3, which its engine asserts against") {
  const ModelSpec m = model("llama3-8b");
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=8,sp=false,zero=3", m, 64)) ==
        "--layout: error: field 'zero' = '3': DeepSpeed cannot express this: AutoTP "
        "(tensor_parallel.autotp_size) with ZeRO stage 3 fails the engine's assertion (zero "
        "stage <= 2, runtime/engine.py); use zero=2 or tp=1\n");
}

TEST_CASE("export: refused layouts name the launcher and the field") {
  const ModelSpec m = model("llama3-8b");
  CHECK(refusal(Launcher::megatron, m, layout("tp=2,zero=3,shard=8", m, 64)) ==
        "--layout: error: field 'shard' = '8': Megatron-LM cannot express this: hybrid sharding "
        "with Megatron-FSDP (ZeRO-2/3) is not exported; use shard=0, or zero=1\n");
  CHECK(refusal(Launcher::megatron, m, layout("tp=2,order=dp-tp-cp-pp", m, 64)) ==
        "--layout: error: field 'order' = 'dp-tp-cp-pp': Megatron-LM cannot express this: "
        "Megatron-LM orders ranks tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with "
        "--use-tp-pp-dp-mapping\n");
  CHECK(refusal(Launcher::nemo, m, layout("tp=2,order=tp-cp-pp-dp", m, 64))
            .find("field 'order' = 'tp-cp-pp-dp': NeMo cannot express this: Megatron-core orders "
                  "ranks tp-cp-ep-dp-pp") != std::string::npos);
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

TEST_CASE("export: each CP variant as each launcher spells it, or refused") {
  const ModelSpec m = model("llama3-70b");  // 64 query heads, 8 KV heads; 512 GPUs
  auto megatron = [&](const char* text) {
    return flag_args(exported(Launcher::megatron, m, layout(text, m, 512)));
  };
  // Ring is Megatron's default (--cp-comm-type p2p): not written.
  CHECK(megatron("tp=8,cp=2").count("--cp-comm-type") == 0);
  CHECK(megatron("tp=8,cp=2,cp_kind=allgather").at("--cp-comm-type") == "all_gather");
  CHECK(megatron("tp=4,cp=2,cp_kind=a2a").at("--cp-comm-type") == "a2a");
  const std::string hybrid =
      exported(Launcher::megatron, m, layout("tp=2,cp=8,cp_kind=hybrid,cp_a2a=4", m, 512));
  CHECK(hybrid.find("--cp-comm-type a2a+p2p") != std::string::npos);
  CHECK(hybrid.find("--hierarchical-context-parallel-sizes 4 2") != std::string::npos);
  const std::string nemo =
      exported(Launcher::nemo, m, layout("tp=2,cp=8,cp_kind=hybrid,cp_a2a=4", m, 512));
  CHECK(nemo.find("  cp_comm_type: a2a+p2p  # not in megatron_gpt_config.yaml") !=
        std::string::npos);
  CHECK(nemo.find("  hierarchical_context_parallel_sizes: [4,2]") != std::string::npos);
  auto titan = [&](const char* text) {
    return flag_args(exported(Launcher::torchtitan, m, layout(text, m, 512)))
        .at("--parallelism.context_parallel_rotate_method");
  };
  CHECK(titan("tp=8,cp=2,zero=3") == "alltoall");
  CHECK(titan("tp=8,cp=2,zero=3,cp_kind=allgather") == "allgather");
  CHECK(refusal(Launcher::torchtitan, m, layout("tp=4,cp=2,zero=3,cp_kind=a2a", m, 512))
            .find("field 'cp_kind' = 'a2a': torchtitan cannot express this: its context "
                  "parallelism exchanges K/V shards (ring or all-gather), not heads") !=
        std::string::npos);
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=4,cp=2,sp=false,cp_kind=a2a", m, 512))
            .find("Ulysses (cp_kind=a2a) is set in model code (Megatron-DeepSpeed "
                  "--ds-sequence-parallel-size)") != std::string::npos);
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
                           "topologies/dgx-h100-64n.yaml --gpus 64 --layout "
                           "tp=2,pp=4,schedule=gpipe",
                           dir) == 2);
  CHECK(test::read_file(dir / "stderr.txt").find("Megatron-LM cannot express this") !=
        std::string::npos);
  fs::remove_all(dir);
}

// torchtitan v0.2.2's options ("--section.field" → annotated type), from the committed table.
std::map<std::string, std::string> torchtitan_options() {
  std::map<std::string, std::string> options;
  std::istringstream in(
      test::read_file(fs::path(MESHPLAN_TEST_DATA) / "launchers/torchtitan-0.2.2-options.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t'), tab2 = line.find('\t', tab + 1);
    options[line.substr(0, tab)] = line.substr(tab + 1, tab2 - tab - 1);
  }
  return options;
}

// torchtitan v0.2.2's split (distributed/pipeline_parallel.py, pipeline_llm and
// generate_llm_fqn_per_model_part): transformer layers per stage, or an error as it raises one.
std::vector<int64_t> torchtitan_stages(int64_t layers, int64_t pp, bool single_stage_schedule,
                                       std::optional<int64_t> layers_per_stage, int64_t first_less,
                                       int64_t last_less, std::string& error) {
  int64_t stages = pp * (single_stage_schedule ? 1 : 2);
  if (layers_per_stage) {
    stages = (layers + first_less + last_less + *layers_per_stage - 1) / *layers_per_stage;
    if (stages % pp != 0) error = "number of virtual stages must be divisible by pp";
    if (single_stage_schedule && stages / pp != 1) error = "single stage schedule needs 1 per rank";
    if (!single_stage_schedule && stages / pp < 2) error = "multi-stage schedule needs 2 per rank";
  }
  const int64_t effective = layers + first_less + last_less, per = effective / stages,
                extra = effective % stages;
  std::vector<int64_t> out;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t n = per + (s < extra ? 1 : 0);
    if (s == 0) n -= first_less;
    if (s == stages - 1) n -= last_less;
    out.push_back(n);
  }
  return out;
}

TEST_CASE("torchtitan's own split rules give the stages meshplan priced, for every schedule") {
  // The issue's cases: llama3-70b (80 layers) at tp=8,pp=4,vpp=5 crashed (21 virtual stages) and
  // 1F1B got 20/21/20/19; with torchtitan's defaults (first/last less 1) they reproduce here.
  std::string error;
  torchtitan_stages(80, 4, false, 4, 1, 1, error);
  CHECK(error == "number of virtual stages must be divisible by pp");
  error.clear();
  CHECK(torchtitan_stages(80, 4, true, std::nullopt, 1, 1, error) ==
        std::vector<int64_t>{20, 21, 20, 19});

  const std::map<std::string, std::string> known = torchtitan_options();
  struct Case {
    const char* model;
    const char* layout;
    int64_t gpus = 512;
  };
  const Case cases[] = {
      {"llama3-70b", "tp=8,pp=4,vpp=5,zero=2,mbs=1,schedule=interleaved"},
      {"llama3-70b", "tp=8,pp=4,zero=2,mbs=1,schedule=1f1b"},
      {"llama3-70b", "tp=8,pp=4,zero=3,mbs=1,schedule=gpipe"},
      {"llama3-70b", "tp=8,pp=8,vpp=2,zero=0,mbs=1,schedule=interleaved"},
      {"llama3-70b", "tp=8,pp=4,vpp=2,zero=2,mbs=1,schedule=zb-v"},
      {"llama3-70b", "tp=8,pp=4,vpp=5,zero=2,mbs=1,schedule=zb-interleaved"},
      // Uneven, one layer short: 80 layers over 3 stages (27/27/26).
      {"llama3-70b", "tp=8,pp=3,zero=2,mbs=1,schedule=1f1b,uneven=true", 384},
      // Two short: Llama 3 405B's 126 layers over 16 stages (7/8/.../8/7, as Meta trained it).
      {"llama3-405b", "tp=8,pp=16,zero=2,mbs=1,schedule=1f1b,uneven=true"},
      {"llama3-405b", "tp=8,pp=8,vpp=2,zero=2,mbs=1,schedule=zb-v,uneven=true"},
      {"llama3-405b", "tp=8,pp=4,vpp=4,zero=2,mbs=1,schedule=interleaved,uneven=true"}};
  for (const Case& c : cases) {
    const std::string text = c.layout;
    CAPTURE(text);
    const ModelSpec m = model(c.model);
    const Layout l = layout(text, m, c.gpus);
    const std::string out = exported(Launcher::torchtitan, m, l);
    const std::map<std::string, std::string> args = flag_args(out);
    for (const auto& [flag, value] : args) {
      CAPTURE(flag);
      REQUIRE(known.count(flag) == 1);
      const std::string& type = known.at(flag);
      if (type == "int" || type == "int | None")
        CHECK(value.find_first_not_of("-0123456789") == std::string::npos);
      if (type == "bool") CHECK(value.empty());
      if (type.rfind("Literal[", 0) == 0)
        CHECK(type.find("\"" + value + "\"") != std::string::npos);
    }
    const std::string schedule = args.at("--parallelism.pipeline_parallel_schedule");
    const bool single = schedule == "1F1B" || schedule == "GPipe";
    error.clear();
    const std::vector<int64_t> stages = torchtitan_stages(
        m.layers, l.pp, single,
        std::stoll(args.at("--parallelism.pipeline_parallel_layers_per_stage")),
        std::stoll(args.at("--parallelism.pipeline_parallel_first_stage_less_layers")),
        std::stoll(args.at("--parallelism.pipeline_parallel_last_stage_less_layers")), error);
    CHECK(error.empty());
    CHECK(stages == chunk_layers(m.layers, l.pp, l.vpp));
    // torchtitan's own defaults (both less_layers 1) give another split: name them every time.
    CHECK(args.count("--parallelism.pipeline_parallel_first_stage_less_layers") == 1);
    // ZeRO-3 under a pipeline must ask for resharding: torchtitan's default turns it off.
    if (l.zero == 3) CHECK(args.at("--parallelism.fsdp_reshard_after_forward") == "always");
  }
}

TEST_CASE("torchtitan: a split its less_layers options cannot make is named module by module") {
  // 80 layers over 6 stages: 14 each would be 84, four too many; priced as 13/13/14/14/13/13
  // (chunk_layers takes them from the last, first, second-to-last and second stages).
  const ModelSpec m = model("llama3-70b");
  const Layout l = layout("tp=8,pp=6,zero=2,mbs=1,uneven=true", m, 384);
  CHECK(refusal(Launcher::torchtitan, m, l) ==
        "--layout: error: field 'uneven' = 'true': torchtitan cannot express this: its options "
        "take one layer from the last stage and one from the first only "
        "(pipeline_parallel_last/first_stage_less_layers), and 80 layers over 6 stages take 4; "
        "--format torchtitan-toml names each stage's layers (module_fqns_per_model_part, which "
        "the command line cannot set)\n");
  const std::string toml = exported(Launcher::torchtitan_toml, m, l);
  CHECK(toml.find("pipeline_parallel_layers_per_stage") == std::string::npos);
  // One line per model part: the embedding first, norm and output last, layers in order.
  std::vector<int64_t> parts;
  std::istringstream in(toml.substr(toml.find("module_fqns_per_model_part = [\n")));
  std::string line, all;
  std::getline(in, line);
  while (std::getline(in, line) && line != "]") {
    parts.push_back(0);
    for (size_t at = line.find("\"layers."); at != std::string::npos;
         at = line.find("\"layers.", at + 1))
      ++parts.back();
    all += line;
  }
  CHECK(parts == chunk_layers(80, 6, 1));
  CHECK(parts == std::vector<int64_t>{13, 13, 14, 14, 13, 13});
  CHECK(all.rfind("  [\"tok_embeddings\", \"layers.0\", ", 0) == 0);
  CHECK(all.find("\"layers.79\", \"norm\", \"output\"],") != std::string::npos);
}

TEST_CASE("torchtitan: MoE with tp > 1 splits experts over tp too, zb-h1 is refused") {
  const ModelSpec m = model("mixtral-8x7b");
  const std::string out =
      exported(Launcher::torchtitan, m, layout("tp=2,ep=8,zero=2,mbs=1", m, 64));
  CHECK(flag_args(out).at("--parallelism.expert_tensor_parallel_degree") == "2");
  const ModelSpec dense = model("llama3-8b");
  CHECK(refusal(Launcher::torchtitan, dense, layout("tp=2,pp=4,schedule=zb-h1,zero=2", dense, 64))
            .find("field 'schedule' = 'zb-h1': torchtitan cannot express this: its zero-bubble "
                  "schedules (InterleavedZeroBubble, ZBVZeroBubble) run 2 or more stages per rank; "
                  "zb-h1 runs one") != std::string::npos);
}

TEST_CASE("torchtitan: etp=1 names degree 1, other folds and an ep short of cp·tp are refused") {
  const ModelSpec m = model("mixtral-8x7b");
  const std::string out =
      exported(Launcher::torchtitan, m, layout("tp=8,ep=8,etp=1,zero=2,mbs=1", m, 64));
  CHECK(flag_args(out).at("--parallelism.expert_tensor_parallel_degree") == "1");
  CHECK(refusal(Launcher::torchtitan, m, layout("tp=8,ep=4,etp=2,zero=2", m, 64))
            .find("field 'etp' = '2': torchtitan cannot express this: torchtitan's ParallelDims "
                  "takes expert_tensor_parallel_degree 1 or tp only") != std::string::npos);
  CHECK(refusal(Launcher::torchtitan, m, layout("tp=8,ep=4,etp=1,zero=2", m, 64))
            .find("field 'ep' = '4': torchtitan cannot express this: with etp=1 torchtitan's "
                  "expert parallelism borrows all of cp and tp, so ep must be a multiple of cp·tp "
                  "(8)") != std::string::npos);
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=8,etp=1,zero=1,sp=true", m, 64))
            .find("field 'etp' = '1': ") != std::string::npos);
}

TEST_CASE("torchtitan runs dualpipev as DualPipeV, only it refuses none of the dual schedules") {
  const ModelSpec dense = model("llama3-8b");
  const std::string out = exported(Launcher::torchtitan, dense,
                                   layout("tp=2,pp=4,vpp=2,schedule=dualpipev,zero=2", dense, 64));
  CHECK(flag_args(out).at("--parallelism.pipeline_parallel_schedule") == "DualPipeV");
  CHECK(flag_args(out).at("--parallelism.pipeline_parallel_layers_per_stage") == "4");
  CHECK(
      refusal(Launcher::torchtitan, dense, layout("tp=2,pp=4,schedule=dualpipe,zero=2", dense, 64))
          .find("field 'schedule' = 'dualpipe': torchtitan cannot express this: "
                "torch.distributed.pipelining has DualPipeV, not the bidirectional DualPipe") !=
      std::string::npos);
  CHECK(refusal(Launcher::torchtitan, dense, layout("tp=2,pp=4,schedule=zb-h2,zero=2", dense, 64))
            .find("zb-h2 runs one") != std::string::npos);
  for (const char* s : {"schedule=dualpipe", "schedule=zb-h2", "vpp=2,schedule=dualpipev"}) {
    CAPTURE(s);
    CHECK(refusal(Launcher::megatron, dense, layout(std::string("tp=2,pp=4,") + s, dense, 64))
              .find("Megatron-core pipelines run 1F1B or interleaved 1F1B only") !=
          std::string::npos);
  }
}

TEST_CASE("torchtitan runs zb-v as ZBVZeroBubble and zb-interleaved as InterleavedZeroBubble") {
  const ModelSpec dense = model("llama3-8b");
  // 32 layers over pp 4 · vpp 2 = 8 stages of 4 layers: torchtitan places ZBVZeroBubble's two
  // stages per rank in a V, InterleavedZeroBubble's looped.
  const auto v = flag_args(exported(Launcher::torchtitan, dense,
                                    layout("tp=2,pp=4,vpp=2,schedule=zb-v,zero=2", dense, 64)));
  CHECK(v.at("--parallelism.pipeline_parallel_schedule") == "ZBVZeroBubble");
  CHECK(v.at("--parallelism.pipeline_parallel_layers_per_stage") == "4");
  const auto i =
      flag_args(exported(Launcher::torchtitan, dense,
                         layout("tp=2,pp=4,vpp=4,schedule=zb-interleaved,zero=2", dense, 64)));
  CHECK(i.at("--parallelism.pipeline_parallel_schedule") == "InterleavedZeroBubble");
  CHECK(i.at("--parallelism.pipeline_parallel_layers_per_stage") == "2");
  for (const char* s : {"vpp=2,schedule=zb-v", "vpp=2,schedule=zb-interleaved"}) {
    CAPTURE(s);
    CHECK(refusal(Launcher::megatron, dense, layout(std::string("tp=2,pp=4,") + s, dense, 64))
              .find("Megatron-core pipelines run 1F1B or interleaved 1F1B only") !=
          std::string::npos);
    CHECK(
        refusal(Launcher::deepspeed, dense, layout(std::string("tp=2,pp=4,zero=1,") + s, dense, 64))
            .find("the pipeline engine runs its own 1F1B schedule only") != std::string::npos);
  }
}

TEST_CASE("offload exports: DeepSpeed offload_optimizer, Megatron --optimizer-cpu-offload") {
  const ModelSpec m = model("llama3-8b");
  const nlohmann::json ds = nlohmann::json::parse(
      exported(Launcher::deepspeed, m, layout("tp=1,zero=2,offload=nvme", m, 64)));
  CHECK(ds["zero_optimization"]["offload_optimizer"] ==
        nlohmann::json::parse(
            R"({"device": "nvme", "pin_memory": true, "nvme_path": "/local_nvme"})"));
  const std::string mg =
      exported(Launcher::megatron, m, layout("tp=2,zero=1,offload=cpu,act_offload=4", m, 64));
  CHECK(flag_args(mg).count("--optimizer-cpu-offload") == 1);
  CHECK(flag_args(mg).count("--use-precision-aware-optimizer") == 1);
  CHECK(flag_args(mg).at("--cpu-offloading-num-layers") == "4");
  CHECK(refusal(Launcher::megatron, m, layout("tp=2,zero=1,offload=nvme", m, 64))
            .find("Megatron-Core offloads optimizer states to host memory only") !=
        std::string::npos);
  CHECK(refusal(Launcher::megatron, m, layout("tp=2,pp=2,zero=1,act_offload=2", m, 64))
            .find("needs pp = 1 and no recompute") != std::string::npos);
  CHECK(refusal(Launcher::torchtitan, m, layout("tp=2,zero=2,offload=cpu", m, 64))
            .find("CPUOffloadPolicy") != std::string::npos);
  CHECK(refusal(Launcher::deepspeed, m, layout("tp=1,zero=1,act_offload=2", m, 64))
            .find("cpu_checkpointing") != std::string::npos);
}

TEST_CASE("uniform recompute groups export as Megatron's uniform method and DeepSpeed's interval") {
  const ModelSpec m = model("llama3-8b");
  const std::string mg =
      exported(Launcher::megatron, m, layout("tp=2,recompute=full,recompute_layers=4", m, 64));
  CHECK(flag_args(mg).at("--recompute-granularity") == "full");
  CHECK(flag_args(mg).at("--recompute-method") == "uniform");
  CHECK(flag_args(mg).at("--recompute-num-layers") == "4");
  const nlohmann::json ds = nlohmann::json::parse(exported(
      Launcher::deepspeed, m, layout("tp=1,pp=4,zero=1,recompute=full,recompute_layers=2", m, 64)));
  CHECK(ds["pipeline"]["activation_checkpoint_interval"] == 2);
  CHECK(refusal(Launcher::torchtitan, m,
                layout("tp=2,zero=2,recompute=full,recompute_layers=4", m, 64))
            .find("the uniform method") != std::string::npos);
}

TEST_CASE("README: plan --framework X ranks only layouts X's export accepts (its top 20)") {
  const fs::path dir = test::fresh_dir("export-plan-framework");
  const char* inputs[] = {
      " --model models/llama3-8b.yaml --cluster topologies/dgx-h100-1n.yaml",
      " --model models/mixtral-8x7b.yaml --cluster topologies/dgx-h100-64n.yaml --gpus 32"};
  const char* cases[][2] = {{"megatron-core", "megatron"},
                            {"nemo", "nemo2"},
                            {"deepspeed", "deepspeed"},
                            {"torchtitan", "torchtitan-toml"}};
  for (const char* input : inputs) {
    for (const auto& c : cases) {
      CAPTURE(input);
      CAPTURE(c[0]);
      REQUIRE(test::run_meshplan(
                  std::string("plan --framework ") + c[0] + input + " --top 20 --format json",
                  dir) == 0);
      const nlohmann::json plan = nlohmann::json::parse(test::read_file(dir / "stdout.txt"));
      REQUIRE(!plan["ranked"].empty());
      for (const auto& ranked : plan["ranked"]) {
        const std::string layout = ranked["layout"];
        CAPTURE(layout);
        CHECK(test::run_meshplan(
                  std::string("export --format ") + c[1] + input + " --layout " + layout, dir) ==
              0);
      }
    }
  }
  fs::remove_all(dir);
}

namespace {

// A torchtitan TOML job file read back as "--section.key" → value the way the overrides print
// it: TOML strings unquoted, ["x"] as x, true as a bare flag (""). Fails on a line that is not
// a comment, a [section] header, a blank or `key = value`.
std::map<std::string, std::string> toml_as_flags(const std::string& toml) {
  std::map<std::string, std::string> out;
  std::istringstream in(toml);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const size_t eq = line.find(" = ");
    REQUIRE(eq != std::string::npos);
    REQUIRE(!section.empty());
    std::string value = line.substr(eq + 3);
    if (value == "true")
      value = "";
    else if (value.size() >= 4 && value.rfind("[\"", 0) == 0 &&
             value.substr(value.size() - 2) == "\"]")
      value = value.substr(2, value.size() - 4);
    else if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    else
      CHECK(value.find_first_not_of("-0123456789") == std::string::npos);         // an integer
    CHECK(out.emplace("--" + section + "." + line.substr(0, eq), value).second);  // no duplicate
  }
  return out;
}

}  // namespace

TEST_CASE("torchtitan: the job names torchtitan's own model of the shipped shape, or says none") {
  struct Case {
    const char* model;
    const char* layout;
    int64_t gpus;
    const char* name;
    const char* flavor;
  } cases[] = {{"llama3-8b", "tp=2,zero=2", 64, "llama3", "8B"},
               {"llama3-70b", "tp=8,zero=2", 64, "llama3", "70B"},
               {"llama3-405b", "tp=8,pp=2,zero=2", 16384, "llama3", "405B"},
               {"llama4-scout", "tp=2,ep=8,zero=2", 64, "llama4", "17bx16e"},
               {"llama4-maverick", "tp=2,ep=8,zero=2", 64, "llama4", "17bx128e"},
               {"qwen3-235b-a22b", "tp=2,ep=8,zero=2", 64, "qwen3", "235B-A22B"}};
  for (const Case& c : cases) {
    CAPTURE(c.model);
    const ModelSpec m = model(c.model);
    const std::string toml = exported(Launcher::torchtitan_toml, m, layout(c.layout, m, c.gpus));
    CHECK(toml.find(fmt::format("[model]\nname = \"{}\"\nflavor = \"{}\"\n", c.name, c.flavor)) !=
          std::string::npos);
  }
  const ModelSpec mixtral = model("mixtral-8x7b");
  const std::string none =
      exported(Launcher::torchtitan, mixtral, layout("tp=2,ep=8,zero=2", mixtral, 64));
  CHECK(none.find("--model.name") == std::string::npos);
  CHECK(none.find("# torchtitan v0.2.2 defines no model of this shape: add [model] name and "
                  "flavor of your own model (without them it trains llama3 debugmodel)\n") !=
        std::string::npos);
}

TEST_CASE("torchtitan-toml: the overrides' options as a job file, section by section") {
  const std::map<std::string, std::string> known = torchtitan_options();
  const ModelSpec dense = model("llama3-70b"), moe = model("mixtral-8x7b");
  TrainingSpec fp8 = dense.training;
  fp8.precision = Precision::fp8;
  struct Case {
    const ModelSpec& m;
    const char* layout;
    TrainingSpec training;
  } cases[] = {
      {dense, "tp=8,pp=4,vpp=5,zero=2,mbs=1,schedule=interleaved", dense.training},
      {dense, "tp=8,pp=1,cp=2,cp_kind=allgather,zero=3,recompute=selective", fp8},
      {dense, "tp=4,pp=4,vpp=2,zero=3,mbs=1,schedule=zb-v,tp_overlap=true", dense.training},
      {moe, "tp=2,ep=8,zero=2,mbs=1", moe.training}};
  for (const Case& c : cases) {
    CAPTURE(c.layout);
    const Layout l = layout(c.layout, c.m, 512);
    const Result<std::string> toml = export_launcher(Launcher::torchtitan_toml, c.m, c.training, l);
    const Result<std::string> flags = export_launcher(Launcher::torchtitan, c.m, c.training, l);
    REQUIRE(toml.ok());
    REQUIRE(flags.ok());
    const std::map<std::string, std::string> read = toml_as_flags(toml.value());
    CHECK(read == flag_args(flags.value()));
    for (const auto& [flag, value] : read) {
      CAPTURE(flag);
      CHECK(known.count(flag) == 1);
    }
  }
  // Refused alike, under torchtitan's name.
  CHECK(refusal(Launcher::torchtitan_toml, dense, layout("tp=2,zero=1", dense, 64))
            .find("field 'zero' = '1': torchtitan cannot express this") != std::string::npos);
}

// The model converters torchtitan v0.2.2 registers (register_model_converter in
// torchtitan/components/quantization/float8.py and mx.py at 73a0e6979dd1): model.converters
// names only these.
TEST_CASE("torchtitan FP8: v0.2.2's converter names, the LM head kept BF16, experts grouped") {
  const std::set<std::string> registered = {"quantize.linear.float8", "quantize.grouped_mm.float8",
                                            "quantize.linear.mx", "quantize.grouped_mm.mx"};
  const ModelSpec dense = model("llama3-70b"), moe = model("mixtral-8x7b");
  TrainingSpec fp8 = dense.training;
  fp8.precision = Precision::fp8;
  const Result<std::string> flags =
      export_launcher(Launcher::torchtitan, dense, fp8, layout("tp=8,zero=3", dense, 64));
  REQUIRE(flags.ok());
  const std::map<std::string, std::string> d = flag_args(flags.value());
  CHECK(d.at("--model.converters") == "quantize.linear.float8");
  CHECK(registered.count(d.at("--model.converters")) == 1);
  CHECK(d.at("--quantize.linear.float8.filter_fqns") == "output");  // priced as a BF16 GEMM
  CHECK(d.count("--quantize.grouped_mm.float8.fqns") == 0);
  TrainingSpec moe_fp8 = moe.training;
  moe_fp8.precision = Precision::fp8;
  const Result<std::string> toml =
      export_launcher(Launcher::torchtitan_toml, moe, moe_fp8, layout("tp=2,ep=8,zero=2", moe, 64));
  REQUIRE(toml.ok());
  CHECK(toml->find("[model]\n") != std::string::npos);
  CHECK(toml->find("converters = [\"quantize.linear.float8\", \"quantize.grouped_mm.float8\"]\n") !=
        std::string::npos);
  CHECK(toml->find("[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n") != std::string::npos);
  CHECK(toml->find("[quantize.linear.float8]\nfilter_fqns = [\"output\"]\n") != std::string::npos);
  // BF16 jobs convert nothing.
  CHECK(flag_args(exported(Launcher::torchtitan, dense, layout("tp=8,zero=3", dense, 64)))
            .count("--model.converters") == 0);
}

// JobSettings: what `plan --fp8-params --grad-reduce-dtype bf16` priced, written as each launcher
// takes it, or refused where it has no way to run it.
TEST_CASE("FP8 parameters and bf16 gradient reduction are exported as each launcher takes them") {
  const ModelSpec m = model("llama3-70b");
  TrainingSpec fp8 = m.training;
  fp8.precision = Precision::fp8;
  const JobSettings job{true, "bf16"};
  auto text = [&](Launcher launcher, const char* l, const JobSettings& j) {
    const Result<std::string> r = export_launcher(launcher, m, fp8, layout(l, m, 64), j);
    return r ? r.value() : format_diagnostics(r.errors());
  };
  const std::string megatron = text(Launcher::megatron, "tp=8,zero=1", job);
  CHECK(megatron.find("--fp8-param-gather") != std::string::npos);
  CHECK(megatron.find("--grad-reduce-in-bf16") != std::string::npos);
  CHECK(text(Launcher::megatron, "tp=8,zero=1", {}).find("--fp8-param-gather") ==
        std::string::npos);
  CHECK(text(Launcher::megatron, "tp=8,zero=0", job)
            .find("field 'zero' = '0': Megatron-LM cannot express this: its FP8 parameters "
                  "(--fp8-param-gather) are gathered by the distributed optimizer or FSDP; use "
                  "zero=1, 2 or 3") != std::string::npos);
  CHECK(text(Launcher::megatron, "tp=8,zero=1", {false, "fp16"})
            .find("field 'grad_reduce_dtype' = 'fp16': Megatron-LM cannot express this: it "
                  "reduces gradients in fp32 or, with --grad-reduce-in-bf16, bf16") !=
        std::string::npos);
  const std::string nemo = text(Launcher::nemo, "tp=8,zero=1", job);
  CHECK(nemo.find("  fp8_params: true  # not in megatron_gpt_config.yaml: +model.fp8_params=") !=
        std::string::npos);
  CHECK(nemo.find("    name: distributed_fused_adam\n    grad_sync_dtype: bf16\n") !=
        std::string::npos);
  CHECK(text(Launcher::nemo, "tp=8,zero=0", {false, "bf16"}).find("field 'zero' = '0'") !=
        std::string::npos);
  // FP8 parameters at zero 0: NeMo 1's rule (zero=1 only), not Megatron-Core's wider one too.
  CHECK(text(Launcher::nemo, "tp=8,zero=0", {true, ""}) ==
        "--layout: error: field 'zero' = '0': NeMo cannot express this: its FP8 parameters and "
        "bf16 gradient reduction go through distributed_fused_adam (fp8_params, "
        "optim.grad_sync_dtype); use zero=1\n");
  const std::string nemo2 = text(Launcher::nemo2, "tp=8,zero=1", job);
  CHECK(nemo2.find("recipe.trainer.plugins.fp8_param_gather = True\n") != std::string::npos);
  CHECK(nemo2.find("recipe.trainer.plugins.grad_reduce_in_fp32 = False\n") != std::string::npos);
  const std::map<std::string, std::string> titan =
      flag_args(text(Launcher::torchtitan, "tp=8,zero=3", {true, ""}));
  CHECK(titan.at("--quantize.linear.float8.enable_fsdp_float8_all_gather").empty());
  CHECK(titan.at("--quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp").empty());
  const std::map<std::string, std::string> known = torchtitan_options();
  for (const auto& [flag, value] : titan) CHECK(known.count(flag) == 1);
  CHECK(text(Launcher::torchtitan, "tp=8,zero=0", {true, ""})
            .find("field 'zero' = '0': torchtitan cannot express this: its FP8 parameters are "
                  "FSDP's float8 all-gather") != std::string::npos);
  CHECK(text(Launcher::torchtitan, "tp=8,zero=3", {false, "bf16"})
            .find("v0.2.2 reduces gradients in float32 only") != std::string::npos);
  CHECK(text(Launcher::deepspeed, "tp=1,zero=3", job).find("field 'fp8_params' = 'true'") !=
        std::string::npos);
  // The search asks per ZeRO stage: with FP8 parameters zero 0 and 1 part ways under Megatron-LM.
  Layout l = layout("tp=8,zero=1", m, 64);
  std::array<const char*, 4> refused{};
  launcher_refuses_by_zero(Launcher::megatron, m, fp8, l, {true, true, true, true}, refused, job);
  CHECK(refused[0] == std::string("zero"));
  CHECK(refused[1] == nullptr);
  CHECK(refused[3] == nullptr);
}

TEST_CASE("export takes --fp8-params and --grad-reduce-dtype, and names a bad dtype") {
  const fs::path dir = test::fresh_dir("export-job");
  const std::string base =
      "export --format megatron --model models/llama3-70b.yaml --cluster "
      "topologies/dgx-h100-64n.yaml --layout tp=8,pp=4,zero=1 ";
  CHECK(test::run_meshplan(base + "--precision fp8 --fp8-params --grad-reduce-dtype bf16", dir) ==
        0);
  const std::string out = test::read_file(dir / "stdout.txt");
  CHECK(out.find("--fp8-param-gather \\\n") != std::string::npos);
  CHECK(out.find("--grad-reduce-in-bf16 \\\n") != std::string::npos);
  CHECK(test::run_meshplan(base + "--grad-reduce-dtype bf8", dir) == 2);
  CHECK(test::read_file(dir / "stderr.txt") ==
        "--grad-reduce-dtype: error: field 'grad_reduce_dtype' = 'bf8': must be one of "
        "bf16|fp16|fp32 (did you mean 'bf16'?)\n");
  fs::remove_all(dir);
}
