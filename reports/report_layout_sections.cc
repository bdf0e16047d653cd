// The sections about the chosen layout: memory, time, timeline, what-ifs, launchers, and the
// assumptions list (declared in report_sections.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/units.h"
#include "planner/attention_model.h"
#include "planner/memory_model.h"
#include "planner/profile_lookup.h"
#include "reports/estimate_render.h"
#include "reports/layer_ops_render.h"
#include "reports/report_sections.h"
#include "reports/text_format.h"

namespace meshplan {
namespace {

using units::kGiB;

std::string memory_rows(const Estimate& e) {
  std::vector<std::vector<std::string>> rows;
  auto g = [](double b) { return fmt::format("{:.2f}", b / kGiB); };
  for (const StageMemory& s : e.memory.stages) {
    rows.push_back({std::to_string(s.stage), std::to_string(s.layers), g(s.params_bytes),
                    g(s.grads_bytes), g(s.optimizer_bytes), g(s.activations_bytes),
                    g(s.other_bytes()), g(s.total_bytes())});
  }
  return markdown_table({"stage", "layers", "params GiB", "grads GiB", "optimizer GiB",
                         "activations GiB", "other GiB", "total GiB"},
                        rows);
}

std::string time_rows(const Estimate& e) {
  const TimeBreakdown& b = e.breakdown;
  std::vector<std::vector<std::string>> rows;
  for (const BreakdownComponent& c : breakdown_components(b)) {
    rows.push_back({c.label, fmt::format("{:.2f}", c.seconds * 1e3),
                    fmt::format("{:.1f}%", 100 * c.seconds / e.step_time_s)});
  }
  return markdown_table({"component", "ms", "share"}, rows);
}

std::string simulation_rows(const sim::SimulationResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const sim::StageSummary& s : r.stages) {
    rows.push_back({std::to_string(s.stage), fmt::format("{:.1f}", s.compute_s * 1e3),
                    fmt::format("{:.1f}", s.exposed_comm_s * 1e3),
                    fmt::format("{:.1f}", s.idle_s * 1e3),
                    fmt::format("{:.1f}%", 100 * s.bubble_fraction),
                    fmt::format("{:.1f}", s.peak_micro_batches)});
  }
  return markdown_table({"stage", "compute ms", "waiting on communication ms", "idle ms",
                         "idle share", "peak micro-batches held"},
                        rows);
}

// The FP8 scaling state and saved-input rule of the memory options (MemoryOptions docs).
std::string fp8_scaling_and_inputs(const MemoryOptions& m) {
  const std::string state =
      m.fp8_amax_history_len > 0
          ? fmt::format("{:.0f} B of delayed-scaling state per FP8 GEMM (amax history {})",
                        fp8_scaling_bytes_per_gemm(m), m.fp8_amax_history_len)
          : std::string("no scaling state (current scaling)");
  return fmt::format("{}; linear-layer inputs saved for the backward in {}", state,
                     m.fp8_saves_quantized_inputs ? "FP8" : "BF16");
}

}  // namespace

std::string best_section(const ReportData& d) {
  const Estimate& e = d.search.ranked.front();
  std::string out = fmt::format(
      "## Best layout\n\n```\n--layout {}\n```\n\n{} micro-batches per step; analytic step {}, "
      "simulated {}; "
      "MFU {:.1f}% ({:.1f} TFLOP/s per GPU), HFU {:.1f}%; {} tokens/s.\n\n",
      to_string(e.layout), e.micro_batches, seconds(e.step_time_s),
      e.simulated_step_s > 0 ? seconds(e.simulated_step_s) : "-", 100 * e.mfu,
      e.model_tflops_per_gpu, 100 * e.hfu, short_count(e.tokens_per_s));
  out += "### Memory per GPU by stage\n\n![Memory per GPU by pipeline stage](memory.svg)\n\n";
  out += memory_rows(e);
  out += "\n### Step time\n\n![Step time breakdown](breakdown.svg)\n\n";
  out += time_rows(e);
  out += "\n";
  if (d.best_ops) {
    out +=
        "### Where a layer's time goes\n\nThe analytic step's layer costs op by op (`meshplan "
        "estimate --ops`), for ";
    out += layer_ops_markdown(*d.best_ops) + "\n";
  }
  out += "### Simulated pipeline timeline\n\n![Simulated pipeline timeline](timeline.svg)\n\n";
  out +=
      "Each row is a stage's compute stream (communication in the thin lane under it; grey is "
      "idle). "
      "Each of the 400 time columns stacks the share of every kind in it, in eighths.\n\n";
  if (d.best_simulation) out += simulation_rows(d.best_simulation->result) + "\n";
  out += fmt::format(
      "## MFU against peak memory\n\n![MFU against peak memory](mfu_vs_memory.svg)\n\n"
      "The {} best feasible layouts by analytic MFU (a bounded, deterministic sample of the {} "
      "feasible), the chosen layout marked.\n\n",
      d.sample.size(), with_commas(d.search.feasible));
  return out;
}

std::string what_if_section(const ReportData& d) {
  std::vector<std::vector<std::string>> rows;
  for (const WhatIf& w : d.what_ifs) {
    if (!w.estimate) {
      rows.push_back({w.scenario, w.change, "-", "-", "-", w.note});
      continue;
    }
    const Estimate& e = *w.estimate;
    rows.push_back({w.scenario, w.change,
                    fmt::format("{:.1f} / {:.1f}", e.peak_bytes / kGiB, e.capacity_bytes / kGiB),
                    fmt::format("{:.1f}", e.step_time_s * 1e3), fmt::format("{:.1f}%", 100 * e.mfu),
                    w.note});
  }
  std::string out = "## What if\n\nThe best layout under one change (analytic).\n\n";
  out +=
      markdown_table({"scenario", "change", "peak / capacity GiB", "step ms", "MFU", "note"}, rows);
  out += "\n";
  return out;
}

std::string launcher_section(const ReportData& d) {
  std::string out =
      "## Launcher configurations\n\nFor the best layout (`meshplan export --format ...`).\n\n";
  for (const LauncherConfig& c : d.launchers) {
    out += fmt::format("### {}\n\n", launcher_title(c.launcher));
    if (c.text) {
      out += fmt::format("```{}\n{}```\n\n",
                         c.launcher == Launcher::deepspeed ? "json"
                         : c.launcher == Launcher::nemo    ? "yaml"
                                                           : "bash",
                         *c.text);
      continue;
    }
    for (const Diagnostic& e : c.refused)
      out += fmt::format("- not expressible: `{}={}`: {}\n", e.field, e.value, e.rule);
    out += "\n";
  }
  return out;
}

std::string assumptions_section(const ReportData& d) {
  std::string out = "## Assumptions\n\n";
  const ResolvedCalibration calibration =
      resolve_calibration(d.profile, d.cluster.gpu, d.training.precision, d.options.fp8_recipe);
  for (const std::string& a : report_assumptions(d.options, d.profile, calibration)) {
    out += "- ";
    out += a;
    out += '\n';
  }
  return out;
}

std::vector<std::string> report_assumptions(const CostOptions& o, const CalibrationProfile& p,
                                            const ResolvedCalibration& c) {
  const MemoryOptions& m = o.memory;
  auto from = [](const Calibrated& value) {
    return fmt::format("{:.2f} ({})", value.value, origin_tag(value));
  };
  const Calibrated& ceiling = c.gemm_sustained_flops_per_s;
  // The kernel whose samples training's attention reads (a serving engine's are not among them).
  const std::string attention_kernel = preferred_attention_kernel(p, o.attention_kernels);
  const auto attention_samples =
      std::count_if(p.attention.begin(), p.attention.end(),
                    [&](const AttentionSample& s) { return s.kernel == attention_kernel; });
  return {
      fmt::format("Weights {:.0f} B, gradients {:.0f} B, optimizer states {:.0f} B per parameter "
                  "(mixed-precision Adam; gradients {}); {}; {}.",
                  m.weight_bytes_per_param, m.grad_bytes_per_param, m.optimizer_bytes_per_param,
                  o.grad_reduce_dtype.empty()
                      ? fmt::format("in the {} preset's dtype", o.framework)
                      : fmt::format("reduced in {}, as the job sets", o.grad_reduce_dtype),
                  m.fp8_params
                      ? "FP8 parameters: FP8 weights and their transposes replace the 2-byte "
                        "weights of the linear layers"
                      : fmt::format("FP8 training adds {:.0f} B per linear-layer parameter for "
                                    "the FP8 weights and transposes cached across micro-batches",
                                    m.fp8_weight_cache_bytes_per_param),
                  fp8_scaling_and_inputs(m)),
      fmt::format("CUDA context and library workspaces: {} per GPU.",
                  gib(static_cast<double>(m.cuda_context_bytes))),
      fmt::format("NCCL buffers: {:.0f} MiB per communicator a rank belongs to.",
                  static_cast<double>(m.nccl_bytes_per_communicator) / units::kMiB),
      fmt::format("Allocator fragmentation: {:.0f}% of tensor bytes.",
                  100 * m.allocator_slack_fraction),
      fmt::format(
          "Attention FLOPs counted {} (model FLOPs for MFU); kernel time {}.",
          o.flops.causal_attention ? "causal (half)" : "non-causal (Megatron/PaLM convention)",
          o.causal_attention_time ? "skips masked blocks (causal)" : "covers every block"),
      fmt::format("Fused attention: kernel preference {}; backward = 2.5× forward FLOPs at "
                  "{:.2f}× the forward throughput when a sample lacks it.",
                  fmt::join(o.attention_kernels, ", "), kAttentionBackwardThroughputRatio),
      fmt::format(
          "Collectives over several network levels: {} algorithm.",
          o.collective_algorithm == CollectiveAlgorithm::ring ? "flat ring" : "hierarchical"),
      fmt::format("DP gradient reduction {} the backward pass, except the last bucket of "
                  "max({:.0f} M, 1 M·dp) parameters.",
                  o.overlap_grad_reduce ? "overlaps" : "follows", o.dp_bucket_params / 1e6),
      fmt::format("Framework preset: {}. ZeRO-1/2 weight gather {} the next forward; ZeRO-2/3 "
                  "gradients reduced {}.",
                  o.framework, o.overlap_param_gather ? "hidden behind" : "exposed before",
                  o.zero_reduce_every_micro_batch ? "after every micro-batch" : "once per step"),
      fmt::format("Pipeline sends {} compute; the fill and drain chains block (p·v − 1 "
                  "transfers each way when interleaved).",
                  o.overlap_p2p ? "overlap" : "do not overlap"),
      fmt::format("Overlap hides {:.0f}% of TP/CP communication (with tp_overlap; CP always) and "
                  "{:.0f}% of DP/ZeRO communication behind the compute it runs beside (fitted "
                  "on the development set); EP all-to-alls exposed.",
                  100 * o.tp_overlap_efficiency, 100 * o.dp_overlap_efficiency),
      fmt::format("Rings across nodes {}.", o.collective_rails
                                                ? "drive one NIC per member GPU (rail-optimized)"
                                                : "run at one NIC's bandwidth"),
      fmt::format("Optimizer step streams {:.0f} bytes per parameter at HBM bandwidth.",
                  o.optimizer_bytes_per_param),
      fmt::format("Memory-bound layer traffic: {:.0f} bytes per token and hidden unit (norms, "
                  "residuals), +{:.0f} with dropout.",
                  o.norm_residual_bytes_per_token_hidden, o.dropout_bytes_per_token_hidden),
      fmt::format("GEMM efficiency ({}, burst, outside samples): {}; sustained/burst compute "
                  "{}{}; wave quantization over the GPU's SMs.",
                  c.gemm_dtype, from(c.gemm_max_efficiency), from(c.sustained_compute_ratio),
                  ceiling.value > 0
                      ? fmt::format(", at most the {:.1f} TFLOP/s the GPU sustained ({})",
                                    ceiling.value / 1e12, origin_tag(ceiling))
                      : std::string()),
      c.gpu_compute_spread.value > 0
          ? fmt::format("Stragglers: GPUs differ by {:.2f}% in throughput (σ, {}); a step "
                        "waits for its slowest GPU, so compute on n GPUs takes 1 + σ·E[max of n "
                        "standard normals] as long.",
                        100 * c.gpu_compute_spread.value, origin_tag(c.gpu_compute_spread))
          : std::string("Stragglers: none (the profile gives no gpu_compute_spread)."),
      fmt::format("FP8 scaling recipe {}: quantization adds {:.0f}% to FP8 GEMM time ({}); the "
                  "LM head and MoE router run BF16 GEMMs (no Transformer Engine module runs "
                  "them: Megatron-Core's output layer and router).",
                  o.fp8_recipe, 100 * c.fp8_quantization_overhead.value,
                  origin_tag(c.fp8_quantization_overhead)),
      attention_kernel.empty()
          ? fmt::format("Fused attention efficiency: {}.", from(c.attention_efficiency))
          : fmt::format("Fused attention: the profile's {} samples of {} (by head dim, sequence "
                        "length and mask).",
                        attention_samples, attention_kernel),
      fmt::format("HBM bandwidth: {:.0f} GB/s ({}).", c.hbm_bytes_per_s.value / 1e9,
                  origin_tag(c.hbm_bytes_per_s)),
      fmt::format("Ring bus efficiency: innermost level {}, other levels {}.",
                  from(c.intra_node_bus_efficiency), from(c.inter_node_bus_efficiency)),
  };
}

}  // namespace meshplan
