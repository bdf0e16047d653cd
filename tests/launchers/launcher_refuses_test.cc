// launcher_refuses (the search's yes/no) and export_launcher (the messages) run one set of rules:
// over a grid of layouts of dense, MoE and MLA models they agree on every layout, and the field
// the search counts is the first one export names.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "tests/launchers/launcher_test_util.h"

using namespace meshplan;
using namespace meshplan::launcher_test;

namespace {

// Layout strings over the fields the launchers' rules read.
std::vector<std::string> layout_grid(bool moe) {
  std::vector<std::string> out;
  const char* shapes[] = {"tp=1,pp=1",
                          "tp=2,pp=1,sp=false",
                          "tp=2,pp=1",
                          "tp=2,pp=4",
                          "tp=2,pp=4,vpp=2",
                          "tp=1,pp=4,schedule=gpipe",
                          "tp=1,pp=4,schedule=zb-h1",
                          "tp=1,pp=2,vpp=2,schedule=dualpipev",
                          "tp=2,cp=2,pp=1",
                          "tp=1,cp=2,cp_kind=allgather,pp=1",
                          "tp=1,pp=1,shard=4",
                          "tp=2,pp=1,tp_overlap=true",
                          "tp=1,pp=2,order=tp-cp-pp-dp",
                          "tp=1,pp=4,uneven=true",
                          "tp=1,pp=4,vpp=2,uneven=true"};
  const char* tails[] = {"zero=0",
                         "zero=1",
                         "zero=2",
                         "zero=3",
                         "zero=1,recompute=selective",
                         "zero=1,recompute=selective,recompute_layers=2",
                         "zero=1,recompute=full",
                         "zero=1,recompute=full,recompute_layers=2",
                         "zero=1,recompute_layers=3",
                         "zero=1,offload=cpu",
                         "zero=1,offload=nvme",
                         "zero=0,act_offload=1"};
  for (const char* shape : shapes)
    for (const char* tail : tails) out.push_back(std::string(shape) + "," + tail);
  if (moe) {
    for (const char* tail : {"ep=2", "ep=2,ep_overlap=true", "ep=2,dispatch=allgather",
                             "ep=2,pp=2,vpp=2,ep_overlap=true"})
      out.push_back(std::string("tp=1,zero=1,") + tail);
  }
  return out;
}

}  // namespace

TEST_CASE("launcher_refuses agrees with export_launcher on every layout of a grid") {
  int checked = 0, refused = 0;
  ModelSpec alibi = model("gpt3-175b");  // as BLOOM: ALiBi, which Megatron-core lacks
  alibi.position_embedding = PositionEmbedding::alibi;
  for (const char* name :
       {"llama3-8b", "mixtral-8x7b", "deepseek-v3", "deepseek-v3.2", "gpt3-175b", "alibi"}) {
    const ModelSpec m = std::string(name) == "alibi" ? alibi : model(name);
    for (const std::string& text : layout_grid(m.moe.has_value())) {
      Result<Layout> parsed = parse_layout(text);
      if (!parsed) continue;  // a duplicate key in the grid's own composition
      Layout l = parsed.value();
      if (!check_layout(l, m, 64, m.training).empty()) continue;
      for (const std::string& launcher_name : launcher_names()) {
        const Launcher launcher = *parse_launcher(launcher_name);
        CAPTURE(name);
        CAPTURE(text);
        CAPTURE(launcher_name);
        const Result<std::string> exported = export_launcher(launcher, m, m.training, l);
        const char* field = launcher_refuses(launcher, m, m.training, l);
        ++checked;
        REQUIRE(exported.ok() == (field == nullptr));
        if (exported.ok()) continue;
        ++refused;
        CHECK(exported.errors().front().field == field);
      }
    }
  }
  // The grid exercises both outcomes broadly.
  CHECK(checked > 400);
  CHECK(refused > checked / 4);
  CHECK(refused < checked);
}

TEST_CASE("launcher_refuses_by_zero gives launcher_refuses' answer at every ZeRO stage") {
  int checked = 0;
  for (const char* name : {"llama3-8b", "mixtral-8x7b", "deepseek-v3", "gpt3-175b"}) {
    const ModelSpec m = model(name);
    for (const std::string& text : layout_grid(m.moe.has_value())) {
      Result<Layout> parsed = parse_layout(text);
      if (!parsed) continue;
      Layout l = parsed.value();
      std::array<bool, 4> zeros{};
      for (int zero = 0; zero <= 3; ++zero) {
        l.zero = zero;
        zeros[static_cast<size_t>(zero)] = check_layout(l, m, 64, m.training).empty();
      }
      for (const std::string& launcher_name : launcher_names()) {
        const Launcher launcher = *parse_launcher(launcher_name);
        CAPTURE(name);
        CAPTURE(text);
        CAPTURE(launcher_name);
        std::array<const char*, 4> by_zero{};
        launcher_refuses_by_zero(launcher, m, m.training, l, zeros, by_zero);
        for (int zero = 0; zero <= 3; ++zero) {
          if (!zeros[static_cast<size_t>(zero)]) continue;
          CAPTURE(zero);
          l.zero = zero;
          const char* field = launcher_refuses(launcher, m, m.training, l);
          const char* got = by_zero[static_cast<size_t>(zero)];
          REQUIRE((field == nullptr) == (got == nullptr));
          if (field) CHECK(std::string(field) == got);
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000);
}

// SearchOptions::LauncherCheck::counts_alike, which `plan` declares for these rules: the search
// asks once for a run of recompute counts ≥ 2 that are multiples of vpp (layout_search.cc:
// count_lost_tail), so the answer must not tell any two of them apart.
TEST_CASE("launcher_refuses answers alike for recompute counts of 2 and more in multiples of vpp") {
  int checked = 0;
  for (const char* name : {"llama3-8b", "mixtral-8x7b", "deepseek-v3", "gpt3-175b"}) {
    const ModelSpec m = model(name);
    for (const std::string& text : layout_grid(m.moe.has_value())) {
      Result<Layout> parsed = parse_layout(text);
      if (!parsed) continue;
      Layout l = parsed.value();
      if (!check_layout(l, m, 64, m.training).empty()) continue;  // the rules divide by dp
      for (const std::string& launcher_name : launcher_names()) {
        const Launcher launcher = *parse_launcher(launcher_name);
        CAPTURE(name);
        CAPTURE(text);
        CAPTURE(launcher_name);
        l.recompute_layers = 2 * l.vpp;
        const char* first = launcher_refuses(launcher, m, m.training, l);
        for (int64_t times : {3, 4, 7, 16}) {
          l.recompute_layers = times * l.vpp;
          const char* field = launcher_refuses(launcher, m, m.training, l);
          REQUIRE((field == nullptr) == (first == nullptr));
          if (field) CHECK(std::string(field) == first);
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000);
}

TEST_CASE("launcher_refuses names model and training fields too") {
  ModelSpec bloom = model("gpt3-175b");
  bloom.position_embedding = PositionEmbedding::alibi;  // as BLOOM
  const Layout l = layout("tp=8,pp=8,zero=1", bloom, 64);
  CHECK(std::string(launcher_refuses(Launcher::megatron, bloom, bloom.training, l)) ==
        "position_embedding");
  ModelSpec llama = model("llama3-8b");
  TrainingSpec fp8 = llama.training;
  fp8.precision = Precision::fp8;
  const Layout plain = layout("tp=1,pp=1,zero=1", llama, 8);
  CHECK(std::string(launcher_refuses(Launcher::deepspeed, llama, fp8, plain)) == "precision");
  CHECK(launcher_refuses(Launcher::deepspeed, llama, llama.training, plain) == nullptr);
}
