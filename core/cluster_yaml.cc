// Reads topologies/*.yaml (DESIGN.md §2) into a ClusterSpec.
#include <fmt/format.h>

#include "core/cluster_spec.h"
#include "core/edit_distance.h"
#include "core/units.h"
#include "core/yaml_node.h"

namespace meshplan {
namespace {

GpuSpec read_inline_gpu(const YamlNode& n) {
  n.expect_only_keys({"name", "peak_tflops", "hbm_GiB", "hbm_GBps"});
  GpuSpec g;
  g.name = n.child("name").as_string();
  YamlNode peak = n.child("peak_tflops");
  peak.expect_only_keys({"bf16", "fp8"});
  g.peak_bf16_flops_per_s = peak.child("bf16").as_double(0.001, 1e6) * units::kTera;
  g.peak_fp8_flops_per_s = peak.get_double("fp8", 0, 0, 1e6) * units::kTera;
  g.hbm_bytes = static_cast<int64_t>(n.child("hbm_GiB").as_double(0.001, 1e6) * units::kGiB);
  g.hbm_bytes_per_s = n.child("hbm_GBps").as_double(0.001, 1e9) * units::kGB;
  g.source = "inline in " + n.file();
  return g;
}

GpuSpec read_gpu(const YamlNode& n) {
  if (n.is_map()) return read_inline_gpu(n);
  std::string name = n.as_string();
  const GpuSpec* g = find_gpu(name);
  if (!g) {
    n.fail(
        fmt::format("unknown GPU; built-in types are {}{}, or give "
                    "{{name, peak_tflops: {{bf16, fp8}}, hbm_GiB, hbm_GBps}}",
                    fmt::join(gpu_names(), ", "), did_you_mean(name, gpu_names())));
  }
  return *g;
}

NetworkLevel read_level(const YamlNode& n) {
  n.expect_only_keys({"name", "span", "bandwidth_GBps", "latency_us", "oversubscription"});
  NetworkLevel l;
  l.name = n.child("name").as_string();
  l.span = n.child("span").as_int(1, kMaxClusterGpus);
  l.bandwidth_bytes_per_s = n.child("bandwidth_GBps").as_double(1e-6, 1e6) * units::kGB;
  l.latency_s = n.child("latency_us").as_double(0, 1e6) * units::kMicrosecond;
  l.oversubscription = n.get_double("oversubscription", 1.0, 1.0, 1000.0);
  return l;
}

// `host:` overrides the GPU's default host (GpuSpec::host) key by key; a GPU without one needs
// all five keys for offloading to be possible.
HostSpec read_host(const YamlNode& n, HostSpec h) {
  n.expect_only_keys({"memory_GiB", "memory_GBps", "pcie_GBps", "nvme_TB", "nvme_GBps"});
  h.memory_bytes = n.get_double("memory_GiB", h.memory_bytes / units::kGiB, 0, 1e9) * units::kGiB;
  h.memory_bytes_per_s =
      n.get_double("memory_GBps", h.memory_bytes_per_s / units::kGB, 1e-3, 1e6) * units::kGB;
  h.pcie_bytes_per_s =
      n.get_double("pcie_GBps", h.pcie_bytes_per_s / units::kGB, 1e-3, 1e6) * units::kGB;
  h.nvme_bytes =
      n.get_double("nvme_TB", h.nvme_bytes / (1000 * units::kGB), 0, 1e6) * 1000 * units::kGB;
  h.nvme_bytes_per_s =
      n.get_double("nvme_GBps", h.nvme_bytes_per_s / units::kGB, 1e-3, 1e6) * units::kGB;
  h.source = "cluster YAML host: (" + n.file() + ")";
  return h;
}

ClusterSpec read_cluster(const YamlNode& root) {
  root.expect_only_keys({"name", "gpu", "nodes", "gpus_per_node", "profile", "network", "host"});
  ClusterSpec c;
  c.name = root.child("name").as_string();
  c.gpu = read_gpu(root.child("gpu"));
  c.nodes = root.child("nodes").as_int(1, 10'000'000);
  c.gpus_per_node = root.child("gpus_per_node").as_int(1, 1024);
  if (auto p = root.optional_child("profile")) {
    c.profile = p->as_string();
    c.profile_where = p->location();
  }
  c.host = c.gpu.host;
  if (auto h = root.optional_child("host")) c.host = read_host(*h, c.gpu.host);
  YamlNode net = root.child("network");
  if (net.size() == 0) net.fail("must list at least one level");
  std::vector<Diagnostic> errors;
  for (size_t i = 0; i < net.size(); ++i) {
    YamlNode item = net.element(i);
    NetworkLevel l = read_level(item);
    if (!c.network.empty() && l.span <= c.network.back().span) {
      errors.push_back(item.child("span").diagnostic(fmt::format(
          "must exceed the span of the level inside it ({}: {}); levels go innermost first",
          c.network.back().name, c.network.back().span)));
    } else if (!c.network.empty() && l.span % c.network.back().span != 0) {
      errors.push_back(item.child("span").diagnostic(
          fmt::format("must be a multiple of the span of the level inside it ({}: {})",
                      c.network.back().name, c.network.back().span)));
    }
    c.network.push_back(l);
  }
  if (c.network.back().span < c.gpus()) {
    errors.push_back(
        net.element(net.size() - 1)
            .child("span")
            .diagnostic(fmt::format(
                "the outermost level must span every GPU (nodes × gpus_per_node = {})", c.gpus())));
  }
  if (!errors.empty()) throw InputError{errors};
  c.file = root.file();
  return c;
}

}  // namespace

size_t ClusterSpec::level_for_span(int64_t span) const {
  for (size_t i = 0; i < network.size(); ++i)
    if (network[i].span >= span) return i;
  return network.size() - 1;
}

Result<ClusterSpec> parse_cluster_yaml(const std::string& text, const std::string& file) {
  return capture_input_errors([&] { return read_cluster(YamlNode::parse(text, file)); });
}

Result<ClusterSpec> load_cluster(const std::string& path) {
  return capture_input_errors([&] { return read_cluster(YamlNode::load_file(path)); });
}

}  // namespace meshplan
