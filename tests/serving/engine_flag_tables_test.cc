// The engines' launch lines against the engines' own argument tables at pinned commits
// (tests/data/engines/, each file's header names its source): every option a line passes is one
// the engine defines, with a value of the type it takes, and TensorRT-LLM's extra YAML holds only
// LLM API keys of the types llm_args.py gives them.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "serving/engine_flags.h"

using namespace meshplan::serving;
namespace fs = std::filesystem;

namespace {

const fs::path kTables = fs::path(MESHPLAN_TEST_DATA) / "engines";
constexpr const char* kVllm = "vllm-99d7eb5d6a51-engine-args.txt";
constexpr const char* kSglang = "sglang-b36e8e198b71-server-args.txt";
constexpr const char* kTrtllm = "trtllm-4c05a74891e4-serve-options.txt";

// name -> type of a table's lines "<name>\t<type>\t<source>"; with `section`, only the lines
// "<section>\t<name>\t<type>\t<source>" (TensorRT-LLM's file: "cli" and "yaml").
std::map<std::string, std::string> table(const char* file, const std::string& section = "") {
  std::ifstream in(kTables / file);
  REQUIRE(in.good());
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) fields.push_back(cell);
    if (!section.empty()) {
      if (fields.empty() || fields[0] != section) continue;
      fields.erase(fields.begin());
    }
    REQUIRE(fields.size() >= 2);
    out[fields[0]] = fields[1];
  }
  return out;
}

bool is_int(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
}
bool is_float(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos;
}
// "choice:a|b|c" holds `v`.
bool is_choice(const std::string& type, const std::string& v) {
  std::string choices(1, '|'), needle(1, '|');
  choices.append(type, 7).push_back('|');
  needle.append(v).push_back('|');
  return !v.empty() && v.find('|') == std::string::npos &&
         choices.find(needle) != std::string::npos;
}

// Checks `value` against a table type; "flag"/"bool" values are checked by the caller.
void check_value(const std::string& type, const std::string& value) {
  CAPTURE(type);
  CAPTURE(value);
  if (type == "int") CHECK(is_int(value));
  if (type == "float") CHECK(is_float(value));
  if (type.rfind("choice:", 0) == 0) CHECK(is_choice(type, value));
}

// A launch line split at its shell operators: the YAML an `echo '…' > extra.yaml && ` prefix
// writes ("" if none), the command's words (the shell comment after "#" dropped).
struct LaunchLine {
  std::string yaml, yaml_file;  // what `echo '…' > file && ` writes first, if the line does
  std::vector<std::string> words;
};

LaunchLine split_line(std::string text) {
  LaunchLine out;
  if (const size_t hash = text.find("   #"); hash != std::string::npos) text.resize(hash);
  if (const size_t chain = text.find(" && "); chain != std::string::npos) {
    const std::string prefix = text.substr(0, chain);
    const std::string head = "echo '", tail = "' > ";
    const size_t end = prefix.rfind(tail);
    REQUIRE(prefix.rfind(head, 0) == 0);
    REQUIRE(end != std::string::npos);
    REQUIRE(end > head.size());
    out.yaml = prefix.substr(head.size(), end - head.size());
    out.yaml_file = prefix.substr(end + tail.size());
    text = text.substr(chain + 4);
  }
  std::istringstream words(text);
  for (std::string w; words >> w;) out.words.push_back(w);
  return out;
}

// Checks the options after the `program` words (the model argument among them where the engine
// takes one positionally) against `known`, each value against its type. Returns the options seen.
std::map<std::string, std::string> check_options(const std::vector<std::string>& words,
                                                 size_t program,
                                                 const std::map<std::string, std::string>& known) {
  std::map<std::string, std::string> seen;
  REQUIRE(words.size() >= program);
  for (size_t i = program; i < words.size(); ++i) {
    const std::string& option = words[i];
    CAPTURE(option);
    REQUIRE(option.rfind("--", 0) == 0);
    REQUIRE(known.count(option) == 1);
    const std::string& type = known.at(option);
    std::string value;
    if (type != "flag") {
      REQUIRE(i + 1 < words.size());
      value = words[++i];
      REQUIRE(value.rfind("--", 0) != 0);
      check_value(type, value);
    }
    CHECK(seen.count(option) == 0);  // each option once
    seen[option] = value;
  }
  return seen;
}

// The YAML's keys, dotted through nested mappings, against TensorRT-LLM's LLM API keys.
void check_yaml(const YAML::Node& node, const std::string& prefix,
                const std::map<std::string, std::string>& known) {
  REQUIRE(node.IsMap());
  for (const auto& entry : node) {
    const std::string key = prefix + entry.first.as<std::string>();
    CAPTURE(key);
    REQUIRE(known.count(key) == 1);
    const std::string& type = known.at(key);
    if (type == "object") {
      check_yaml(entry.second, key + ".", known);
      continue;
    }
    REQUIRE(entry.second.IsScalar());
    const std::string value = entry.second.as<std::string>();
    if (type == "bool") CHECK((value == "true" || value == "false"));
    check_value(type, value);
  }
}

struct Case {
  ServingLayout layout;
  ServingOptions options;
};

// Layouts with and without pipeline stages, replicas, expert parallelism and attention-DP, under
// every weight and KV format and the options that add flags.
std::vector<Case> cases() {
  const ServingLayout layouts[] = {
      {1, 1, 1, 1, 64, false}, {4, 2, 1, 2, 256, false}, {8, 1, 8, 1, 512, true},
      {8, 1, 8, 2, 128, true}, {2, 1, 1, 8, 90, false},  {8, 1, 8, 1, 32, false},
  };
  std::vector<Case> out;
  for (const ServingLayout& l : layouts)
    for (WeightFormat w : {WeightFormat::bf16, WeightFormat::fp8, WeightFormat::int4})
      for (KvFormat kv : {KvFormat::bf16, KvFormat::fp8})
        for (int extra = 0; extra < 4; ++extra) {
          ServingOptions o;
          o.weights = w, o.kv = kv;
          if (extra == 1) o.mixed_chunk = true, o.max_prefill_tokens = 2524;
          if (extra == 2) o.chunked_context = true, o.max_utilization = true;
          if (extra == 3) o.max_step_tokens = 2560, o.memory_fraction = 0.95;
          out.push_back({l, o});
        }
  return out;
}

}  // namespace

TEST_CASE("engine tables: every vLLM option of a launch line is one vLLM 99d7eb5d6a51 defines") {
  const std::map<std::string, std::string> known = table(kVllm);
  std::map<std::string, int> used;
  int lines = 0;
  for (const Case& c : cases())
    for (bool moe : {false, true})
      for (PoolRole role : {PoolRole::whole, PoolRole::prefill, PoolRole::decode}) {
        const std::string line = vllm_command("m", moe, c.layout, c.options, 4096, role);
        CAPTURE(line);
        if (line.rfind("vllm: no command", 0) == 0) continue;  // the engine cannot run it
        const LaunchLine split = split_line(line);
        CHECK(split.yaml.empty());
        REQUIRE(split.words.size() >= 3);
        CHECK(split.words[0] == "vllm");
        CHECK(split.words[1] == "serve");
        const std::map<std::string, std::string> seen = check_options(split.words, 3, known);
        for (const auto& [option, value] : seen) ++used[option];
        ++lines;
        // A pool's KV connector: KVTransferConfig JSON (its header in the table) in shell quotes.
        REQUIRE(seen.count("--kv-transfer-config") == (role == PoolRole::whole ? 0U : 1U));
        if (role == PoolRole::whole) continue;
        const std::string& quoted = seen.at("--kv-transfer-config");
        REQUIRE(quoted.size() > 2);
        CHECK(quoted.front() == '\'');
        CHECK(quoted.back() == '\'');
        const nlohmann::json config = nlohmann::json::parse(quoted.substr(1, quoted.size() - 2));
        CHECK(config.at("kv_connector") == "NixlConnector");
        CHECK(is_choice("choice:kv_producer|kv_consumer|kv_both", config.at("kv_role")));
      }
  CHECK(lines > 600);
  // Each option the commands can carry was seen, so the check covered it.
  for (const char* option : {"--tensor-parallel-size", "--pipeline-parallel-size",
                             "--data-parallel-size", "--enable-expert-parallel", "--max-num-seqs",
                             "--max-num-batched-tokens", "--gpu-memory-utilization", "--block-size",
                             "--kv-cache-dtype", "--quantization", "--kv-transfer-config"})
    CHECK_MESSAGE(used[option] > 0, option);
}

TEST_CASE(
    "engine tables: every SGLang option of a launch line is one SGLang b36e8e198b71 "
    "documents") {
  const std::map<std::string, std::string> known = table(kSglang);
  std::map<std::string, int> used;
  for (const Case& c : cases())
    for (PoolRole role : {PoolRole::whole, PoolRole::prefill, PoolRole::decode}) {
      const std::string line = sglang_command("m", c.layout, c.options, 4096, role);
      CAPTURE(line);
      CHECK((line.find("--disaggregation-mode") == std::string::npos) == (role == PoolRole::whole));
      const LaunchLine split = split_line(line);
      CHECK(split.yaml.empty());
      REQUIRE(split.words.size() >= 3);
      CHECK(split.words[0] == "python");
      CHECK(split.words[1] == "-m");
      CHECK(split.words[2] == "sglang.launch_server");
      for (const auto& [option, value] : check_options(split.words, 3, known)) ++used[option];
    }
  for (const char* option :
       {"--disaggregation-mode", "--model-path", "--tp-size", "--pp-size", "--dp-size", "--ep-size",
        "--max-running-requests", "--chunked-prefill-size", "--mem-fraction-static", "--page-size",
        "--enable-dp-attention", "--enable-mixed-chunk", "--max-prefill-tokens", "--kv-cache-dtype",
        "--quantization"})
    CHECK_MESSAGE(used[option] > 0, option);
}

TEST_CASE(
    "engine tables: every trtllm-serve option is one TensorRT-LLM 4c05a74891e4 defines, and "
    "the extra YAML holds LLM API keys") {
  const std::map<std::string, std::string> cli = table(kTrtllm, "cli");
  const std::map<std::string, std::string> keys = table(kTrtllm, "yaml");
  std::map<std::string, int> used, yaml_keys;
  int with_yaml = 0;
  for (const Case& c : cases())
    for (PoolRole role : {PoolRole::whole, PoolRole::prefill, PoolRole::decode}) {
      const std::string line = trtllm_command("m", c.layout, c.options, 4096, role);
      CAPTURE(line);
      const LaunchLine split = split_line(line);
      REQUIRE(split.words.size() >= 2);
      CHECK(split.words[0] == "trtllm-serve");
      const std::map<std::string, std::string> seen = check_options(split.words, 2, cli);
      for (const auto& [option, value] : seen) ++used[option];
      // The YAML is written exactly when the line passes it, to the file it passes; a pool's
      // servers always carry a KV cache transceiver, the context servers without the overlap
      // scheduler.
      CHECK(seen.count("--extra_llm_api_options") == (split.yaml.empty() ? 0U : 1U));
      CHECK(split.yaml.empty() ==
            (role == PoolRole::whole && !c.layout.attention_dp && !c.options.max_utilization));
      if (split.yaml.empty()) continue;
      ++with_yaml;
      CHECK(seen.at("--extra_llm_api_options") == split.yaml_file);
      CHECK(split.yaml_file == (role == PoolRole::prefill  ? "ctx.yaml"
                                : role == PoolRole::decode ? "gen.yaml"
                                                           : "extra.yaml"));
      const YAML::Node yaml = YAML::Load(split.yaml);
      check_yaml(yaml, "", keys);
      for (const auto& entry : yaml) ++yaml_keys[entry.first.as<std::string>()];
      CHECK(static_cast<bool>(yaml["cache_transceiver_config"]) == (role != PoolRole::whole));
      CHECK(static_cast<bool>(yaml["disable_overlap_scheduler"]) == (role == PoolRole::prefill));
    }
  for (const char* key : {"enable_attention_dp", "scheduler_config", "cache_transceiver_config",
                          "disable_overlap_scheduler"})
    CHECK_MESSAGE(yaml_keys[key] > 0, key);
  CHECK(with_yaml > 0);
  for (const char* option : {"--tp_size", "--pp_size", "--ep_size", "--max_batch_size",
                             "--max_num_tokens", "--kv_cache_free_gpu_memory_fraction",
                             "--enable_chunked_prefill", "--extra_llm_api_options"})
    CHECK_MESSAGE(used[option] > 0, option);
}

TEST_CASE(
    "engine tables: the check refuses an option the engine does not define and a value "
    "outside its choices") {
  const std::map<std::string, std::string> known = {{"--kv-cache-dtype", "choice:auto|fp8"},
                                                    {"--flagged", "flag"}};
  CHECK(is_choice(known.at("--kv-cache-dtype"), "fp8"));
  CHECK_FALSE(is_choice(known.at("--kv-cache-dtype"), "fp8_e4m3"));
  CHECK_FALSE(is_choice(known.at("--kv-cache-dtype"), "auto|fp8"));
  CHECK(is_int("8192"));
  CHECK_FALSE(is_int("0.90"));
  CHECK(is_float("0.90"));
  const LaunchLine split = split_line(
      "echo '{enable_attention_dp: true}' > extra.yaml && trtllm-serve m --tp_size 8"
      "   # x2 servers");
  CHECK(split.yaml == "{enable_attention_dp: true}");
  CHECK(split.words == std::vector<std::string>{"trtllm-serve", "m", "--tp_size", "8"});
}

// tensorrt_llm/llmapi/disagg_utils.py (read at 0228a712): extract_disagg_cfg takes hostname, port,
// context_servers and generation_servers (among others); extract_ctx_gen_cfgs takes num_instances
// and urls, each "host:port" (split at ':', the port an int), and refuses a url count other than
// num_instances. trtllm-serve's `disaggregated` command reads the file with -c (serve.py at
// 4c05a74891e4).
TEST_CASE(
    "engine tables: TensorRT-LLM's disaggregated server names one url per server of each pool") {
  const std::string line = trtllm_disaggregated_router(3, 2);
  CAPTURE(line);
  const LaunchLine split = split_line(line);
  CHECK(split.yaml_file == "disagg.yaml");
  CHECK(split.words ==
        std::vector<std::string>{"trtllm-serve", "disaggregated", "-c", "disagg.yaml"});
  const YAML::Node config = YAML::Load(split.yaml);
  REQUIRE(config.IsMap());
  for (const auto& entry : config)
    CHECK(std::set<std::string>{"hostname", "port", "context_servers", "generation_servers"}.count(
              entry.first.as<std::string>()) == 1);
  CHECK(config["port"].as<int>() == 8000);
  for (const auto& [pool, count] : {std::pair{"context_servers", 3}, {"generation_servers", 2}}) {
    CAPTURE(pool);
    const YAML::Node servers = config[pool];
    REQUIRE(servers.IsMap());
    CHECK(servers["num_instances"].as<int>() == count);
    REQUIRE(servers["urls"].IsSequence());
    REQUIRE(servers["urls"].size() == static_cast<size_t>(count));
    for (const YAML::Node& url : servers["urls"]) {
      const std::string text = url.as<std::string>();
      const size_t colon = text.find(':');
      REQUIRE(colon != std::string::npos);
      CHECK(text.find(':', colon + 1) == std::string::npos);
      CHECK(is_int(text.substr(colon + 1)));
    }
  }
}
