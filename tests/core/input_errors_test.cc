// Bad input gets one clear message naming file, line, column, field, value and rule.
#include <doctest/doctest.h>

#include <string>

#include "core/cluster_spec.h"
#include "core/model_spec.h"

using namespace meshplan;

namespace {

const std::string kGoodModel =
    "name: m\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1000\nmlp: swiglu\nffn_hidden: 512\n";

std::string model_errors(const std::string& text) {
  Result<ModelSpec> r = parse_model_yaml(text, "m.yaml");
  return r.ok() ? "ok" : format_diagnostics(r.errors());
}

std::string hf_errors(const std::string& text) {
  Result<ModelSpec> r = parse_hf_config(text, "config.json");
  return r.ok() ? "ok" : format_diagnostics(r.errors());
}

const std::string kGoodCluster =
    "name: c\ngpu: H100-SXM-80GB\nnodes: 2\ngpus_per_node: 8\nnetwork:\n"
    "  - {name: nvlink, span: 8, bandwidth_GBps: 450, latency_us: 3}\n"
    "  - {name: ib, span: 16, bandwidth_GBps: 50, latency_us: 10}\n";

std::string cluster_errors(const std::string& text) {
  Result<ClusterSpec> r = parse_cluster_yaml(text, "c.yaml");
  return r.ok() ? "ok" : format_diagnostics(r.errors());
}

}  // namespace

TEST_CASE("the well-formed fixtures parse") {
  CHECK(model_errors(kGoodModel) == "ok");
  CHECK(cluster_errors(kGoodCluster) == "ok");
}

TEST_CASE("missing model file names the file") {
  Result<ModelSpec> r = load_model("no/such/model.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) ==
        "no/such/model.yaml: error: cannot open file (does it exist?)\n");
}

TEST_CASE("malformed YAML reports the parser's position") {
  CHECK(model_errors("name: m\nlayers: [4\nhidden: 3\n") ==
        "m.yaml:3:7: error: invalid YAML: end of sequence flow not found\n"
        "  hidden: 3\n"
        "        ^\n");
}

TEST_CASE("a YAML document that is not a mapping is refused") {
  CHECK(model_errors("- 1\n- 2\n") ==
        "m.yaml:1:1: error: must be a YAML mapping of fields\n  - 1\n  ^\n");
}

TEST_CASE("unknown model field suggests the closest known one") {
  CHECK(model_errors(kGoodModel + "hiden: 4096\n") ==
        "m.yaml:8:1: error: field 'hiden': unknown field (did you mean 'hidden'?)\n"
        "  hiden: 4096\n"
        "  ^\n");
}

TEST_CASE("missing required field names the field") {
  CHECK(model_errors("name: m\nlayers: 4\nheads: 8\nvocab: 1000\n") ==
        "m.yaml:1:1: error: field 'hidden': is required but missing\n  name: m\n  ^\n");
}

TEST_CASE("negative size names field, value and rule") {
  CHECK(model_errors("name: m\nlayers: 4\nhidden: -256\nheads: 8\nvocab: 1000\n") ==
        "m.yaml:3:9: error: field 'hidden' = '-256': must be an integer between 1 and 10000000\n"
        "  hidden: -256\n"
        "          ^\n");
}

TEST_CASE("wrong type: text where an integer belongs") {
  CHECK(model_errors("name: m\nlayers: four\nhidden: 256\nheads: 8\nvocab: 1000\n") ==
        "m.yaml:2:9: error: field 'layers' = 'four': must be an integer between 1 and 100000\n"
        "  layers: four\n"
        "          ^\n");
}

TEST_CASE("wrong type: a mapping where a number belongs") {
  CHECK(model_errors("name: m\nlayers: {a: 1}\nhidden: 256\nheads: 8\nvocab: 1000\n") ==
        "m.yaml:2:9: error: field 'layers': must be a single value, not a list or mapping\n"
        "  layers: {a: 1}\n"
        "          ^\n");
}

TEST_CASE("unknown enum value lists the choices") {
  CHECK(model_errors(kGoodModel + "norm: batchnorm\n") ==
        "m.yaml:8:7: error: field 'norm' = 'batchnorm': must be one of layernorm|rmsnorm\n"
        "  norm: batchnorm\n"
        "        ^\n");
}

TEST_CASE("swiglu without ffn_hidden is refused") {
  CHECK(model_errors("name: m\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1000\nmlp: swiglu\n") ==
        "m.yaml:1:1: error: field 'ffn_hidden': is required when mlp is swiglu\n  name: m\n  ^\n");
}

TEST_CASE("kv_heads must divide heads") {
  CHECK(model_errors(kGoodModel + "kv_heads: 3\n") ==
        "m.yaml:8:11: error: field 'kv_heads' = '3': must divide heads (8) (grouped-query "
        "attention)\n"
        "  kv_heads: 3\n"
        "            ^\n");
}

TEST_CASE("moe.top_k above moe.experts is refused at its position") {
  CHECK(model_errors(kGoodModel + "moe:\n  experts: 4\n  top_k: 5\n  expert_ffn_hidden: 128\n") ==
        "m.yaml:10:10: error: field 'moe.top_k' = '5': must not exceed moe.experts (4)\n"
        "    top_k: 5\n"
        "           ^\n");
}

TEST_CASE("moe.layer_step that leaves no MoE layer is refused at its position") {
  const std::string moe = "moe:\n  experts: 4\n  top_k: 1\n  expert_ffn_hidden: 128\n";
  CHECK(model_errors(kGoodModel + moe + "  layer_step: 4\n") == "ok");
  CHECK(model_errors(kGoodModel + moe + "  layer_step: 5\n") ==
        "m.yaml:12:15: error: field 'moe.layer_step' = '5': leaves no MoE layer: "
        "first_dense_layers (0) + layer_step must not exceed layers (4)\n"
        "    layer_step: 5\n"
        "                ^\n");
}

TEST_CASE("unknown nested field names its dotted path") {
  CHECK(model_errors(kGoodModel + "training:\n  seqlen: 4096\n") ==
        "m.yaml:9:3: error: field 'training.seqlen': unknown field (did you mean 'seq_len'?)\n"
        "    seqlen: 4096\n"
        "    ^\n");
}

TEST_CASE("unknown GPU name lists the built-in types") {
  std::string text = kGoodCluster;
  text.replace(text.find("H100-SXM-80GB"), 13, "H100-SXM");
  CHECK(cluster_errors(text) ==
        "c.yaml:2:6: error: field 'gpu' = 'H100-SXM': unknown GPU; built-in types are "
        "A100-SXM-80GB, H100-SXM-80GB, H200-SXM-141GB, B200 (did you mean 'H100-SXM-80GB'?), or "
        "give {name, peak_tflops: {bf16, fp8}, hbm_GiB, hbm_GBps}\n"
        "  gpu: H100-SXM\n"
        "       ^\n");
}

TEST_CASE("network levels must grow outward and span every GPU") {
  CHECK(cluster_errors("name: c\ngpu: B200\nnodes: 4\ngpus_per_node: 8\nnetwork:\n"
                       "  - {name: nvlink, span: 8, bandwidth_GBps: 900, latency_us: 3}\n"
                       "  - {name: ib, span: 4, bandwidth_GBps: 50, latency_us: 10}\n") ==
        "c.yaml:7:22: error: field 'network[1].span' = '4': must exceed the span of the level "
        "inside it (nvlink: 8); levels go innermost first\n"
        "    - {name: ib, span: 4, bandwidth_GBps: 50, latency_us: 10}\n"
        "                       ^\n"
        "c.yaml:7:22: error: field 'network[1].span' = '4': the outermost level must span every "
        "GPU (nodes × gpus_per_node = 32)\n"
        "    - {name: ib, span: 4, bandwidth_GBps: 50, latency_us: 10}\n"
        "                       ^\n");
}

TEST_CASE("oversubscription below 1 is refused") {
  std::string text = kGoodCluster;
  text.replace(text.find("latency_us: 10}"), 15, "latency_us: 10, oversubscription: 0.5}");
  CHECK(cluster_errors(text) ==
        "c.yaml:7:80: error: field 'network[1].oversubscription' = '0.5': must be a number "
        "between 1 and 1000\n"
        "    - {name: ib, span: 16, bandwidth_GBps: 50, latency_us: 10, oversubscription: 0.5}\n"
        "                                                                                 ^\n");
}

TEST_CASE("config.json: malformed JSON gives line and column") {
  CHECK(hf_errors("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,,\n}") ==
        "config.json:3:23: error: invalid JSON: syntax error while parsing object key - unexpected "
        "','; expected string literal\n"
        "    \"hidden_size\": 4096,,\n"
        "                        ^\n");
}

TEST_CASE("config.json: unsupported model_type lists the supported ones") {
  CHECK(hf_errors("{\"model_type\": \"gpt2\"}") ==
        "config.json:1:2: error: field 'model_type' = '\"gpt2\"': must be one of "
        "llama|mistral|phi3|qwen2|qwen3|mixtral|qwen3_moe|deepseek_v2|deepseek_v3|deepseek_v32|"
        "kimi_k2|glm4_moe|glm_moe_dsa|minimax_m2|gemma2|gemma3_text|gpt_neox|llama4_text|gpt_oss\n"
        "  {\"model_type\": \"gpt2\"}\n"
        "   ^\n");
}

TEST_CASE("config.json: wrong type names the key") {
  CHECK(hf_errors("{\"model_type\": \"llama\", \"num_hidden_layers\": \"32\"}") ==
        "config.json:1:25: error: field 'num_hidden_layers' = '\"32\"': must be an integer\n"
        "  {\"model_type\": \"llama\", \"num_hidden_layers\": \"32\"}\n"
        "                          ^\n");
}

TEST_CASE("config.json: missing key is named") {
  CHECK(hf_errors("{\"model_type\": \"llama\", \"num_hidden_layers\": 32}") ==
        "config.json: error: field 'hidden_size': is required but missing\n");
}

TEST_CASE("a key given twice in a YAML mapping names both places") {
  CHECK(model_errors(kGoodModel + "layers: 64\n") ==
        "m.yaml:8:1: error: field 'layers': is given twice; the first is at m.yaml:2:1\n"
        "  layers: 64\n"
        "  ^\n");
}

TEST_CASE("a key given twice in a nested YAML mapping names its dotted path") {
  CHECK(model_errors(kGoodModel + "training: {seq_len: 4096, seq_len: 8192}\n") ==
        "m.yaml:8:27: error: field 'training.seq_len': is given twice; the first is at "
        "m.yaml:8:12\n"
        "  training: {seq_len: 4096, seq_len: 8192}\n"
        "                            ^\n");
}

TEST_CASE("a second YAML document is refused, naming where each starts") {
  CHECK(model_errors(kGoodModel + "---\nname: other\n") ==
        "m.yaml:8:1: error: a second YAML document starts here (the first is at m.yaml:1:1); a "
        "file holds one document\n"
        "  ---\n"
        "  ^\n");
}

TEST_CASE("an empty second YAML document is refused at its '---' line") {
  CHECK(model_errors(kGoodModel + "---\n") ==
        "m.yaml:8:1: error: a second YAML document starts here (the first is at m.yaml:1:1); a "
        "file holds one document\n"
        "  ---\n"
        "  ^\n");
}

TEST_CASE("one document opened by '---' after comments and a directive is one document") {
  CHECK(model_errors("# a model\n%YAML 1.2\n---\n" + kGoodModel) == "ok");
}

TEST_CASE("a second YAML document after a '...' end marker is refused") {
  CHECK(model_errors(kGoodModel + "...\nname: other\n")
            .rfind("m.yaml:9:1: error: a second YAML document starts here", 0) == 0);
}

TEST_CASE("flow mappings on successive lines are two YAML documents, as yaml-cpp reads them") {
  CHECK(model_errors("{name: m, layers: 4}\n{hidden: 256}\n")
            .rfind("m.yaml:2:1: error: a second YAML document starts here", 0) == 0);
}

TEST_CASE("a root mapping indented, then a key at column 0, is a second YAML document") {
  CHECK(model_errors("  name: m\n  layers: 4\nhidden: 256\n")
            .rfind("m.yaml:3:1: error: a second YAML document starts here", 0) == 0);
}

TEST_CASE(
    "a carriage return alone before a comment opens a document of its own, as yaml-cpp reads it") {
  // Found by fuzz/model_yaml_fuzz against the shortcut that skips the second parse.
  CHECK(model_errors("\r# note\n# more\n" + kGoodModel)
            .rfind("m.yaml:3:1: error: a second YAML document starts here", 0) == 0);
}

TEST_CASE("a list or mapping used as a YAML key is refused at its position") {
  CHECK(model_errors(kGoodModel + "[a]: b\n") ==
        "m.yaml:8:1: error: keys must be plain names, not lists or mappings\n"
        "  [a]: b\n"
        "  ^\n");
}

TEST_CASE("a model at every field's maximum is refused by its parameter count") {
  CHECK(model_errors("name: m\nlayers: 100000\nhidden: 10000000\nheads: 10000000\n"
                     "vocab: 100000000\nmlp: swiglu\nffn_hidden: 10000000\n"
                     "moe: {experts: 1000000, top_k: 1000000, expert_ffn_hidden: 10000000}\n") ==
        "m.yaml:2:9: error: field 'layers' = '100000': the model has about 3e+25 parameters; at "
        "most 1e+15 are supported (check the widths and counts)\n"
        "  layers: 100000\n"
        "          ^\n");
}

TEST_CASE("config.json: a number beyond a double is an error at its position") {
  CHECK(hf_errors("{\"model_type\": \"llama\",\n \"hidden_size\": 1e400}") ==
        "config.json:2:17: error: number 1e400 is out of range (beyond ±1.8e308)\n"
        "   \"hidden_size\": 1e400}\n"
        "                  ^\n");
}

TEST_CASE("config.json: nesting beyond 64 levels is refused without recursing") {
  const std::string deep = std::string(400'000, '[') + std::string(400'000, ']');
  CHECK(hf_errors("{\"model_type\": \"llama\", \"x\": " + deep + "}")
            .rfind("config.json:1:93: error: nesting deeper than 64 levels\n", 0) == 0);
}

TEST_CASE("config.json: a key given twice names both places") {
  CHECK(hf_errors("{\"model_type\": \"llama\",\n \"hidden_size\": 4096,\n \"hidden_size\": 8}") ==
        "config.json:3:2: error: field 'hidden_size': is given twice; the first is at "
        "config.json:2:2\n"
        "   \"hidden_size\": 8}\n"
        "   ^\n");
}

TEST_CASE("config.json: integers are range-checked like the YAML fields") {
  CHECK(hf_errors("{\"model_type\": \"llama\", \"num_hidden_layers\": 1000000000000000}") ==
        "config.json:1:25: error: field 'num_hidden_layers' = '1000000000000000': must be an "
        "integer between 1 and 100000\n"
        "  {\"model_type\": \"llama\", \"num_hidden_layers\": 1000000000000000}\n"
        "                          ^\n");
  CHECK(hf_errors("{\"model_type\": \"mixtral\", \"num_hidden_layers\": 2, \"hidden_size\": 64,\n"
                  " \"num_attention_heads\": 8, \"vocab_size\": 100, \"intermediate_size\": 128,\n"
                  " \"num_local_experts\": 18446744073709551615}") ==
        "config.json:3:2: error: field 'num_local_experts' = '18446744073709551615': must be an "
        "integer between 1 and 1000000\n"
        "   \"num_local_experts\": 18446744073709551615}\n"
        "   ^\n");
}

TEST_CASE("config.json: a list where a number belongs shows no nested dump") {
  CHECK(hf_errors("{\"model_type\": \"llama\", \"num_hidden_layers\": [[1]]}") ==
        "config.json:1:25: error: field 'num_hidden_layers' = '[…]': must be an integer\n"
        "  {\"model_type\": \"llama\", \"num_hidden_layers\": [[1]]}\n"
        "                          ^\n");
}

TEST_CASE("reading a path through a regular file gives the system's reason") {
  const std::string self = std::string(MESHPLAN_SOURCE_DIR) + "/README.md";
  Result<ModelSpec> r = load_model(self + "/model.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) ==
        self + "/model.yaml: error: cannot open file: Not a directory\n");
}

TEST_CASE("reading a directory as a model names it as a directory") {
  const std::string dir = std::string(MESHPLAN_SOURCE_DIR) + "/models";
  Result<ModelSpec> r = load_model(dir);
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) == dir + ": error: is a directory, not a file\n");
}

TEST_CASE("config.json: a NUL byte is refused, not taken as the end of the text") {
  CHECK(hf_errors(std::string("0\0{\"model_type\": \"llama\"}", 26))
            .rfind("config.json:1:2: error: contains a NUL byte: not a JSON text file\n", 0) == 0);
}

TEST_CASE("input on which yaml-cpp's LoadAll loops forever (found by fuzz/) is an error") {
  const std::string file = std::string(MESHPLAN_TEST_DATA) + "/hostile/yaml_cpp_loadall_loops.yaml";
  Result<ModelSpec> r = load_model(file);
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()).rfind(file + ":2:1: error: a second YAML document", 0) == 0);
}
