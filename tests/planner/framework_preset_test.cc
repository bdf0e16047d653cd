#include "planner/framework_preset.h"

#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "planner/cost_model.h"
#include "tests/test_inputs.h"

using namespace meshplan;
using namespace meshplan::testing;

namespace {

CostOptions with(const std::string& name) {
  CostOptions o;
  apply_framework(find_framework(name).value(), o);
  return o;
}

}  // namespace

TEST_CASE("the default preset is megatron-core and leaves CostOptions{} unchanged") {
  CHECK(std::string(kDefaultFramework) == "megatron-core");
  CHECK(std::string(framework_presets().front().name) == kDefaultFramework);
  const CostOptions defaults;
  const CostOptions o = with(kDefaultFramework);
  CHECK(o.framework == defaults.framework);
  CHECK(o.overlap_grad_reduce == defaults.overlap_grad_reduce);
  CHECK(o.overlap_p2p == defaults.overlap_p2p);
  CHECK(o.pp_scatter_gather == defaults.pp_scatter_gather);
  CHECK(o.overlap_param_gather == defaults.overlap_param_gather);
  CHECK(o.zero_reduce_every_micro_batch == defaults.zero_reduce_every_micro_batch);
  CHECK(o.memory.grad_bytes_per_param == defaults.memory.grad_bytes_per_param);
  CHECK(o.pipeline_schedules == defaults.pipeline_schedules);
  CHECK(o.hybrid_sharding == defaults.hybrid_sharding);
  CHECK(o.tp_comm_overlap == defaults.tp_comm_overlap);
  CHECK(o.zero3_prefetch == defaults.zero3_prefetch);
}

TEST_CASE("hybrid sharding and TP overlap where each framework has them") {
  const std::vector<std::tuple<const char*, bool, bool>> expected = {
      {"megatron-core", true, true},
      {"nemo", true, true},
      {"megatron-2021", false, false},
      {"deepspeed", false, false},
      {"deepspeed-2021", false, false},
      {"megatron-deepspeed", false, false},
      {"fsdp2", true, true},
      {"torchtitan", true, true},
      {"composer", true, false},
  };
  CHECK(expected.size() == framework_presets().size());
  for (const auto& [name, hybrid, overlap] : expected) {
    CAPTURE(name);
    CHECK(with(name).hybrid_sharding == hybrid);
    CHECK(with(name).tp_comm_overlap == overlap);
  }
}

TEST_CASE("ZeRO-3 gathers are prefetched by every framework but DeepSpeed of 2021") {
  for (const FrameworkPreset& f : framework_presets()) {
    CAPTURE(f.name);
    CHECK(with(f.name).zero3_prefetch == (std::string(f.name) != "deepspeed-2021"));
  }
}

TEST_CASE("every issue-11 framework has a preset, each with a description and a source") {
  for (const char* name : {"megatron-core", "nemo", "megatron-2021", "deepspeed", "fsdp2",
                           "torchtitan", "composer", "deepspeed-2021", "megatron-deepspeed"}) {
    CAPTURE(name);
    Result<FrameworkPreset> f = find_framework(name);
    REQUIRE(f.ok());
    CHECK(std::string(f->name) == name);
    CHECK(std::string(f->description).size() > 10);
    CHECK(std::string(f->source).size() > 10);
  }
  CHECK(framework_names().size() == framework_presets().size());
}

TEST_CASE("each preset's settings") {
  struct Expected {
    const char* name;
    bool grad, p2p, scatter, param_gather, every_micro_batch;
    double grad_bytes;
    bool partial_recompute;
  };
  const Expected expected[] = {
      {"megatron-core", true, true, true, true, true, 4, true},
      {"nemo", true, true, true, true, true, 4, true},
      {"megatron-2021", false, false, true, false, true, 2, false},
      {"deepspeed", true, false, false, false, true, 4, false},
      {"deepspeed-2021", true, false, false, false, true, 4, false},
      {"megatron-deepspeed", false, false, false, false, true, 4, false},
      {"fsdp2", true, true, false, true, true, 4, true},
      {"torchtitan", true, true, false, true, true, 4, true},
      {"composer", true, true, false, true, true, 4, false},
  };
  for (const Expected& x : expected) {
    CAPTURE(x.name);
    const CostOptions o = with(x.name);
    CHECK(o.framework == x.name);
    CHECK(o.overlap_grad_reduce == x.grad);
    CHECK(o.overlap_p2p == x.p2p);
    CHECK(o.pp_scatter_gather == x.scatter);
    CHECK(o.overlap_param_gather == x.param_gather);
    CHECK(o.zero_reduce_every_micro_batch == x.every_micro_batch);
    CHECK(o.memory.grad_bytes_per_param == x.grad_bytes);
    CHECK(o.partial_recompute == x.partial_recompute);
  }
}

TEST_CASE("each preset's pipeline schedules") {
  using S = Schedule;
  const std::vector<std::pair<const char*, std::vector<Schedule>>> expected = {
      {"megatron-core", {S::one_f_one_b, S::interleaved}},
      {"nemo", {S::one_f_one_b, S::interleaved}},
      {"megatron-2021", {S::one_f_one_b, S::interleaved}},
      {"deepspeed", {S::one_f_one_b}},
      {"deepspeed-2021", {S::one_f_one_b}},
      {"megatron-deepspeed", {S::one_f_one_b}},
      {"fsdp2",
       {S::gpipe, S::one_f_one_b, S::interleaved, S::dualpipev, S::zb_v, S::zb_interleaved}},
      {"torchtitan",
       {S::gpipe, S::one_f_one_b, S::interleaved, S::dualpipev, S::zb_v, S::zb_interleaved}},
      {"composer", {}},
  };
  CHECK(expected.size() == framework_presets().size());
  for (const auto& [name, schedules] : expected) {
    CAPTURE(name);
    CHECK(with(name).pipeline_schedules == schedules);
  }
}

TEST_CASE("an unknown framework names every preset and the closest one") {
  Result<FrameworkPreset> f = find_framework("nemoo", SourceLocation{"--framework", 0, 0, ""});
  REQUIRE(!f.ok());
  REQUIRE(f.errors().size() == 1);
  CHECK(format_diagnostics(f.errors()) ==
        "--framework: error: field 'framework' = 'nemoo': must be one of "
        "megatron-core|nemo|megatron-2021|deepspeed|deepspeed-2021|megatron-deepspeed|fsdp2|"
        "torchtitan|composer (did you mean 'nemo'?)\n");
}

TEST_CASE("a preset sets only its own fields") {
  CostOptions o;
  o.flops.causal_attention = true;
  o.dp_bucket_params = 1e6;
  apply_framework(find_framework("deepspeed").value(), o);
  CHECK(o.flops.causal_attention);
  CHECK(o.dp_bucket_params == 1e6);
}

TEST_CASE("zero_reduce_every_micro_batch and overlap_param_gather move only DP time") {
  const ModelSpec model = shipped_model("llama3-8b");
  const ClusterSpec cluster = two_level_cluster(4);
  // Short sequences: one micro-batch's backward is shorter than the gradient reduce-scatter.
  const TrainingSpec training{1024, 256, Precision::bf16};
  auto dp_time = [&](const CostOptions& o, const char* text) {
    CostModel m(model, cluster, CalibrationProfile{}, training, o);
    Layout l = parse_layout(text).value();
    REQUIRE(check_layout(l, model, cluster.gpus(), training).empty());
    return m.evaluate(l).breakdown.dp_s;
  };
  const char* zero2 = "tp=1,dp=32,mbs=1,recompute=none,zero=2";
  CostOptions once;
  once.zero_reduce_every_micro_batch = false;
  // 8 micro-batches: reducing each one's gradients costs more than reducing once per step.
  CHECK(dp_time(CostOptions{}, zero2) > dp_time(once, zero2));
  // ZeRO-1 reduces once per step either way.
  const char* zero1 = "tp=1,dp=32,mbs=1,recompute=none,zero=1";
  CHECK(dp_time(CostOptions{}, zero1) == dp_time(once, zero1));
  CostOptions exposed_gather;
  exposed_gather.overlap_param_gather = false;
  CHECK(dp_time(exposed_gather, zero1) > dp_time(CostOptions{}, zero1));
}

TEST_CASE("a gradient reduction dtype overrides the preset's gradient bytes, '' keeps them") {
  CostOptions o = with("megatron-core");
  CHECK(o.memory.grad_bytes_per_param == 4);  // bf16 training forces fp32 main gradients
  REQUIRE(apply_grad_reduce_dtype("bf16", o).ok());
  CHECK(o.memory.grad_bytes_per_param == 2);
  CHECK(o.grad_reduce_dtype == "bf16");
  REQUIRE(apply_grad_reduce_dtype("fp32", o).ok());
  CHECK(o.memory.grad_bytes_per_param == 4);
  CostOptions fp16 = with("megatron-2021");
  CHECK(fp16.memory.grad_bytes_per_param == 2);
  REQUIRE(apply_grad_reduce_dtype("", fp16).ok());
  CHECK(fp16.memory.grad_bytes_per_param == 2);
  CHECK(fp16.grad_reduce_dtype.empty());
  Result<bool> bad =
      apply_grad_reduce_dtype("bf61", o, SourceLocation{"--grad-reduce-dtype", 0, 0, ""});
  REQUIRE(!bad.ok());
  CHECK(bad.errors().front().field == "grad_reduce_dtype");
  CHECK(bad.errors().front().rule == "must be one of bf16|fp16|fp32 (did you mean 'bf16'?)");
  CHECK(o.memory.grad_bytes_per_param == 4);  // a refused dtype changes nothing
}

TEST_CASE("bf16 gradients halve the gradient buffer and the data-parallel reduction's bytes") {
  const ModelSpec m = shipped_model("llama3-8b");
  const ClusterSpec c = shipped_cluster("dgx-h100-1n");
  CostOptions fp32 = with("megatron-core");
  CostOptions bf16 = fp32;
  REQUIRE(apply_grad_reduce_dtype("bf16", bf16).ok());
  Layout l;
  l.dp = 8;
  l.zero = 1;
  l.mbs = 1;
  CostModel a(m, c, CalibrationProfile{}, m.training, fp32);
  CostModel b(m, c, CalibrationProfile{}, m.training, bf16);
  const Estimate ea = a.evaluate(l, true), eb = b.evaluate(l, true);
  const StageMemory& sa = ea.memory.stages.front();
  const StageMemory& sb = eb.memory.stages.front();
  const double params = static_cast<double>(sa.params);
  CHECK(sa.grads_bytes == doctest::Approx(4 * params));
  CHECK(sb.grads_bytes == doctest::Approx(2 * params));
  CHECK(sb.optimizer_bytes == doctest::Approx(sa.optimizer_bytes));
  CHECK(eb.breakdown.dp_s < ea.breakdown.dp_s);
}

TEST_CASE("FSDP-based presets search no ZeRO-1, no layer groups and no offload they cannot run") {
  for (const char* name : {"fsdp2", "torchtitan", "composer"}) {
    CAPTURE(name);
    CHECK(with(name).zero_stages == std::vector<int>{0, 2, 3});
    CHECK_FALSE(with(name).uniform_recompute);
    CHECK(with(name).offload_devices.empty());
  }
  CHECK(with("megatron-core").zero_stages == std::vector<int>{0, 1, 2, 3});
  CHECK(with("megatron-core").offload_devices == std::vector<Offload>{Offload::cpu});
  CHECK(with("deepspeed").offload_devices == std::vector<Offload>{Offload::cpu, Offload::nvme});
  CHECK(with("deepspeed").cp_kinds.empty());  // its config has no context parallelism
}

TEST_CASE("torchtitan's selective recompute is its op SAC, the Megatron family's its modules") {
  for (const FrameworkPreset& f : framework_presets()) {
    CAPTURE(f.name);
    CostOptions o;
    apply_framework(f, o);
    CHECK(o.memory.selective_op_sac == (std::string(f.name) == "torchtitan"));
  }
}
