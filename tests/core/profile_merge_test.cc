// core/profile_merge.cc: which section wins when a measured profile is laid over a published one.
#include "core/profile_merge.h"

#include <doctest/doctest.h>

namespace meshplan {
namespace {

CollectiveFit all_reduce_fit(const std::string& level, int64_t group, double busbw) {
  CollectiveFit f;
  f.collective = "all_reduce";
  f.level = level;
  f.group_size = group;
  f.busbw_bytes_per_s = busbw;
  return f;
}

CalibrationProfile published() {
  CalibrationProfile p;
  p.name = "published";
  p.provenance.how = "published";
  p.provenance.gpu = "H100-SXM-80GB";
  p.provenance.gpu_count = 8;
  p.provenance.sources = {"a datasheet"};
  p.gemm["bf16"].max_efficiency = 0.8;
  p.gemm["fp8"].max_efficiency = 0.7;
  p.hbm_bytes_per_s = 2.5e12;
  p.sustained_compute_ratio = 0.85;
  p.fp8_quantization_overhead = {{"delayed", 0.0}, {"current", 0.21}};
  p.intra_node_bus_efficiency = 0.8;
  p.attention = {{"cudnn", 128, 4096, true, 500e12, 400e12, 0, "paper"},
                 {"fa3", 128, 4096, true, 600e12, 450e12, 0, "paper"}};
  p.collectives = {all_reduce_fit("nvlink", 8, 360e9), all_reduce_fit("ib", 16, 360e9)};
  p.peer_all_reduce = {6.7e-6, 402e9, 8388608, "vLLM PR 24111"};
  p.notes = {"published note"};
  return p;
}

CalibrationProfile measured() {
  CalibrationProfile p;
  p.name = "measured";
  p.provenance.how = "measured";
  p.provenance.gpu = "NVIDIA H100 80GB HBM3";
  p.provenance.gpu_count = 1;
  p.provenance.cublas = "13.1.0";
  p.provenance.command = "meshplan calibrate";
  p.gemm["bf16"].max_efficiency = 0.83;
  p.hbm_bytes_per_s = 3e12;
  p.sustained_compute_ratio = 0.94;
  p.attention = {{"cudnn", 128, 4096, true, 550e12, 430e12, 0, "measured"},
                 {"cudnn", 128, 8192, true, 590e12, 470e12, 0, "measured"}};
  p.collectives = {all_reduce_fit("nvlink", 8, 370e9)};
  p.notes = {"measured note"};
  return p;
}

TEST_CASE("a later profile replaces what it measured and keeps the rest of the base") {
  CalibrationProfile m =
      merge_profiles({{published(), "pub.yaml"}, {measured(), "meas.yaml"}}, "h100-merged");
  CHECK(m.name == "h100-merged");
  CHECK(m.gemm.at("bf16").max_efficiency == 0.83);  // measured
  CHECK(m.gemm.at("fp8").max_efficiency == 0.7);    // not measured: the base's
  CHECK(m.hbm_bytes_per_s == 3e12);
  CHECK(m.sustained_compute_ratio == 0.94);
  CHECK(m.intra_node_bus_efficiency == 0.8);
  CHECK(m.fp8_quantization_overhead.at("current") == 0.21);
  // Attention per kernel: every cuDNN sample is the measured one, FA3 stays.
  REQUIRE(m.attention.size() == 3);
  CHECK(m.attention[0].kernel == "fa3");
  CHECK(m.attention[1].fwd_flops_per_s == 550e12);
  CHECK(m.attention[2].seq_len == 8192);
  // Collectives per (collective, level, group): the NVLink fit replaced in place, IB kept.
  REQUIRE(m.collectives.size() == 2);
  CHECK(m.collectives[0].busbw_bytes_per_s == 370e9);
  CHECK(m.collectives[1].level == "ib");
  // The engines' peer all-reduce: not measured by one GPU, the base's.
  CHECK(m.peer_all_reduce.peer_read_bytes_per_s == 402e9);
  CHECK(section_origin(m, "peer_all_reduce").file == "pub.yaml");
}

TEST_CASE("the merged provenance credits each section to its file and keeps every source") {
  CalibrationProfile m =
      merge_profiles({{published(), "pub.yaml"}, {measured(), "meas.yaml"}}, "x");
  CHECK(m.provenance.how == "measured");
  CHECK(m.provenance.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(m.provenance.gpu_count == 1);
  CHECK(m.provenance.cublas == "13.1.0");
  CHECK(m.provenance.command == "meshplan calibrate");
  const std::vector<std::string> sources = {
      "merged: all_reduce x16 on ib, attention fa3, fp8_quantization_overhead current, "
      "fp8_quantization_overhead delayed, gemm fp8, intra_node_bus_efficiency, peer_all_reduce "
      "from pub.yaml (published)",
      "merged: all_reduce x8 on nvlink, attention cudnn, gemm bf16, hbm, sustained_compute_ratio "
      "from meas.yaml (measured)",
      "pub.yaml: a datasheet"};
  CHECK(m.provenance.sources == sources);
  CHECK(m.notes ==
        std::vector<std::string>{"pub.yaml: published note", "meas.yaml: measured note"});
}

TEST_CASE("merging is a fold: the last word on a section is the last file's") {
  CalibrationProfile again = measured();
  again.hbm_bytes_per_s = 3.1e12;
  CalibrationProfile m = merge_profiles({{published(), "a"}, {measured(), "b"}, {again, "c"}}, "x");
  CHECK(m.hbm_bytes_per_s == 3.1e12);
  CHECK(m.provenance.command == "meshplan calibrate; meshplan calibrate");
}

}  // namespace
}  // namespace meshplan

namespace meshplan {
namespace {

TEST_CASE("a merge of a merged profile keeps each section's own origin") {
  // meas.yaml's GEMMs and HBM were measured; the bus efficiency it carries came from pub.yaml.
  const CalibrationProfile inner =
      merge_profiles({{published(), "pub.yaml"}, {measured(), "meas.yaml"}}, "inner");
  CHECK(inner.provenance.how == "measured");
  const CalibrationProfile outer =
      merge_profiles({{published(), "cluster"}, {inner, "inner.yaml"}}, "outer");
  CHECK(section_origin(outer, "hbm").file == "inner.yaml");
  CHECK(section_origin(outer, "hbm").how == "measured");
  CHECK(section_origin(outer, "intra_node_bus_efficiency").file == "inner.yaml");
  CHECK(section_origin(outer, "intra_node_bus_efficiency").how == "published");
  // A section no credit names: the profile's own how.
  CHECK(section_origin(outer, "gpu_compute_spread").file == "");
  CHECK(section_origin(outer, "gpu_compute_spread").how == "measured");
  CHECK(section_origin(published(), "hbm").how == "published");
}

}  // namespace
}  // namespace meshplan
