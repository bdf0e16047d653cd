#include "planner/attention_model.h"

#include <doctest/doctest.h>

#include "tests/test_inputs.h"

using namespace meshplan;

namespace {

AttentionSample sample(const std::string& kernel, int64_t d, int64_t seq, bool causal, double fwd,
                       double bwd, double fwd_bwd = 0) {
  AttentionSample s;
  s.kernel = kernel;
  s.head_dim = d;
  s.seq_len = seq;
  s.causal = causal;
  s.fwd_flops_per_s = fwd;
  s.bwd_flops_per_s = bwd;
  s.fwd_bwd_flops_per_s = fwd_bwd;
  return s;
}

const GpuSpec& h100() { return *find_gpu("H100-SXM-80GB"); }

}  // namespace

TEST_CASE("attention at a measured point: forward and backward FLOPs over their own throughput") {
  CalibrationProfile p;
  p.attention = {sample("cudnn", 128, 4096, true, 500e12, 400e12)};
  AttentionModel a(p, h100(), {"cudnn"});
  const AttentionModel::Times t = a.time(1e12, 128, 4096, true);
  CHECK(t.forward_s == doctest::Approx(1e12 / 500e12).epsilon(1e-12));
  CHECK(t.backward_s == doctest::Approx(2.5e12 / 400e12).epsilon(1e-12));
  CHECK(a.kernel() == "cudnn");
}

TEST_CASE("attention interpolates linearly in log2(seq_len) and clamps outside the samples") {
  CalibrationProfile p;
  p.attention = {sample("fa3", 128, 2048, true, 400e12, 300e12),
                 sample("fa3", 128, 8192, true, 600e12, 500e12)};
  AttentionModel a(p, h100(), {"fa3"});
  // 4096 sits halfway between 2048 and 8192 in log2: 500 and 400 TFLOP/s.
  CHECK(a.time(1e12, 128, 4096, true).forward_s == doctest::Approx(1e12 / 500e12).epsilon(1e-12));
  CHECK(a.time(1e12, 128, 4096, true).backward_s ==
        doctest::Approx(2.5e12 / 400e12).epsilon(1e-12));
  CHECK(a.time(1e12, 128, 512, true).forward_s == doctest::Approx(1e12 / 400e12).epsilon(1e-12));
  CHECK(a.time(1e12, 128, 65536, true).forward_s == doctest::Approx(1e12 / 600e12).epsilon(1e-12));
}

TEST_CASE("attention interpolates in log2(head_dim) between the nearest measured head dims") {
  CalibrationProfile p;
  p.attention = {sample("cudnn", 64, 4096, false, 400e12, 400e12),
                 sample("cudnn", 256, 4096, false, 600e12, 600e12)};
  AttentionModel a(p, h100(), {"cudnn"});
  // 128 is halfway between 64 and 256 in log2.
  CHECK(a.time(1e12, 128, 4096, false).forward_s == doctest::Approx(1e12 / 500e12).epsilon(1e-12));
}

TEST_CASE("a fwd+bwd figure splits with backward at 0.87x the forward throughput") {
  CalibrationProfile p;
  p.attention = {sample("fa2", 128, 4096, true, 0, 0, 300e12)};
  AttentionModel a(p, h100(), {"fa2"});
  const AttentionModel::Times t = a.time(1e12, 128, 4096, true);
  // The combined figure is 3.5 x forward FLOPs over both times.
  CHECK(t.forward_s + t.backward_s == doctest::Approx(3.5e12 / 300e12).epsilon(1e-12));
  CHECK((2.5e12 / t.backward_s) / (1e12 / t.forward_s) == doctest::Approx(0.87).epsilon(1e-12));
}

TEST_CASE(
    "the first preferred kernel the profile has is used, the other mask stands in when one is "
    "missing") {
  CalibrationProfile p;
  p.attention = {sample("fa2", 128, 4096, false, 300e12, 300e12),
                 sample("cudnn", 128, 4096, false, 600e12, 500e12)};
  AttentionModel a(p, h100(), {"fa3", "cudnn", "fa2"});
  CHECK(a.kernel() == "cudnn");
  CHECK(a.time(1e12, 128, 4096, true).forward_s == doctest::Approx(1e12 / 600e12).epsilon(1e-12));
}

TEST_CASE(
    "without samples attention runs at the efficiency times the BF16 peak, and the sustained ratio "
    "applies") {
  CalibrationProfile p;
  p.attention_efficiency = 0.5;
  p.sustained_compute_ratio = 0.8;
  AttentionModel a(p, h100(), {"cudnn"});
  CHECK(a.kernel().empty());
  const AttentionModel::Times t = a.time(1e12, 128, 4096, true);
  CHECK(t.forward_s + t.backward_s ==
        doctest::Approx(3.5e12 / (0.8 * 0.5 * 989e12)).epsilon(1e-12));
}
