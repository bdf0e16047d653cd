// The serve --layout string: fields, defaults and the exact error text.
#include "serving/serving_layout_parse.h"

#include <doctest/doctest.h>

#include "core/diagnostic.h"
#include "serving/serving_plan.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::serving;

TEST_CASE("serve layout: every key, and the defaults for the others") {
  Result<ServingLayout> l = parse_serving_layout("tp=4,replicas=2");
  REQUIRE(l.ok());
  CHECK(l->tp == 4);
  CHECK(l->pp == 1);
  CHECK(l->ep == 1);
  CHECK(l->replicas == 2);
  CHECK(l->max_batch == 0);
  l = parse_serving_layout("tp=8,pp=2,ep=8,replicas=1,max_batch=64");
  REQUIRE(l.ok());
  CHECK(layout_text(l.value()) == "tp=8,pp=2,ep=8,replicas=1,max_batch=64");
}

TEST_CASE("serve layout: disaggregated prefill takes prefill_tp and prefill_replicas together") {
  Result<ServingLayout> l = parse_serving_layout("tp=4,replicas=2,prefill_tp=8,prefill_replicas=1");
  REQUIRE(l.ok());
  CHECK(l->disaggregated());
  CHECK(l->gpus() == 4 * 2 + 8);
  CHECK(l->prefill_worker().tp == 8);
  CHECK(layout_text(l.value()) ==
        "tp=4,pp=1,ep=1,replicas=2,max_batch=0,prefill_tp=8,prefill_replicas=1");
  CHECK(short_text(l.value()) == "tp4 pp1 ep1 x2 b0 | prefill tp8 x1");
  l = parse_serving_layout("tp=4,prefill_tp=8");
  REQUIRE_FALSE(l.ok());
  CHECK(format_diagnostics(l.errors()) ==
        "--layout:1:1: error: field 'prefill_tp' = '8': disaggregated prefill needs both "
        "prefill_tp and prefill_replicas\n"
        "  tp=4,prefill_tp=8\n"
        "  ^\n");
}

TEST_CASE("serve layout: attention_dp is 0 or 1") {
  Result<ServingLayout> l = parse_serving_layout("tp=8,ep=8,attention_dp=1");
  REQUIRE(l.ok());
  CHECK(l->attention_dp);
  CHECK(l->dense_tp() == 1);
  CHECK(l->data_ranks() == 8);
  CHECK(layout_text(l.value()) == "tp=8,pp=1,ep=8,replicas=1,max_batch=0,attention_dp=1");
  l = parse_serving_layout("attention_dp=2");
  REQUIRE_FALSE(l.ok());
  CHECK(format_diagnostics(l.errors()) ==
        "--layout:1:14: error: field 'attention_dp' = '2': must be 0 or 1\n"
        "  attention_dp=2\n"
        "               ^\n");
}

TEST_CASE("serve layout: an unknown key, a bad value and a repeated key each name the rule") {
  Result<ServingLayout> l = parse_serving_layout("tq=4,pp=0,pp=2");
  REQUIRE_FALSE(l.ok());
  CHECK(format_diagnostics(l.errors()) ==
        "--layout:1:1: error: field 'tq' = '4': is not a serving layout field "
        "(tp|pp|ep|replicas|max_batch|attention_dp|prefill_tp|prefill_replicas) (did you mean "
        "'tp'?)\n"
        "  tq=4,pp=0,pp=2\n"
        "  ^\n"
        "--layout:1:9: error: field 'pp' = '0': must be an integer between 1 and 10000000\n"
        "  tq=4,pp=0,pp=2\n"
        "          ^\n"
        "--layout:1:11: error: field 'pp' = '2': is given twice\n"
        "  tq=4,pp=0,pp=2\n"
        "            ^\n");
}

TEST_CASE("serve layout: checks against the model and cluster") {
  ServingProblem p;
  p.model = meshplan::testing::shipped_model("llama3-70b");
  p.cluster = meshplan::testing::shipped_cluster("dgx-h100-1n");
  p.gpus = 8;
  ServingLayout l;
  l.tp = 16;
  l.ep = 2;
  const std::vector<Diagnostic> errors = check_serving_layout(p, l);
  CHECK(format_diagnostics(errors) ==
        "--layout: error: field 'tp' = '16': must be at most the GPUs of one node (8): tensor "
        "parallelism all-reduces every layer\n"
        "--layout: error: field 'ep' = '2': must be 1: the model has no experts\n"
        "--layout: error: field 'replicas' = '1': tp × pp × replicas = 16 exceeds the 8 GPUs "
        "available\n");
}
