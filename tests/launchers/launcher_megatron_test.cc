// Megatron-LM and NeMo exports against their launchers' own rules: every Megatron-LM flag and
// NeMo key checked against tables taken from pinned sources (tests/data/launchers/), Megatron's
// uneven-pipeline arithmetic, and the flags that make Megatron run what meshplan priced.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "launchers/launcher_export.h"
#include "tests/launchers/launcher_test_util.h"
#include "tests/test_files.h"

using namespace meshplan;
using namespace meshplan::launcher_test;
namespace fs = std::filesystem;

namespace {

// Megatron-LM's uneven-pipeline rule (d98e8a64ddf3, transformer_config.py "Uneven PP"): every
// given end stage > 0 layers, the rest split evenly over the middle stages; with vpp, the end
// stages' and each middle stage's layers are multiples of vpp.
bool megatron_accepts_uneven(int64_t layers, int64_t pp, int64_t first, int64_t last,
                             int64_t vpp = 1) {
  const int64_t middle_layers = layers - first - last, middle_stages = pp - 2;
  if (first <= 0 || last <= 0 || first % vpp != 0 || last % vpp != 0) return false;
  if ((middle_layers != 0) != (middle_stages != 0)) return false;
  return middle_stages == 0 ||
         (middle_layers % middle_stages == 0 && middle_layers / middle_stages % vpp == 0);
}

// The value of "--flag value" in an argument list.
int64_t flag_value(const std::string& text, const std::string& flag) {
  const size_t at = text.find(flag + " ");
  REQUIRE(at != std::string::npos);
  return std::stoll(text.substr(at + flag.size() + 1));
}

// The value of "--flag value" as text.
std::string flag_text(const std::string& text, const std::string& flag) {
  const size_t at = text.find(flag + " ");
  REQUIRE(at != std::string::npos);
  const size_t from = at + flag.size() + 1;
  return text.substr(from, text.find_first_of(" \n", from) - from);
}

// Megatron-LM's reading of --pipeline-model-parallel-layout (d98e8a64ddf3,
// pipeline_parallel_layer_layout.py parse_str_to_list, validate_layer_layout): commas dropped,
// "(...)*n" then "x*n" unrolled, split at "|"; the first chunk starts with the embedding E, the
// last ends with the loss L, each once. Returns each chunk's transformer layers ("t").
std::vector<int64_t> megatron_layout_chunks(std::string layout) {
  REQUIRE(layout.size() >= 2);
  REQUIRE(layout.front() == '"');
  REQUIRE(layout.back() == '"');
  layout = layout.substr(1, layout.size() - 2);
  auto unroll = [](std::string text, const std::regex& pattern) {
    std::smatch m;
    while (std::regex_search(text, m, pattern)) {
      std::string repeated;
      for (int i = 0; i < std::stoi(m[2].str()); ++i) repeated += m[1].str();
      text = m.prefix().str() + repeated + m.suffix().str();
    }
    return text;
  };
  layout = unroll(layout, std::regex(R"(\(([^)]+)\)\*(\d+))"));
  layout = unroll(layout, std::regex(R"((.)\*(\d+))"));
  CHECK(layout.front() == 'E');
  CHECK(layout.back() == 'L');
  CHECK(std::count(layout.begin(), layout.end(), 'E') == 1);
  CHECK(std::count(layout.begin(), layout.end(), 'L') == 1);
  std::vector<int64_t> chunks(1, 0);
  for (char c : layout) {
    if (c == '|')
      chunks.push_back(0);
    else if (c == 't')
      ++chunks.back();
    else
      CHECK((c == 'E' || c == 'L'));
  }
  return chunks;
}

TEST_CASE("Megatron uneven splits run as priced: first/last flags, else the flexible layout") {
  // DeepSeek-V3, 61 layers over 16 stages: meshplan prices 3,4x13,3,3, which Megatron's
  // first/last flags cannot give (its middle stages are equal), so the layout names each stage.
  const ModelSpec ds = model("deepseek-v3");
  const Layout v3_layout = layout("tp=1,pp=16,ep=32,recompute=full,uneven=true", ds, 512);
  const std::string v3 = exported(Launcher::megatron, ds, v3_layout);
  CHECK(flag_text(v3, "--pipeline-model-parallel-layout") == "\"Et*3|(t*4|)*13t*3|t*3L\"");
  CHECK(megatron_layout_chunks(flag_text(v3, "--pipeline-model-parallel-layout")) ==
        chunk_layers(61, 16, 1));
  CHECK(v3.find("--decoder-first-pipeline-num-layers") == std::string::npos);
  CHECK_FALSE(megatron_accepts_uneven(61, 16, 3, 3));

  // Llama 3 405B, 126 layers over 16 stages: the priced 7,8x14,7 is what the flags give.
  const ModelSpec big = model("llama3-405b");
  const std::string l405 = exported(Launcher::megatron, big,
                                    layout("tp=8,pp=16,recompute=full,uneven=true", big, 16384));
  CHECK(flag_value(l405, "--decoder-first-pipeline-num-layers") == 7);
  CHECK(flag_value(l405, "--decoder-last-pipeline-num-layers") == 7);
  CHECK(megatron_accepts_uneven(126, 16, 7, 7));
  CHECK(l405.find("--pipeline-model-parallel-layout") == std::string::npos);
}

// Megatron-LM d98e8a64ddf3's flags ("--flag" -> "int" | "float" | "flag" | "choice:a|b" | "str"),
// from the committed table (tests/data/launchers/megatron-lm-d98e8a64ddf3-args.txt).
std::map<std::string, std::string> megatron_flags() {
  std::map<std::string, std::string> flags;
  std::istringstream in(test::read_file(fs::path(MESHPLAN_TEST_DATA) /
                                        "launchers/megatron-lm-d98e8a64ddf3-args.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t'), tab2 = line.find('\t', tab + 1);
    flags[line.substr(0, tab)] = line.substr(tab + 1, tab2 - tab - 1);
  }
  return flags;
}

// Checks every "--flag [value]" line of a Megatron-LM export against the table.
void check_megatron_flags(const std::string& text,
                          const std::map<std::string, std::string>& known) {
  for (const auto& [flag, value] : flag_args(text)) {
    CAPTURE(flag);
    REQUIRE(known.count(flag) == 1);
    const std::string& type = known.at(flag);
    if (type == "flag") CHECK(value.empty());
    if (type == "int")
      CHECK((!value.empty() && value.find_first_not_of("0123456789") == std::string::npos));
    if (type == "float") CHECK(value.find_first_not_of("0123456789.") == std::string::npos);
    if (type.rfind("choice:", 0) == 0) {
      std::string choices = type.substr(6), needle = "|";  // "choice:a|b" -> ":a|b|" holds "|a|"
      choices.append("|");
      choices[0] = '|';
      needle.append(value).append("|");
      CHECK(choices.find(needle) != std::string::npos);
    }
  }
}

// Megatron-LM's rank and batch arithmetic at d98e8a64ddf3 for a job of `gpus` ranks, as it
// raises: the world divides into tp·pp·cp model replicas (megatron/training/arguments.py,
// data_parallel_size = world_size // total_model_size); the global batch divides into micro-batches
// of mbs on each of dp replicas (megatron/core/num_microbatches_calculator.py,
// ConstantNumMicroBatchesCalculator: "global batch size (…) is not divisible by micro batch size
// (…) times data parallel size (…)"); the world divides into the expert grid etp·ep·pp
// (megatron/core/parallel_state.py initialize_model_parallel; etp defaults to tp). Returns the
// micro-batch count.
int64_t megatron_micro_batches(const std::map<std::string, std::string>& args, int64_t gpus) {
  const auto value = [&](const char* flag, int64_t fallback) {
    return args.count(flag) ? std::stoll(args.at(flag)) : fallback;
  };
  const int64_t tp = value("--tensor-model-parallel-size", 1),
                pp = value("--pipeline-model-parallel-size", 1),
                cp = value("--context-parallel-size", 1),
                ep = value("--expert-model-parallel-size", 1),
                etp = value("--expert-tensor-parallel-size", tp),
                mbs = value("--micro-batch-size", 1), gbs = value("--global-batch-size", 0);
  CHECK(gpus % (tp * pp * cp) == 0);
  CHECK(gpus % (etp * ep * pp) == 0);
  const int64_t dp = gpus / (tp * pp * cp);
  CHECK(gbs % (mbs * dp) == 0);
  return gbs / (mbs * dp);
}

TEST_CASE("export: every Megatron-LM flag is one Megatron-LM d98e8a64ddf3 defines, with its type") {
  const std::map<std::string, std::string> known = megatron_flags();
  REQUIRE(known.size() == 82);
  const struct {
    const char* model;
    const char* layout;
    int64_t gpus;
  } cases[] = {
      {"llama3-70b", "tp=8,pp=4,vpp=5,zero=1,mbs=1,recompute=selective", 512},
      {"llama3-8b", "tp=2,zero=2,mbs=2,recompute=full", 64},
      {"llama3-8b", "tp=2,zero=3,pp=2", 64},
      {"llama3-8b", "tp=2,zero=1,order=tp-cp-pp-dp,pp=2", 64},
      {"llama3-8b", "tp=2,zero=1,shard=8", 64},
      {"llama3-8b", "tp=2,zero=1,offload=cpu,act_offload=4", 64},
      {"llama3-405b", "tp=8,pp=16,vpp=2,recompute=full,uneven=true", 16384},
      {"mixtral-8x7b", "tp=2,pp=2,ep=4,zero=1,mbs=1,recompute=full", 64},
      {"deepseek-v3", "tp=1,pp=16,ep=32,recompute=full,uneven=true", 512},
      {"deepseek-v3", "tp=1,pp=16,ep=64,uneven=true,dispatch=deepep", 2048},
      {"qwen3-235b-a22b", "tp=4,pp=2,ep=8,zero=1", 512},
      {"llama4-maverick", "tp=2,pp=4,ep=64,zero=1", 512},
      {"gpt3-175b", "tp=8,pp=8,zero=1", 1024},
      {"llama3-70b", "tp=4,cp=4,pp=2,cp_kind=allgather", 512},
      {"llama3-70b", "tp=4,cp=2,pp=2,cp_kind=a2a", 512},
      {"llama3-70b", "tp=2,cp=8,pp=2,cp_kind=hybrid,cp_a2a=4", 512},
      {"mixtral-8x7b", "tp=2,pp=2,vpp=2,ep=4,zero=1,ep_overlap=true", 64},
      {"mixtral-8x7b", "tp=8,ep=8,etp=1,zero=1", 64},
      {"deepseek-v3.2", "tp=1,pp=16,ep=32,cp=2,cp_kind=allgather,recompute=full,uneven=true", 1024},
      {"deepseek-v3",
       "tp=1,pp=16,ep=64,uneven=true,recompute=selective,"
       "recompute_modules=layernorm+mla_up_proj+moe_act",
       2048},
  };
  for (const auto& c : cases) {
    CAPTURE(c.model);
    CAPTURE(c.layout);
    const ModelSpec m = model(c.model);
    const Layout l = layout(c.layout, m, c.gpus);
    const std::string out = exported(Launcher::megatron, m, l);
    check_megatron_flags(out, known);
    // Megatron runs the micro-batches meshplan priced.
    CHECK(megatron_micro_batches(flag_args(out), c.gpus) ==
          m.training.global_batch / (l.mbs * l.dp));
  }
}

TEST_CASE("Megatron-LM and NeMo: the MoE layer pattern, dense layers first or interleaved") {
  const ModelSpec ds = model("deepseek-v3"), maverick = model("llama4-maverick"),
                  mixtral = model("mixtral-8x7b");
  const std::string v3 =
      exported(Launcher::megatron, ds, layout("tp=1,pp=16,ep=32,uneven=true", ds, 512));
  CHECK(flag_text(v3, "--moe-layer-freq") == "\"([0]*3+[1]*58)\"");
  const std::string l4 =
      exported(Launcher::megatron, maverick, layout("tp=2,pp=4,ep=64,zero=1", maverick, 512));
  CHECK(flag_text(l4, "--moe-layer-freq") == "\"([0,1]*24)\"");
  CHECK(flag_value(l4, "--moe-shared-expert-intermediate-size") == 8192);
  // Every layer MoE: Megatron's default (1), no flag.
  const std::string mx =
      exported(Launcher::megatron, mixtral, layout("tp=2,pp=2,ep=4,zero=1", mixtral, 64));
  CHECK(mx.find("--moe-layer-freq") == std::string::npos);
  // NeMo passes moe_layer_freq to TransformerConfig as a list, one entry per layer.
  const std::string nemo =
      exported(Launcher::nemo, maverick, layout("tp=2,pp=4,ep=64,zero=1", maverick, 512));
  std::string pattern;
  for (int i = 0; i < 24; ++i) pattern += i == 0 ? "0, 1" : ", 0, 1";
  CHECK(nemo.find("  moe_layer_freq: [" + pattern + "]  # not in megatron_gpt_config.yaml") !=
        std::string::npos);
  CHECK(nemo.find("  moe_shared_expert_intermediate_size: 8192") != std::string::npos);
}

TEST_CASE("Megatron-LM: MoE dispatch and grouped GEMM as priced, the RoPE base") {
  const ModelSpec mixtral = model("mixtral-8x7b");
  const std::string moe =
      exported(Launcher::megatron, mixtral, layout("tp=2,pp=2,ep=4,zero=1", mixtral, 64));
  CHECK(moe.find("--moe-token-dispatcher-type alltoall \\\n--moe-grouped-gemm") !=
        std::string::npos);
  CHECK(flag_value(moe, "--rotary-base") == 1000000);
  const ModelSpec llama = model("llama3-8b");
  const std::string dense = exported(Launcher::megatron, llama, layout("tp=2", llama, 64));
  CHECK(flag_value(dense, "--rotary-base") == 500000);
  CHECK(dense.find("--moe-") == std::string::npos);
  // GPT-3's learned positions take no RoPE base.
  const ModelSpec gpt3 = model("gpt3-175b");
  CHECK(exported(Launcher::megatron, gpt3, layout("tp=8,pp=8", gpt3, 1024)).find("--rotary-base") ==
        std::string::npos);
}

TEST_CASE(
    "Megatron-LM: DeepSeek-V3.2's sparse attention as Megatron-Core's DSA, CP by all-gather") {
  const ModelSpec ds = model("deepseek-v3.2");
  const std::string out =
      exported(Launcher::megatron, ds, layout("tp=1,pp=16,ep=32,uneven=true", ds, 512));
  CHECK(out.find("--experimental-attention-variant dsa \\\n"
                 "--dsa-indexer-n-heads 64 \\\n"
                 "--dsa-indexer-head-dim 128 \\\n"
                 "--dsa-indexer-topk 2048 \\\n"
                 "--no-rope-fusion") != std::string::npos);
  CHECK(model("deepseek-v3").sparse_attention.has_value() == false);
  CHECK(exported(Launcher::megatron, model("deepseek-v3"),
                 layout("tp=1,pp=16,ep=32,uneven=true", model("deepseek-v3"), 512))
            .find("--dsa-") == std::string::npos);
  // DSAttention asserts cp_comm_type allgather under context parallelism.
  const Layout ring = layout("tp=1,pp=16,ep=32,cp=2,uneven=true", ds, 1024);
  CHECK(refusal(Launcher::megatron, ds, ring)
            .find("field 'cp_kind' = 'ring': Megatron-LM cannot express this: Megatron-Core's "
                  "DSAttention takes context parallelism by "
                  "all-gather only") != std::string::npos);
  CHECK(refusal(Launcher::nemo2, ds, ring).find("field 'cp_kind'") != std::string::npos);
}

TEST_CASE("DeepSeek-V3's router as its config gives it: sigmoid scores, x2.5, expert bias") {
  const ModelSpec ds = model("deepseek-v3");
  const Layout l = layout("tp=1,pp=16,ep=32,recompute=full,uneven=true", ds, 512);
  const std::string megatron = exported(Launcher::megatron, ds, l);
  CHECK(megatron.find("--moe-router-score-function sigmoid \\\n"
                      "--moe-router-topk-scaling-factor 2.5 \\\n"
                      "--moe-router-enable-expert-bias \\\n") != std::string::npos);
  const std::string nemo2 = exported(Launcher::nemo2, ds, l);
  CHECK(nemo2.find("recipe.model.config.moe_router_score_function = \"sigmoid\"\n"
                   "recipe.model.config.moe_router_topk_scaling_factor = 2.5\n"
                   "recipe.model.config.moe_router_enable_expert_bias = True\n") !=
        std::string::npos);
  // NeMo 1's GPT config splits layers evenly: 61 layers on one stage.
  CHECK(exported(Launcher::nemo, ds, layout("tp=1,ep=32", ds, 512))
            .find("  moe_router_score_function: sigmoid  #") != std::string::npos);
  // Its Hugging Face config adds the MTP module, priced on the last stage and exported.
  const ModelSpec hf =
      load_model(std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/hf/deepseek-v3.json").value();
  const std::string with_mtp = exported(Launcher::megatron, hf, l);
  CHECK(with_mtp.find("--mtp-num-layers 1 \\\n") != std::string::npos);
  CHECK(with_mtp.find("multi-token-prediction module(s) are not priced") == std::string::npos);
  CHECK(exported(Launcher::megatron, ds, l).find("--mtp-num-layers") == std::string::npos);
  // Mixtral routes by softmax, unscaled, without a bias: none of the three.
  const ModelSpec mixtral = model("mixtral-8x7b");
  const std::string plain =
      exported(Launcher::megatron, mixtral, layout("tp=2,pp=2,ep=4,zero=1", mixtral, 64));
  CHECK(plain.find("--moe-router-score-function") == std::string::npos);
  CHECK(plain.find("--moe-router-topk-scaling-factor") == std::string::npos);
  CHECK(plain.find("--moe-router-enable-expert-bias") == std::string::npos);
}

TEST_CASE("Megatron-LM: experts folded apart from TP name their expert TP size, unfolded none") {
  const ModelSpec mixtral = model("mixtral-8x7b");
  const std::string folded =
      exported(Launcher::megatron, mixtral, layout("tp=8,ep=8,etp=1,zero=1", mixtral, 64));
  CHECK(flag_value(folded, "--expert-tensor-parallel-size") == 1);
  CHECK(flag_value(folded, "--expert-model-parallel-size") == 8);
  const std::string plain =
      exported(Launcher::megatron, mixtral, layout("tp=2,ep=8,zero=1", mixtral, 64));
  CHECK(plain.find("--expert-tensor-parallel-size") == std::string::npos);
}

TEST_CASE("Megatron-LM and NeMo 2: selective recompute names its modules when not the default") {
  const ModelSpec m = model("deepseek-v3");
  const Layout l = layout(
      "tp=1,pp=16,ep=64,uneven=true,recompute=selective,recompute_modules=layernorm+mla_up_proj+"
      "moe",
      m, 2048);
  CHECK(exported(Launcher::megatron, m, l)
            .find("--recompute-granularity selective \\\n--recompute-modules layernorm "
                  "mla_up_proj moe \\\n") != std::string::npos);
  CHECK(exported(Launcher::nemo2, m, l)
            .find("model.config.recompute_modules = [\"layernorm\", \"mla_up_proj\", \"moe\"]") !=
        std::string::npos);
  const Layout plain = layout("tp=1,pp=16,ep=64,uneven=true,recompute=selective", m, 2048);
  CHECK(exported(Launcher::megatron, m, plain).find("--recompute-modules") == std::string::npos);
}

TEST_CASE(
    "Megatron-LM: ZeRO-2/3 through Megatron-FSDP, tp-pp-dp rank order without CP, EP or FSDP") {
  const ModelSpec m = model("llama3-8b");
  const std::string z2 = exported(Launcher::megatron, m, layout("tp=2,zero=2", m, 64));
  CHECK(z2.find("--use-distributed-optimizer \\\n--use-megatron-fsdp \\\n"
                "--data-parallel-sharding-strategy optim_grads \\\n"
                "--ckpt-format fsdp_dtensor \\\n--overlap-grad-reduce \\\n"
                "--overlap-param-gather \\\n") != std::string::npos);
  CHECK(z2.find("# Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1\n") !=
        std::string::npos);
  const std::string z3 = exported(Launcher::megatron, m, layout("tp=2,pp=2,zero=3", m, 64));
  CHECK(z3.find("--data-parallel-sharding-strategy optim_grads_params \\\n") != std::string::npos);
  const std::string pp_dp =
      exported(Launcher::megatron, m, layout("tp=2,pp=2,zero=1,order=tp-cp-pp-dp", m, 64));
  CHECK(pp_dp.find("--use-tp-pp-dp-mapping \\\n") != std::string::npos);
  const std::string why =
      "Megatron-LM cannot express this: --use-tp-pp-dp-mapping orders ranks tp-pp-dp, without "
      "context or expert parallelism, and Megatron-FSDP (ZeRO-2/3) does not run with it; use "
      "order=tp-cp-dp-pp\n";
  for (const char* text :
       {"tp=2,pp=2,zero=3,order=tp-cp-pp-dp", "tp=2,pp=2,cp=2,order=tp-cp-pp-dp"}) {
    CAPTURE(text);
    CHECK(refusal(Launcher::megatron, m, layout(text, m, 64)) ==
          "--layout: error: field 'order' = 'tp-cp-pp-dp': " + why);
  }
  const ModelSpec moe = model("mixtral-8x7b");
  CHECK(refusal(Launcher::megatron, moe, layout("tp=2,pp=2,ep=8,order=tp-cp-pp-dp", moe, 64)) ==
        "--layout: error: field 'order' = 'tp-cp-pp-dp': " + why);
  CHECK(exported(Launcher::megatron, m, layout("tp=2,zero=1", m, 64)).find("--use-megatron-fsdp") ==
        std::string::npos);
}

// Megatron-LM's layers per chunk under --account-for-embedding/loss-in-pipeline-split
// (transformer_block.py get_num_layers_to_build at d98e8a64): (layers + e + l) / (pp·vpp) each,
// the first chunk (pipeline rank 0, virtual stage 0) less the embedding, the last less the loss.
std::vector<int64_t> megatron_account_chunks(int64_t layers, int64_t pp, int64_t vpp,
                                             bool embedding, bool loss) {
  const int64_t counted = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  REQUIRE(counted % pp == 0);
  REQUIRE(counted / pp % vpp == 0);
  std::vector<int64_t> out(static_cast<size_t>(pp * vpp), counted / pp / vpp);
  if (embedding) out.front() -= 1;
  if (loss) out.back() -= 1;
  return out;
}

TEST_CASE(
    "Megatron-LM: the embedding and the loss counted as layers give meshplan's uneven split") {
  CHECK(megatron_account_chunks(126, 16, 2, true, true) == chunk_layers(126, 16, 2));
  CHECK(megatron_account_chunks(126, 16, 8, true, true) == chunk_layers(126, 16, 8));
  CHECK(megatron_account_chunks(94, 8, 4, true, true) == chunk_layers(94, 8, 4));
  CHECK(megatron_account_chunks(94, 32, 3, true, true) == chunk_layers(94, 32, 3));
  CHECK(megatron_account_chunks(61, 2, 31, false, true) == chunk_layers(61, 2, 31));
  CHECK(megatron_account_chunks(79, 4, 5, false, true) == chunk_layers(79, 4, 5));
}

TEST_CASE("Megatron-LM: uneven with vpp counts the embedding and the loss as layers") {
  // Llama 3 405B, 126 layers in 32 chunks (pp=16, vpp=2): meshplan prices 3,4x30,3, which puts
  // 3 and 4 on rank 0; Megatron's first/last flags split each rank evenly over its chunks, but
  // counting the embedding and the loss as a layer each splits 128 into 32 chunks of 4, the first
  // and the last short by one (TransformerConfig account_for_embedding/loss_in_pipeline_split).
  const ModelSpec big = model("llama3-405b");
  const std::string out = exported(
      Launcher::megatron, big, layout("tp=8,pp=16,vpp=2,recompute=full,uneven=true", big, 16384));
  CHECK(flag_value(out, "--num-virtual-stages-per-pipeline-rank") == 2);
  CHECK(out.find("--account-for-embedding-in-pipeline-split") != std::string::npos);
  CHECK(out.find("--account-for-loss-in-pipeline-split") != std::string::npos);
  CHECK(out.find("--pipeline-model-parallel-layout") == std::string::npos);
  CHECK(out.find("--decoder-first-pipeline-num-layers") == std::string::npos);
  CHECK_FALSE(megatron_accepts_uneven(126, 16, 7, 7, 2));
  // 128 chunks (vpp=8): the first holds the embedding alone and the last the loss alone.
  CHECK(chunk_layers(126, 16, 8).front() == 0);
  CHECK(chunk_layers(126, 16, 8).back() == 0);
  const std::string empty = exported(
      Launcher::megatron, big, layout("tp=8,pp=16,vpp=8,recompute=full,uneven=true", big, 16384));
  CHECK(flag_value(empty, "--num-virtual-stages-per-pipeline-rank") == 8);
  CHECK(empty.find("--account-for-embedding-in-pipeline-split") != std::string::npos);
  // NeMo 2 sets the same two MegatronStrategy fields.
  const std::string recipe = exported(
      Launcher::nemo2, big, layout("tp=8,pp=16,vpp=8,recompute=full,uneven=true", big, 16384));
  CHECK(recipe.find("recipe.trainer.strategy.account_for_embedding_in_pipeline_split = True\n") !=
        std::string::npos);
  CHECK(recipe.find("recipe.trainer.strategy.account_for_loss_in_pipeline_split = True\n") !=
        std::string::npos);
  CHECK(recipe.find("pipeline_model_parallel_layout") == std::string::npos);
  // Short by one: the loss alone counts (DeepSeek-V3's 61 layers in 62 chunks, pp=2 vpp=31).
  const ModelSpec ds = model("deepseek-v3");
  const std::string loss_only =
      exported(Launcher::megatron, ds, layout("tp=8,pp=2,vpp=31,ep=8,uneven=true", ds, 128));
  CHECK(loss_only.find("--account-for-embedding-in-pipeline-split") == std::string::npos);
  CHECK(loss_only.find("--account-for-loss-in-pipeline-split") != std::string::npos);
  // An even split keeps --num-layers-per-virtual-pipeline-stage (llama3-70b: 80 layers in 4 x 5
  // chunks of 4).
  const ModelSpec m70 = model("llama3-70b");
  const std::string even = exported(Launcher::megatron, m70, layout("tp=8,pp=4,vpp=5", m70, 64));
  CHECK(flag_value(even, "--num-layers-per-virtual-pipeline-stage") == 4);
  CHECK(even.find("--pipeline-model-parallel-layout") == std::string::npos);
}

TEST_CASE("Megatron-LM: an uneven split short by more than two runs through the flexible layout") {
  // DeepSeek-V3, 61 layers in 16 chunks (pp=8, vpp=2): 3,4x12,3,3,3 — neither the first/last
  // flags nor counting the embedding and the loss give it, so the layout names the chunks, and
  // vpp comes from it alone (arguments.py asserts no other vpp flag beside it).
  const ModelSpec ds = model("deepseek-v3");
  const std::string out =
      exported(Launcher::megatron, ds, layout("tp=8,pp=8,vpp=2,ep=8,uneven=true", ds, 1024));
  CHECK(out.find("--num-virtual-stages-per-pipeline-rank") == std::string::npos);
  CHECK(out.find("--account-for-loss-in-pipeline-split") == std::string::npos);
  const std::vector<int64_t> chunks =
      megatron_layout_chunks(flag_text(out, "--pipeline-model-parallel-layout"));
  CHECK(chunks == chunk_layers(61, 8, 2));
  CHECK(chunks.size() % 8 == 0);  // arguments.py: stages divisible by pp; vpp = 16 / 8
}

// NeMo 8cfedd720346's GPT config keys (model: section), from the committed table.
std::set<std::string> nemo_keys() {
  std::set<std::string> keys;
  std::istringstream in(test::read_file(fs::path(MESHPLAN_TEST_DATA) /
                                        "launchers/nemo-8cfedd720346-gpt-config-keys.txt"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') keys.insert(line);
  return keys;
}

TEST_CASE("NeMo: keys the GPT config lacks say they need '+', interleaving overlaps p2p") {
  const std::set<std::string> known = nemo_keys();
  REQUIRE(known.size() == 116);
  const ModelSpec m = model("mixtral-8x7b");
  const std::string out =
      exported(Launcher::nemo, m, layout("tp=2,pp=4,vpp=2,ep=4,cp=2,zero=1", m, 128));
  std::istringstream in(out.substr(out.find("model:\n") + 7));
  int added = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  ", 0) != 0 || line.rfind("    ", 0) == 0) continue;
    const std::string key = line.substr(2, line.find(':') - 2);
    CAPTURE(key);
    const bool marked =
        line.find("# not in megatron_gpt_config.yaml: +model." + key + "=") != std::string::npos;
    CHECK(marked == (known.count(key) == 0));
    added += marked;
  }
  CHECK(added == 6);  // context_parallel_size, rotary_base and four MoE keys
  CHECK(out.find("  overlap_p2p_comm: true\n  batch_p2p_comm: false\n") != std::string::npos);
  CHECK(out.find("  context_parallel_size: 2  # not in megatron_gpt_config.yaml: "
                 "+model.context_parallel_size=2 on a command line\n") != std::string::npos);
  CHECK(out.find("  rotary_base: 1000000  #") != std::string::npos);
  const std::string flat = exported(Launcher::nemo, m, layout("tp=2,pp=2,ep=4,zero=1", m, 64));
  CHECK(flat.find("overlap_p2p_comm") == std::string::npos);
}

}  // namespace

namespace {

// NeMo 2's recipe keys ("trainer.strategy.tensor_model_parallel_size" → annotated type), from
// the committed table (tests/data/launchers/nemo2-8cfedd720346-recipe-keys.txt).
std::map<std::string, std::string> nemo2_keys() {
  std::map<std::string, std::string> keys;
  std::istringstream in(test::read_file(fs::path(MESHPLAN_TEST_DATA) /
                                        "launchers/nemo2-8cfedd720346-recipe-keys.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t'), tab2 = line.find('\t', tab + 1);
    keys[line.substr(0, tab)] = line.substr(tab + 1, tab2 - tab - 1);
  }
  return keys;
}

// Whether Python literal `value` fits annotation `type` (the forms the table holds).
bool fits_type(const std::string& value, const std::string& type) {
  const bool optional = type.rfind("Optional[", 0) == 0;
  if (optional && value == "None") return true;
  const std::string inner = optional ? type.substr(9, type.size() - 10) : type;
  const bool quoted = value.size() >= 2 && value.front() == '"' && value.back() == '"';
  if (inner == "int") return value.find_first_not_of("0123456789") == std::string::npos;
  if (inner == "bool") return value == "True" || value == "False";
  if (inner == "float")
    return !value.empty() && value.find_first_not_of("0123456789.") == std::string::npos &&
           std::count(value.begin(), value.end(), '.') <= 1;
  if (inner.rfind("Literal[", 0) == 0)
    return quoted && inner.find("'" + value.substr(1, value.size() - 2) + "'") != std::string::npos;
  if (inner == "str" || inner.find("str") != std::string::npos) return quoted;
  if (inner.rfind("list[int]", 0) == 0) return value.front() == '[' && value.back() == ']';
  return inner == "Plugin";  // trainer.plugins: a call
}

}  // namespace

TEST_CASE("NeMo 2: every recipe key is one NeMo 8cfedd720346 / Megatron-core defines, typed") {
  const std::map<std::string, std::string> known = nemo2_keys();
  REQUIRE(known.size() > 400);
  const ModelSpec dense = model("llama3-70b"), moe = model("mixtral-8x7b"),
                  ds = model("deepseek-v3");
  struct Case {
    const ModelSpec& m;
    const char* layout;
    int64_t gpus;
  } cases[] = {{dense, "tp=8,pp=4,vpp=5,zero=1,recompute=selective,tp_overlap=true", 512},
               {dense, "tp=4,cp=4,cp_kind=hybrid,cp_a2a=2,pp=2,zero=1,shard=8", 512},
               {dense, "tp=8,pp=4,zero=1,order=tp-cp-pp-dp,recompute_layers=2", 512},
               {dense, "tp=8,pp=1,zero=3", 512},
               {dense, "tp=8,pp=1,zero=0,act_offload=2", 512},
               {moe, "tp=2,pp=4,vpp=2,ep=8,zero=1,ep_overlap=true", 512},
               {ds, "tp=1,pp=16,ep=32,zero=1,recompute=full,uneven=true,dispatch=deepep", 512}};
  for (const Case& c : cases) {
    CAPTURE(c.layout);
    const std::string out = exported(Launcher::nemo2, c.m, layout(c.layout, c.m, c.gpus));
    std::istringstream in(out);
    int assignments = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      if (line.rfind("recipe.trainer.callbacks.append(", 0) == 0) {
        CHECK(std::string(c.layout).find("tp_overlap=true") != std::string::npos);
        continue;
      }
      REQUIRE(line.rfind("recipe.", 0) == 0);
      const size_t eq = line.find(" = ");
      REQUIRE(eq != std::string::npos);
      const std::string key = line.substr(7, eq - 7), value = line.substr(eq + 3);
      CAPTURE(key);
      CAPTURE(value);
      REQUIRE(known.count(key) == 1);
      CHECK(fits_type(value, known.at(key)));
      ++assignments;
    }
    CHECK(assignments >= 15);
  }
  // DeepSeek-V3's priced split through the flexible layout, as Megatron-LM's export writes it.
  const std::string v3 =
      exported(Launcher::nemo2, ds, layout("tp=1,pp=16,ep=32,recompute=full,uneven=true", ds, 512));
  CHECK(v3.find("recipe.trainer.strategy.pipeline_model_parallel_layout = "
                "\"Et*3|(t*4|)*13t*3|t*3L\"\n") != std::string::npos);
  // What Megatron-core cannot run is refused as for Megatron-LM.
  CHECK(refusal(Launcher::nemo2, dense, layout("tp=8,pp=4,schedule=gpipe", dense, 512))
            .find("field 'schedule' = 'gpipe': NeMo 2 cannot express this") != std::string::npos);
}

TEST_CASE("an MTP model exports its modules where meshplan priced them, or is refused") {
  const ModelSpec hf =
      load_model(std::string(MESHPLAN_SOURCE_DIR) + "/tests/data/hf/deepseek-v3.json").value();
  REQUIRE(hf.mtp_layers == 1);
  // 61 layers over 16 stages, 3 short of even: the layout string, whose last chunk holds the
  // MTP layer before the loss ("m", multi_token_prediction.md: "E|t*3|(t|)*5mL").
  const Layout l = layout("tp=1,pp=16,ep=32,recompute=full,uneven=true", hf, 512);
  const std::string megatron = exported(Launcher::megatron, hf, l);
  CHECK(flag_args(megatron).at("--mtp-num-layers") == "1");
  CHECK(flag_args(megatron).at("--pipeline-model-parallel-layout") ==
        "\"Et*3|(t*4|)*13t*3|t*3mL\"");
  const std::string nemo2 = exported(Launcher::nemo2, hf, l);
  CHECK(nemo2.find("recipe.model.config.mtp_num_layers = 1\n") != std::string::npos);
  CHECK(nemo2.find("pipeline_model_parallel_layout = \"Et*3|(t*4|)*13t*3|t*3mL\"\n") !=
        std::string::npos);
  // Without a layout string Megatron-Core builds the modules on the last stage itself.
  const Layout even = layout("tp=1,pp=1,ep=32", hf, 512);
  CHECK(
      flag_args(exported(Launcher::megatron, hf, even)).count("--pipeline-model-parallel-layout") ==
      0);
  // The launchers without multi-token prediction refuse the model, naming the field.
  CHECK(refusal(Launcher::nemo, hf, even) ==
        "--layout: error: field 'mtp_layers' = '1': NeMo cannot express this: NeMo 1's GPT model "
        "builds no multi-token-prediction block; use NeMo 2 or Megatron-LM\n");
  const Layout fsdp = layout("tp=1,pp=1,ep=32,zero=3", hf, 512);
  CHECK(refusal(Launcher::torchtitan, hf, fsdp) ==
        "--layout: error: field 'mtp_layers' = '1': torchtitan cannot express this: torchtitan "
        "0.2.2 trains no multi-token-prediction modules; use Megatron-LM or NeMo 2\n");
  CHECK(std::string(launcher_refuses(Launcher::deepspeed, hf, hf.training,
                                     layout("tp=1,pp=1,zero=1", hf, 8))) == "mtp_layers");
  // Megatron-LM trains MTP with RoPE only (arguments.py's MTP validation).
  ModelSpec learned = model("gpt3-175b");
  learned.mtp_layers = 1;
  CHECK(refusal(Launcher::megatron, learned, layout("tp=8,pp=8,zero=1", learned, 64))
            .find("field 'mtp_layers' = '1': Megatron-LM cannot express this: Megatron-Core "
                  "trains multi-token prediction with RoPE (or no position embedding) only") !=
        std::string::npos);
}
