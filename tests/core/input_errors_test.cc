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
        "llama|mistral|qwen2|mixtral|qwen3|qwen3_moe|deepseek_v3\n"
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
