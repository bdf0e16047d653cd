#include "core/cluster_spec.h"

#include <doctest/doctest.h>

#include <string>

using namespace meshplan;

namespace {

ClusterSpec load(const std::string& name) {
  Result<ClusterSpec> r = load_cluster(std::string(MESHPLAN_SOURCE_DIR) + "/topologies/" + name);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : format_diagnostics(r.errors())));
  return r.value();
}

}  // namespace

TEST_CASE("built-in GPU table carries dense datasheet peaks") {
  CHECK(find_gpu("H100-SXM-80GB")->peak_bf16_flops_per_s == 989e12);
  CHECK(find_gpu("H100-SXM-80GB")->peak_fp8_flops_per_s == 1979e12);
  CHECK(find_gpu("A100-SXM-80GB")->peak_bf16_flops_per_s == 312e12);
  CHECK(find_gpu("B200")->peak_bf16_flops_per_s == 2250e12);
  CHECK(find_gpu("H200-SXM-141GB")->hbm_bytes_per_s == 4.8e12);
  CHECK(find_gpu("nope") == nullptr);
}

TEST_CASE("shipped clusters have the published GPU counts") {
  CHECK(load("dgx-h100-1n.yaml").gpus() == 8);
  CHECK(load("dgx-h100-64n.yaml").gpus() == 512);
  CHECK(load("dgx-h100-2048n.yaml").gpus() == 16384);
  CHECK(load("selene-a100.yaml").gpus() == 4480);
  ClusterSpec llama = load("llama3-24k-h100.yaml");
  CHECK(llama.gpus() == 24576);
  REQUIRE(llama.network.size() == 4);
  CHECK(llama.network[1].span == 16);
  CHECK(llama.network[2].span == 3072);
  CHECK(llama.network[3].effective_bandwidth_bytes_per_s() == doctest::Approx(50e9 / 7));
}

TEST_CASE("a group of consecutive ranks uses the innermost level that contains it") {
  ClusterSpec c = load("llama3-24k-h100.yaml");
  CHECK(c.level_for_span(8) == 0);
  CHECK(c.level_for_span(9) == 1);
  CHECK(c.level_for_span(16) == 1);
  CHECK(c.level_for_span(2048) == 2);
  CHECK(c.level_for_span(4096) == 3);
}

TEST_CASE("inline GPU types are read with their units") {
  Result<ClusterSpec> r = parse_cluster_yaml(
      "name: c\ngpu: {name: X1, peak_tflops: {bf16: 500, fp8: 1000}, hbm_GiB: 96, hbm_GBps: 4000}\n"
      "nodes: 1\ngpus_per_node: 4\nnetwork:\n  - {name: link, span: 4, bandwidth_GBps: 100, "
      "latency_us: 2}\n",
      "c.yaml");
  REQUIRE(r.ok());
  CHECK(r->gpu.peak_bf16_flops_per_s == 500e12);
  CHECK(r->gpu.hbm_bytes == 96LL << 30);
  CHECK(r->gpu.hbm_bytes_per_s == 4000e9);
  CHECK(r->network[0].latency_s == doctest::Approx(2e-6));
}

TEST_CASE("a DGX GPU brings its host, host: overrides it key by key") {
  const ClusterSpec dgx = load("dgx-h100-1n.yaml");
  CHECK(dgx.host.memory_bytes == 2e12);                     // DGX H100: 2 TB
  CHECK(dgx.host.memory_bytes_per_s == 614.4e9);            // 2 × 8 channels of DDR5-4800
  CHECK(dgx.host.pcie_bytes_per_s == 64e9);                 // PCIe Gen5 x16
  CHECK(dgx.host.nvme_bytes == doctest::Approx(30.72e12));  // 8 × 3.84 TB
  const std::string yaml =
      "name: t\ngpu: H100-SXM-80GB\nnodes: 1\ngpus_per_node: 8\n"
      "host: {memory_GiB: 1024, pcie_GBps: 32}\n"
      "network:\n  - {name: nvlink, span: 8, bandwidth_GBps: 450, latency_us: 3}\n";
  Result<ClusterSpec> c = parse_cluster_yaml(yaml, "t.yaml");
  REQUIRE(c.ok());
  CHECK(c->host.memory_bytes == 1024.0 * (1LL << 30));
  CHECK(c->host.pcie_bytes_per_s == 32e9);
  CHECK(c->host.memory_bytes_per_s == 614.4e9);  // kept from the DGX H100 default
  Result<ClusterSpec> bad = parse_cluster_yaml(
      "name: t\ngpu: H100-SXM-80GB\nnodes: 1\ngpus_per_node: 8\nhost: {memory_gib: 1}\n"
      "network:\n  - {name: nvlink, span: 8, bandwidth_GBps: 450, latency_us: 3}\n",
      "t.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(format_diagnostics(bad.errors()).find("memory_gib") != std::string::npos);
}
