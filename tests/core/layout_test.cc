#include "core/layout.h"

#include <doctest/doctest.h>

#include <array>

#include "core/layout_fields.h"
#include "core/layout_rules.h"
#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

ModelSpec llama70b() { return testing::shipped_model("llama3-70b"); }

std::string errors_of(const std::string& layout, int64_t gpus, int64_t batch = 1024) {
  Result<Layout> l = parse_layout(layout);
  if (!l) return format_diagnostics(l.errors());
  Layout resolved = l.value();
  TrainingSpec t{8192, batch, Precision::bf16};
  return format_diagnostics(check_layout(resolved, llama70b(), gpus, t));
}

}  // namespace

TEST_CASE("layout string sets every field and leaves the documented defaults") {
  Result<Layout> r = parse_layout("tp=8,pp=4,dp=2,zero=1,mbs=2,recompute=selective");
  REQUIRE(r.ok());
  CHECK(r->tp == 8);
  CHECK(r->pp == 4);
  CHECK(r->dp == 2);
  CHECK(r->cp == 1);
  CHECK(r->mbs == 2);
  CHECK(r->recompute == Recompute::selective);
  CHECK(r->sp);  // defaults to tp > 1
  CHECK(r->schedule == Schedule::one_f_one_b);
  CHECK(to_string(r.value()) ==
        "tp=8,pp=4,dp=2,cp=1,ep=1,zero=1,mbs=2,vpp=1,recompute=selective,recompute_layers=0,"
        "sp=true,schedule=1f1b,tp_overlap=false,uneven=false,order=tp-cp-dp-pp");
}

TEST_CASE("vpp > 1 defaults the schedule to interleaved, tp = 1 defaults sp off") {
  Result<Layout> r = parse_layout("pp=4,vpp=2");
  REQUIRE(r.ok());
  CHECK(r->schedule == Schedule::interleaved);
  CHECK_FALSE(r->sp);
}

TEST_CASE("to_string of a layout parses back to the same layout") {
  Result<Layout> a = parse_layout("tp=4,pp=2,cp=2,vpp=2,zero=3,recompute=full,order=tp-dp-cp-pp");
  REQUIRE(a.ok());
  Result<Layout> b = parse_layout(to_string(a.value()));
  REQUIRE(b.ok());
  CHECK(to_string(a.value()) == to_string(b.value()));
  CHECK(b->stride(Dim::cp) == 4 * a->dp);
}

TEST_CASE("dp fills the GPUs left by tp·pp·cp") {
  Result<Layout> r = parse_layout("tp=8,pp=4");
  Layout l = r.value();
  CHECK(check_layout(l, llama70b(), 512, {8192, 1024, Precision::bf16}).empty());
  CHECK(l.dp == 16);
}

namespace {

// tp 8, cp 2, dp 4, pp 16 under the default rank order.
Layout four_dims() {
  Layout l;
  l.tp = 8;
  l.cp = 2;
  l.dp = 4;
  l.pp = 16;
  return l;
}

}  // namespace

TEST_CASE("rank order gives each dimension its stride: tp innermost by default") {
  const Layout l = four_dims();
  CHECK(l.stride(Dim::tp) == 1);
  CHECK(l.stride(Dim::cp) == 8);
  CHECK(l.stride(Dim::dp) == 16);
  CHECK(l.stride(Dim::pp) == 64);
}

TEST_CASE("all strides in one pass: each dimension's stride under any rank order") {
  Layout l = four_dims();
  l.order = {Dim::dp, Dim::tp, Dim::pp, Dim::cp};
  // dp innermost (1), then tp (4), pp (4·8 = 32), cp outermost (32·16 = 512).
  CHECK(l.strides() == std::array<int64_t, 4>{4, 512, 1, 32});  // indexed tp, cp, dp, pp
  for (Dim d : {Dim::tp, Dim::cp, Dim::dp, Dim::pp})
    CHECK(l.strides()[static_cast<size_t>(d)] == l.stride(d));
}

TEST_CASE("uneven chunks take the deficit from the last chunk, then the first") {
  CHECK(chunk_layers(126, 16, 1) ==
        std::vector<int64_t>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
  CHECK(chunk_layers(80, 4, 1) == std::vector<int64_t>{20, 20, 20, 20});
  CHECK(chunk_layers(10, 4, 1) == std::vector<int64_t>{2, 3, 3, 2});
  CHECK(chunk_layers(9, 4, 1) == std::vector<int64_t>{2, 3, 2, 2});
  // One chunk per layer and two more: the first and last hold none (the embedding, the loss).
  CHECK(chunk_layers(6, 2, 4) == std::vector<int64_t>{0, 1, 1, 1, 1, 1, 1, 0});
  CHECK(chunk_deficit(6, 8) == 2);
  CHECK(chunk_deficit(126, 16) == 2);
  CHECK(chunk_deficit(80, 16) == 0);
}

TEST_CASE("every layout violation is reported, not just the first") {
  CHECK(errors_of("tp=6,pp=3,dp=2,mbs=3", 512) ==
        "--layout: error: field 'dp' = '2': dp·tp·pp·cp = 2·6·3·1 = 36 must equal the GPU count "
        "(512)\n"
        "--layout: error: field 'tp' = '6': must divide heads (64)\n"
        "--layout: error: field 'tp' = '6': must divide kv_heads (8) or be a multiple of it (KV "
        "heads are then replicated tp/kv_heads times)\n"
        "--layout: error: field 'tp' = '6': must divide ffn_hidden (28672)\n"
        "--layout: error: field 'pp' = '3': pp·vpp = 3 must divide layers (80); add uneven=true to "
        "let the first and last stages hold fewer layers\n"
        "--layout: error: field 'mbs' = '3': dp·mbs = 2·3 = 6 must divide the global batch (1024 "
        "sequences)\n"
        "--layout: error: field 'tp' = '6': must divide the per-rank sequence (8192) under "
        "sequence parallelism\n");
}

TEST_CASE("interleaving needs a schedule, pp > 1, and micro-batches in multiples of pp") {
  CHECK(errors_of("tp=8,pp=4,vpp=2,schedule=1f1b,dp=16", 512) ==
        "--layout: error: field 'vpp' = '2': vpp > 1 needs schedule=interleaved or zb-interleaved "
        "(or dualpipev or zb-v with vpp=2)\n");
  CHECK(errors_of("tp=8,pp=8,vpp=2,dp=8", 512, 8 * 12) ==
        "--layout: error: field 'pp' = '8': the interleaved schedule needs the micro-batch count "
        "(12) to be a multiple of pp (Megatron-LM)\n");
}

TEST_CASE("dualpipe needs 2·pp micro-batches, an even pp and count, dualpipev vpp = 2") {
  auto too_few = [](int has) {
    return "--layout: error: field 'schedule' = 'dualpipe': needs at least 2·pp = 8 "
           "micro-batches (it has " +
           std::to_string(has) +
           "), an even count and an even pp, half entering from each end (the DualPipe "
           "repository's dualpipe.py and dualpipev.py)\n";
  };
  // dp 16 · mbs 1 over 96 sequences: 6 micro-batches, fewer than 2·pp = 8; over 144: 9, odd.
  CHECK(errors_of("tp=8,pp=4,dp=16,schedule=dualpipe", 512, 96) == too_few(6));
  CHECK(errors_of("tp=8,pp=4,dp=16,schedule=dualpipe", 512, 16 * 9) == too_few(9));
  CHECK(errors_of("tp=8,pp=4,dp=16,schedule=dualpipe", 512).empty());
  CHECK(errors_of("tp=8,pp=4,dp=16,vpp=2,schedule=dualpipev", 512).empty());
  const std::string needs_vpp2 =
      "schedule=dualpipev needs vpp=2 (each rank holds two chunks in a V)\n";
  CHECK(errors_of("tp=8,pp=4,dp=16,vpp=4,schedule=dualpipev", 512) ==
        "--layout: error: field 'vpp' = '4': " + needs_vpp2);
  CHECK(errors_of("tp=8,pp=4,dp=16,schedule=dualpipev", 512) ==
        "--layout: error: field 'vpp' = '1': " + needs_vpp2);
}

TEST_CASE("zb-v needs vpp = 2, zb-interleaved vpp ≥ 2 and micro-batches in multiples of pp") {
  CHECK(errors_of("tp=8,pp=4,dp=16,vpp=2,schedule=zb-v", 512).empty());
  CHECK(errors_of("tp=8,pp=4,dp=16,schedule=zb-v", 512) ==
        "--layout: error: field 'vpp' = '1': schedule=zb-v needs vpp=2 (each rank holds two "
        "chunks in a V)\n");
  CHECK(errors_of("tp=8,pp=4,dp=16,vpp=4,schedule=zb-v", 512) ==
        "--layout: error: field 'vpp' = '4': schedule=zb-v needs vpp=2 (each rank holds two "
        "chunks in a V)\n");
  CHECK(errors_of("tp=8,pp=4,dp=16,vpp=4,schedule=zb-interleaved", 512).empty());
  CHECK(errors_of("tp=8,pp=4,dp=16,schedule=zb-interleaved", 512) ==
        "--layout: error: field 'vpp' = '1': schedule=zb-interleaved needs vpp ≥ 2\n");
  // dp 8 · mbs 1 over 96 sequences: 12 micro-batches, not a multiple of pp = 8.
  CHECK(errors_of("tp=8,pp=8,vpp=2,dp=8,schedule=zb-interleaved", 512, 8 * 12) ==
        "--layout: error: field 'pp' = '8': the zb-interleaved schedule needs the micro-batch "
        "count (12) to be a multiple of pp (one round of pp micro-batches per chunk, as "
        "torch.distributed.pipelining runs it)\n");
}

TEST_CASE("offload needs a ZeRO stage, act_offload at most a stage's layers") {
  CHECK(errors_of("tp=8,zero=0,offload=cpu", 512) ==
        "--layout: error: field 'offload' = 'cpu': needs zero ≥ 1 (the optimizer states "
        "offloaded are the ZeRO-sharded ones)\n");
  CHECK(errors_of("tp=8,pp=4,act_offload=21", 512) ==
        "--layout: error: field 'act_offload' = '21': must not exceed the layers per stage "
        "(20)\n");
  CHECK(errors_of("tp=8,pp=4,zero=1,offload=nvme,act_offload=20", 512).empty());
}

TEST_CASE("expert parallelism is refused for a dense model") {
  CHECK(errors_of("tp=8,ep=2", 512) ==
        "--layout: error: field 'ep' = '2': must be 1 for a dense model (it has no experts)\n");
}

TEST_CASE("layout syntax errors point at the column of the bad entry") {
  CHECK(errors_of("tp=8,pp=x,recompute=sel,zero=4,tpp=2,vpp", 512) ==
        "--layout:1:6: error: field 'pp' = 'x': must be an integer between 1 and 1000000\n"
        "  tp=8,pp=x,recompute=sel,zero=4,tpp=2,vpp\n"
        "       ^\n"
        "--layout:1:11: error: field 'recompute' = 'sel': must be one of none|selective|full (did "
        "you mean 'selective'?)\n"
        "  tp=8,pp=x,recompute=sel,zero=4,tpp=2,vpp\n"
        "            ^\n"
        "--layout:1:25: error: field 'zero' = '4': must be an integer between 0 and 3\n"
        "  tp=8,pp=x,recompute=sel,zero=4,tpp=2,vpp\n"
        "                          ^\n"
        "--layout:1:32: error: field 'tpp' = '2': unknown layout key (did you mean 'tp'?)\n"
        "  tp=8,pp=x,recompute=sel,zero=4,tpp=2,vpp\n"
        "                                 ^\n"
        "--layout:1:38: error: field 'vpp': must be written key=value\n"
        "  tp=8,pp=x,recompute=sel,zero=4,tpp=2,vpp\n"
        "                                       ^\n");
}

TEST_CASE("the field table drives parsing and printing: to_string reads back to the same layout") {
  CHECK(kLayoutFields.size() == 24);
  Result<Layout> parsed = parse_layout(
      "tp=4,pp=2,dp=3,cp=2,ep=1,zero=3,mbs=2,vpp=2,recompute=full,recompute_layers=1,sp=false,"
      "schedule=interleaved,order=tp-cp-pp-dp,tp_overlap=true,uneven=true");
  REQUIRE(parsed.ok());
  CHECK(to_string(parsed.value()) ==
        "tp=4,pp=2,dp=3,cp=2,ep=1,zero=3,mbs=2,vpp=2,recompute=full,recompute_layers=1,sp=false,"
        "schedule=interleaved,tp_overlap=true,uneven=true,order=tp-cp-pp-dp");
  Result<Layout> again = parse_layout(to_string(parsed.value()));
  REQUIRE(again.ok());
  CHECK(to_string(again.value()) == to_string(parsed.value()));
  for (const LayoutField& field : kLayoutFields) {
    CAPTURE(field.key);
    CHECK(find_layout_field(field.key) == &field);
    CHECK((field.pin == nullptr) == (field.search == FieldSearch::derived));
  }
}

TEST_CASE("named layout rules: each predicate is the rule check_layout reports") {
  const ModelSpec model = llama70b();  // 64 heads, 8 KV heads, 80 layers
  const TrainingSpec training{8192, 1024, Precision::bf16};
  Layout layout;
  layout.tp = 3;
  CHECK(!tp_splits_heads(layout, model));
  layout.tp = 16;
  CHECK(tp_splits_heads(layout, model));
  CHECK(tp_splits_kv_heads(layout, model));  // a multiple of 8: KV heads replicated
  layout.tp = 1, layout.pp = 83;
  CHECK(!chunks_within_layers(layout, model));
  layout.pp = 82;  // the embedding and the loss each on a stage of their own
  CHECK(chunks_within_layers(layout, model));
  layout.pp = 3;
  CHECK(!chunks_divide_layers(layout, model));
  layout.uneven = true;
  CHECK(chunks_divide_layers(layout, model));
  layout.cp = 3;
  CHECK(!cp_splits_sequence(layout, training));
  layout.dp = 3;
  CHECK(!batch_splits(layout, training));
  CHECK(!ep_splits_experts(Layout{.ep = 2}, model));  // dense: ep must be 1
}

TEST_CASE("TP overlap holds only where each TP group lies in one NVLink domain") {
  Layout layout;
  layout.tp = 8, layout.tp_overlap = true;
  CHECK(tp_overlap_within_domain(layout, 8));  // tp innermost: ranks 0-7 of a node
  layout.tp = 16;
  CHECK(!tp_overlap_within_domain(layout, 8));   // ranks 0-15: two nodes
  CHECK(tp_overlap_within_domain(layout, 64));   // a 64-GPU NVLink domain holds four groups
  CHECK(!tp_overlap_within_domain(layout, 72));  // NVL72: the group of ranks 64-79 straddles it
  layout.tp_overlap = false;
  CHECK(tp_overlap_within_domain(layout, 8));  // no overlap asked
  // cp inside tp (order cp-tp-dp-pp): tp 4 at stride 2 spans 8 ranks, one node; at stride 4, 16.
  Result<Layout> l = parse_layout("tp=4,cp=2,tp_overlap=true,order=cp-tp-dp-pp");
  REQUIRE(l.ok());
  CHECK(tp_overlap_within_domain(l.value(), 8));
  l = parse_layout("tp=4,cp=4,tp_overlap=true,order=cp-tp-dp-pp");
  REQUIRE(l.ok());
  CHECK(!tp_overlap_within_domain(l.value(), 8));
}

TEST_CASE("a layout key given twice is an error naming the first one's column") {
  CHECK(errors_of("tp=8,pp=2,tp=4", 512) ==
        "--layout:1:11: error: field 'tp' = '4': is given twice; the first is at column 1\n"
        "  tp=8,pp=2,tp=4\n"
        "            ^\n");
}

TEST_CASE("degrees whose product exceeds int64 are reported without wrapping") {
  CHECK(errors_of("tp=1000000,pp=1000000,cp=1000000,dp=1000000", 512)
            .rfind(
                "--layout: error: field 'dp' = '1000000': dp·tp·pp·cp = "
                "1000000·1000000·1000000·1000000 = more than 2^63 must equal the GPU count (512)\n",
                0) == 0);
}

TEST_CASE("locate_in_layout gives check errors the column of their key in the string") {
  Layout l = parse_layout("pp=3,tp=8").value();
  TrainingSpec t{8192, 1024, Precision::bf16};
  std::vector<Diagnostic> errors = check_layout(l, llama70b(), 512, t);
  locate_in_layout(errors, "pp=3,tp=8");
  CHECK(format_diagnostics(errors) ==
        "--layout:1:6: error: field 'tp' = '8': tp·pp·cp = 24 must divide the GPU count (512) so "
        "dp can fill it\n"
        "  pp=3,tp=8\n"
        "       ^\n"
        "--layout:1:1: error: field 'pp' = '3': pp·vpp = 3 must divide layers (80); add "
        "uneven=true to let the first and last stages hold fewer layers\n"
        "  pp=3,tp=8\n"
        "  ^\n"
        "--layout: error: field 'mbs' = '1': dp·mbs = 21·1 = 21 must divide the global batch (1024 "
        "sequences)\n");
}

TEST_CASE("shard (hybrid sharding) is printed only when set and reads back") {
  Layout l = parse_layout("tp=8,zero=3,shard=8").value();
  CHECK(l.shard == 8);
  CHECK(to_string(l).find(",shard=8") != std::string::npos);
  CHECK(parse_layout(to_string(l)).value().shard == 8);
  CHECK(short_label(Layout{.dp = 64, .tp = 8, .zero = 3, .shard = 8}) ==
        "tp8 pp1 dp64 z3 shard8 mbs1");
  // At its default (0: all dp·cp ranks) the field is left out: layouts written before it existed
  // read the same.
  CHECK(to_string(parse_layout("tp=8").value()).find("shard") == std::string::npos);
  CHECK(Layout{.dp = 16, .cp = 2, .shard = 8}.shard_size() == 8);
  CHECK(Layout{.dp = 16, .cp = 2}.shard_size() == 32);
}

TEST_CASE("check_layout: the shard group fits the data-parallel ranks in rank order") {
  // 512 GPUs as tp8 pp1: dp 64.
  CHECK(errors_of("tp=8,zero=1,shard=8", 512).empty());
  CHECK(errors_of("tp=8,zero=1,shard=64", 512).empty());
  CHECK(errors_of("tp=8,zero=1,shard=3", 512) ==
        "--layout: error: field 'shard' = '3': must divide dp·cp = 64·1 along the rank order (a "
        "divisor of the inner of the two, or a multiple of it)\n");
  CHECK(errors_of("tp=8,zero=0,shard=8", 512) ==
        "--layout: error: field 'shard' = '8': needs zero ≥ 1 (with zero=0 nothing is sharded)\n");
  // cp inside dp (order tp-cp-dp-pp): a group of 4 takes both CP ranks and 2 DP ranks; 6 would
  // need 3 of the 8 DP ranks.
  CHECK(errors_of("tp=8,cp=2,zero=1,shard=4", 512).empty());
  CHECK(!errors_of("tp=8,cp=2,zero=1,shard=6", 512).empty());
  Layout l{.dp = 8, .ep = 4, .zero = 1, .shard = 2};
  CHECK(!shard_holds_expert_groups(l));
  l.shard = 8;
  CHECK(shard_holds_expert_groups(l));
}

TEST_CASE("rows whose short labels coincide get the fields that tell them apart") {
  auto layout = [](const std::string& text) {
    Result<Layout> l = parse_layout(text);
    REQUIRE(l.ok());
    return l.value();
  };
  const std::vector<std::string> labels = distinguishing_labels(
      {layout("tp=8,pp=4,dp=2,order=tp-cp-dp-pp"), layout("tp=8,pp=4,dp=2,order=tp-cp-pp-dp"),
       layout("tp=8,pp=2,dp=4"), layout("tp=8,pp=4,dp=2,order=tp-cp-pp-dp,tp_overlap=true")});
  REQUIRE(labels.size() == 4);
  CHECK(labels[0] == "tp8 pp4 dp2 z1 mbs1 1f1b tp_overlap=false order=tp-cp-dp-pp");
  CHECK(labels[1] == "tp8 pp4 dp2 z1 mbs1 1f1b tp_overlap=false order=tp-cp-pp-dp");
  CHECK(labels[2] == "tp8 pp2 dp4 z1 mbs1 1f1b");  // unique: the short label alone
  CHECK(labels[3] == "tp8 pp4 dp2 z1 mbs1 1f1b tp_overlap=true order=tp-cp-pp-dp");
}

TEST_CASE("differing_fields lists each field that varies, with its values in order") {
  auto layout = [](const std::string& text) {
    Result<Layout> l = parse_layout(text);
    REQUIRE(l.ok());
    return l.value();
  };
  CHECK(differing_fields({layout("tp=8,pp=4,dp=2,order=tp-cp-dp-pp"),
                          layout("tp=8,pp=4,dp=2,order=tp-cp-pp-dp"),
                          layout("tp=8,pp=4,dp=2,order=tp-cp-dp-pp,tp_overlap=true")}) ==
        std::vector<std::string>{"tp_overlap=false/true", "order=tp-cp-dp-pp/tp-cp-pp-dp"});
  CHECK(differing_fields({layout("tp=8"), layout("tp=8")}).empty());
}

TEST_CASE("cp_kind and cp_a2a are printed only when set, read back, and label the row") {
  Layout l = parse_layout("tp=2,cp=8,cp_kind=hybrid,cp_a2a=4").value();
  CHECK(l.cp_kind == CpKind::hybrid);
  CHECK(l.cp_a2a_size() == 4);
  CHECK(l.cp_ring_size() == 2);
  CHECK(to_string(l).find(",cp_kind=hybrid,cp_a2a=4") != std::string::npos);
  CHECK(parse_layout(to_string(l)).value().cp_a2a == 4);
  CHECK(short_label(l) == "tp2 pp1 dp0 cp8 a2a4 z1 mbs1");
  const Layout ulysses = parse_layout("cp=4,cp_kind=a2a").value();
  CHECK(ulysses.cp_a2a_size() == 4);
  CHECK(ulysses.cp_ring_size() == 1);
  CHECK(short_label(ulysses) == "tp1 pp1 dp0 cp4 a2a z1 mbs1");
  const Layout gathered = parse_layout("cp=4,cp_kind=allgather").value();
  CHECK(gathered.cp_a2a_size() == 1);
  CHECK(gathered.cp_ring_size() == 1);
  // Ring, the default, is left out: layouts written before the field existed read the same.
  CHECK(to_string(parse_layout("cp=4").value()).find("cp_kind") == std::string::npos);
  CHECK(parse_layout("cp=4").value().cp_ring_size() == 4);
  CHECK(format_diagnostics(parse_layout("cp=4,cp_kind=ulysses").errors()) ==
        "--layout:1:6: error: field 'cp_kind' = 'ulysses': must be one of "
        "ring|allgather|a2a|hybrid\n  cp=4,cp_kind=ulysses\n       ^\n");
}

TEST_CASE("check_layout: CP variants need cp > 1, hybrid a group inside cp, a2a whole heads") {
  // llama3-70b: 64 query heads, 8 KV heads. 512 GPUs.
  CHECK(errors_of("tp=8,cp=2,cp_kind=allgather", 512).empty());
  CHECK(errors_of("tp=4,cp=2,cp_kind=a2a", 512).empty());
  CHECK(errors_of("tp=2,cp=8,cp_kind=hybrid,cp_a2a=4", 512).empty());
  CHECK(errors_of("tp=8,cp_kind=a2a", 512) ==
        "--layout: error: field 'cp_kind' = 'a2a': needs cp > 1 (there is no context "
        "parallelism to exchange)\n");
  CHECK(errors_of("tp=8,cp=4,cp_kind=hybrid", 512) ==
        "--layout: error: field 'cp_a2a' = '0': cp_kind=hybrid needs 1 < cp_a2a < cp (4) with "
        "cp_a2a dividing cp (the all-to-all groups inside the ring)\n");
  CHECK(errors_of("tp=8,cp=4,cp_kind=ring,cp_a2a=2", 512) ==
        "--layout: error: field 'cp_a2a' = '2': is only meaningful with cp_kind=hybrid (cp_kind "
        "is ring); leave it out\n");
  // tp=8 leaves each rank one KV head: an all-to-all over 2 CP ranks cannot split it.
  CHECK(errors_of("tp=8,cp=2,cp_kind=a2a", 512) ==
        "--layout: error: field 'cp_kind' = 'a2a': its all-to-all over 2 CP ranks must split "
        "each TP rank's 8 query and 1 KV heads evenly\n");
  CHECK(
      !cp_a2a_splits_heads(parse_layout("tp=2,cp=8,cp_kind=hybrid,cp_a2a=8").value(), llama70b()));
}

TEST_CASE("ep_overlap is printed only when on and needs an MoE model with ep > 1") {
  CHECK(to_string(parse_layout("tp=8").value()).find("ep_overlap") == std::string::npos);
  CHECK(to_string(parse_layout("ep=8,ep_overlap=true").value()).find(",ep_overlap=true") !=
        std::string::npos);
  CHECK(errors_of("tp=8,ep_overlap=true", 512) ==
        "--layout: error: field 'ep_overlap' = 'true': needs an MoE model with ep > 1 (no expert "
        "all-to-all to overlap)\n");
}

namespace {
// check_layout's messages for `layout` on mixtral-8x7b (8 experts of width 14336, 32 heads) on
// `gpus` GPUs, 4K sequences.
std::string mixtral_errors(const std::string& layout, int64_t gpus) {
  Result<Layout> l = parse_layout(layout);
  if (!l) return format_diagnostics(l.errors());
  Layout resolved = l.value();
  const TrainingSpec t{4096, 1024, Precision::bf16};
  return format_diagnostics(
      check_layout(resolved, testing::shipped_model("mixtral-8x7b"), gpus, t));
}
}  // namespace

TEST_CASE("etp: experts split over a divisor of tp, printed only when it differs from tp") {
  // tp=8 with etp=1 and ep=8 on one node: attention split 8 ways, experts whole, one per rank.
  Result<Layout> folded = parse_layout("tp=8,dp=1,ep=8,etp=1");
  REQUIRE(folded.ok());
  CHECK(folded.value().expert_tp() == 1);
  CHECK(folded.value().expert_dp() == 1);
  CHECK(to_string(folded.value()).find(",etp=1") != std::string::npos);
  CHECK(short_label(folded.value()).find(" etp1") != std::string::npos);
  CHECK(mixtral_errors("tp=8,ep=8,etp=1", 8) == "");
  // Unset, or equal to tp: the dense layout; neither prints.
  Result<Layout> plain = parse_layout("tp=8,etp=8");
  REQUIRE(plain.ok());
  CHECK(!plain.value().folds_experts());
  CHECK(to_string(plain.value()).find("etp") == std::string::npos);
  // Without the fold ep=8 would need dp·cp = 8: one node's tp=8 leaves dp = 1.
  CHECK(mixtral_errors("tp=8,ep=8", 8) ==
        "--layout: error: field 'ep' = '8': must divide dp·cp (1) (expert groups are carved from "
        "the data- and context-parallel ranks)\n");
}

TEST_CASE("etp's rules: a divisor of tp, with sp, the pipeline outermost and no HSDP") {
  CHECK(mixtral_errors("tp=8,ep=8,etp=3", 8) ==
        "--layout: error: field 'etp' = '3': must divide tp (8) (expert tensor-parallel groups "
        "are sub-groups of the tensor-parallel ranks)\n");
  const std::string fold_rule =
      "below tp needs sp=true, the pipeline outermost in the rank order (order=…-pp) and shard=0 "
      "(the experts' etp × ep × expert-dp fold of each stage's ranks)\n";
  CHECK(mixtral_errors("tp=8,ep=8,etp=1,sp=false", 8) ==
        "--layout: error: field 'etp' = '1': " + fold_rule);
  CHECK(mixtral_errors("tp=4,pp=2,ep=4,etp=1,order=tp-cp-pp-dp", 16) ==
        "--layout: error: field 'etp' = '1': " + fold_rule);
  CHECK(mixtral_errors("tp=4,ep=4,etp=1,zero=1,shard=4", 16) ==
        "--layout: error: field 'etp' = '1': " + fold_rule);
  // ep must divide the ranks outside the expert-TP groups: tp/etp·dp·cp = 2·1·1 = 2 here.
  CHECK(mixtral_errors("tp=4,ep=4,etp=2", 4) ==
        "--layout: error: field 'ep' = '4': must divide tp/etp·dp·cp (2) (expert groups are "
        "carved from each stage's ranks outside the expert tensor-parallel groups)\n");
  // A dense model has no experts to lay out apart.
  CHECK(errors_of("tp=8,etp=1", 512) ==
        "--layout: error: field 'etp' = '1': must equal tp (8) for a dense model (it has no "
        "experts)\n");
}

TEST_CASE(
    "recompute_modules: printed when not the default, need selective and the model's modules") {
  Result<Layout> l = parse_layout("tp=8,recompute=selective,recompute_modules=mlp+layernorm");
  REQUIRE(l.ok());
  CHECK(to_string(l.value()).find(",recompute_modules=layernorm+mlp") != std::string::npos);
  CHECK(to_string(parse_layout("tp=8,recompute=selective").value()).find("recompute_modules") ==
        std::string::npos);
  CHECK(errors_of("tp=8,recompute=full,recompute_modules=mlp", 512) ==
        "--layout: error: field 'recompute_modules' = 'mlp': needs recompute=selective\n");
  CHECK(errors_of("tp=8,recompute=selective,recompute_modules=moe_act", 512) ==
        "--layout: error: field 'recompute_modules' = 'moe_act': names a module the model does "
        "not have (mla_up_proj needs MLA; moe_act and moe routed experts; shared_experts shared "
        "experts; mlp a dense layer)\n");
  CHECK(format_diagnostics(parse_layout("tp=8,recompute_modules=attention").errors()) ==
        "--layout:1:6: error: field 'recompute_modules' = 'attention': must be one or more of "
        "core_attn|layernorm|mla_up_proj|mlp|moe_act|moe|shared_experts joined by '+', each "
        "once\n"
        "  tp=8,recompute_modules=attention\n"
        "       ^\n");
}

TEST_CASE("recompute_layers per stage: a:b:c:d reads back, equal counts are one count") {
  const Layout l = parse_layout("tp=8,pp=4,recompute_layers=6:4:2:0").value();
  CHECK(l.recompute_stage_layers.to_vector() == std::vector<int64_t>{6, 4, 2, 0});
  CHECK(l.recompute_layers == 6);
  CHECK(l.recompute_layers_on(0) == 6);
  CHECK(l.recompute_layers_on(3) == 0);
  CHECK(to_string(parse_layout(to_string(l)).value()) == to_string(l));
  CHECK(to_string(l).find(",recompute_layers=6:4:2:0,") != std::string::npos);
  CHECK(short_label(l) == "tp8 pp4 dp0 z1 mbs1+6:4:2:0full 1f1b");
  const Layout same = parse_layout("tp=8,pp=4,recompute_layers=3:3:3:3").value();
  CHECK(same.recompute_stage_layers.empty());
  CHECK(same.recompute_layers == 3);
  CHECK(same.recompute_layers_on(2) == 3);
}

TEST_CASE("recompute_layers per stage: one per stage, block method, within the stage") {
  CHECK(errors_of("tp=8,pp=4,recompute_layers=2:1", 512) ==
        "--layout: error: field 'recompute_layers' = '2:1': gives 2 counts: a per-stage list "
        "needs one per pipeline stage (pp=4)\n");
  CHECK(errors_of("tp=8,pp=4,recompute=full,recompute_layers=4:3:2:1", 512) ==
        "--layout: error: field 'recompute_layers' = '4:3:2:1': a per-stage list needs recompute "
        "none or selective (the block method); recompute=full recomputes every layer\n");
  CHECK(errors_of("tp=8,pp=4,recompute_layers=21:3:2:1", 512) ==
        "--layout: error: field 'recompute_layers' = '21:3:2:1': must not exceed the layers per "
        "stage (20)\n");
  CHECK(errors_of("tp=8,pp=4,recompute_layers=2::1", 512) ==
        "--layout:1:11: error: field 'recompute_layers' = '2::1': must be an integer between 0 "
        "and 100000, or one per pipeline stage joined by ':' (4:3:2:1)\n"
        "  tp=8,pp=4,recompute_layers=2::1\n"
        "            ^\n");
  CHECK(errors_of("tp=8,pp=4,recompute=selective,recompute_layers=4:3:2:1", 512).empty());
}
