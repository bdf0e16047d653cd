// Calibration profile: measured (or published) throughput the cost model reads (DESIGN.md §2).
// Provenance first, then raw samples, then fits. Every number the cost model uses comes from
// here or from a documented default in planner/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace meshplan {

struct Provenance {
  std::string how = "published";  // measured | imported | published
  std::string gpu;                // GPU name
  int64_t gpu_count = 0;
  int64_t nodes = 0;
  std::string driver, cuda, cublas, nccl;
  std::map<std::string, std::string> nccl_env;  // NCCL_* variables in effect
  std::string date;
  std::string command;
  std::vector<std::string> sources;  // papers, datasheets, logs the numbers come from
};

// One timed GEMM C[m×n] = A[m×k]·B[k×n].
struct GemmSample {
  int64_t m = 0, n = 0, k = 0;
  double flops_per_s = 0;            // best algorithm, median time
  double heuristic_flops_per_s = 0;  // cuBLASLt heuristic's first choice (0: not measured)
  double p95_time_s = 0;             // 0: not measured
  std::string status = "ok";         // ok | failed: <reason>
};

// Throughput of one dtype. Between samples the cost model interpolates; away from them it uses
// the fallback: time = flops / (max_efficiency · peak) + bytes moved / HBM bandwidth.
struct GemmTable {
  std::string dtype;          // bf16 | fp16 | fp8
  double max_efficiency = 0;  // best achieved / dense peak
  // Throughput of one compute-bound GEMM run back to back for many seconds (calibrate's
  // sustained run, its last quarter): the ceiling a power-limited GPU holds, whatever the shape's
  // burst rate. 0: not measured.
  double sustained_flops_per_s = 0;
  std::vector<GemmSample> samples;
};

struct CollectiveSample {
  int64_t bytes = 0;  // nccl-tests "size": the larger of send and receive buffer per rank
  double time_s = 0;  // out-of-place median
  double busbw_bytes_per_s = 0;
  std::string status = "ok";
};

// A collective on one network level and group size: samples, then the α-β fit
// t = α + bytes·factor/busbw (factor: nccl-tests bus factor).
struct CollectiveFit {
  std::string collective;  // all_reduce | all_gather | reduce_scatter | all_to_all | send_recv
  std::string level;       // network level name as in the cluster YAML (nvlink, ib, ...)
  int64_t group_size = 0;
  double latency_s = 0;
  double busbw_bytes_per_s = 0;
  double half_peak_bytes = 0;  // message size reaching half the peak bus bandwidth
  std::string source;
  std::vector<CollectiveSample> samples;
};

// Fused attention of one kernel at one head dim, sequence length and mask, in FlashAttention's
// FLOP convention (forward 4·batch·seq²·heads·head_dim, halved when causal; backward 2.5× the
// forward; flash-attention benchmarks/benchmark_flash_attention.py). A sample gives forward and
// backward throughput, or only their combined fwd+bwd figure (3.5× forward FLOPs over both
// times), or only the forward.
struct AttentionSample {
  // Which implementation was timed: cudnn | fa2 | fa3 (training's and serving's fallback), or a
  // serving engine's own prompt-attention kernel, trtllm | vllm | sglang, "-fp8kv" over an FP8
  // cache (serving/step_time.cc prompt_attention_kernels).
  std::string kernel;
  int64_t head_dim = 0, seq_len = 0;
  bool causal = true;
  double fwd_flops_per_s = 0, bwd_flops_per_s = 0, fwd_bwd_flops_per_s = 0;  // 0: not given
  std::string source;
};

// The inference engines' own all-reduce inside one NVLink domain (vLLM's custom all-reduce,
// TensorRT-LLM's ONESHOT/TWOSHOT, SGLang's): its one-shot kernel reads every peer's buffer,
// t = latency + (n − 1)·bytes / peer_read_bandwidth; its two-shot kernel (reduce-scatter, then
// all-gather) pays the latency twice and reads 2(n − 1)/n·bytes (serving/peer_all_reduce.h).
// Buffers of max_bytes or more go to NCCL (vLLM's and SGLang's custom all-reduce take buffers
// below their max_size of 8 MiB: should_custom_ar returns inp_size < max_size).
struct PeerAllReduceFit {
  double latency_s = 0;
  double peer_read_bytes_per_s = 0;  // 0: not known (every all-reduce is priced as NCCL's)
  double max_bytes = 0;              // the kernel takes buffers below this; 0: no limit
  std::string source;
  bool known() const { return peer_read_bytes_per_s > 0; }
};

struct CalibrationProfile {
  std::string name;
  Provenance provenance;
  std::map<std::string, GemmTable> gemm;   // by dtype
  double hbm_bytes_per_s = 0;              // achieved copy bandwidth (read + write counted)
  double attention_efficiency = 0;         // fused attention fwd+bwd achieved / dense peak
  std::vector<AttentionSample> attention;  // by kernel, head dim, sequence length, mask
  // Sustained over burst throughput of compute-bound kernels (GEMMs, attention) in a long run:
  // the clock a power-limited GPU holds under continuous load. GEMM max_efficiency and the
  // attention samples are burst figures (short benchmarks); the cost model multiplies them by
  // this (0: not known, taken as 1).
  double sustained_compute_ratio = 0;
  // Spread of sustained compute throughput between GPUs of one model (σ / mean): a step waits
  // for its slowest GPU (planner/straggler.h). 0: not known, no straggler.
  double gpu_compute_spread = 0;
  // FP8 GEMMs: extra time to quantize their operands, as a share of the quantized GEMM's own
  // time, by scaling recipe (delayed | current | block; absent: not measured, taken as 0).
  std::map<std::string, double> fp8_quantization_overhead;
  // Bus bandwidth / link bandwidth for levels without a measured fit: innermost level, others.
  double intra_node_bus_efficiency = 0;
  double inter_node_bus_efficiency = 0;
  std::vector<CollectiveFit> collectives;
  PeerAllReduceFit peer_all_reduce;
  std::vector<std::string> notes;  // e.g. "cpu backend: no collectives measured"
  // False when the calibration stopped early (SIGINT/SIGTERM): what was measured is kept, and
  // `missing` names what was not ("gemm fp8", "gemm bf16: 12 of 40 shapes", "collectives").
  // Written only when false, so a finished profile reads as before.
  bool complete = true;
  std::vector<std::string> missing;
};

const std::vector<std::string>& collective_names();
// nccl-tests bus-bandwidth factor for a collective over n ranks (doc/PERFORMANCE.md).
double bus_factor(const std::string& collective, int64_t n);

Result<CalibrationProfile> load_profile(const std::string& path);
Result<CalibrationProfile> parse_profile_yaml(const std::string& text, const std::string& file);
// YAML text; parse_profile_yaml(render_profile_yaml(p)) == p (doubles print round-trip exact).
std::string render_profile_yaml(const CalibrationProfile& p);
// Writes through a temporary file and rename, so readers never see half a profile.
// Returns an error diagnostic naming the file when the write fails.
Result<bool> write_profile_atomically(const CalibrationProfile& p, const std::string& path);

}  // namespace meshplan
