// The measuring side of calibration: one interface, a CPU implementation (always built) and a
// CUDA/cuBLASLt/NCCL implementation (built when CUDA is found). The calibration loop
// (calibration_run.h) only sees this interface, so tests drive it with a fake.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile.h"
#include "core/result.h"

namespace meshplan::calibrate {

// C[m×n] = A[m×k]·B[k×n]; `label` says where the shape came from ("grid", "fwd qkv", …).
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  std::string label;
  // A GEMM the frameworks run in BF16 whatever the job's precision (the LM head, the MoE
  // router: planner/layer_cost.h LayerCostContext::bf16_gemm), which the cost model never asks
  // at another dtype: measured in bf16 alone (measured_in).
  bool bf16_only = false;
  bool operator==(const GemmShape&) const = default;
};

// Whether a calibration measures `shape` in `dtype`.
inline bool measured_in(const GemmShape& shape, const std::string& dtype) {
  return !shape.bf16_only || dtype == "bf16";
}

// Warm-up runs are untimed; each timed iteration is one sample for the median and p95.
// `budget_s` (> 0) caps the time one measurement spends (a GEMM shape: over all its algorithms):
// a kernel that takes longer per run gets fewer iterations (at least 3) and warm-ups (at least
// 1), and a GEMM tries further algorithms only while the budget lasts. `max_algorithms` (> 0)
// limits how many of the library's candidates a GEMM times (heuristic order; its first always).
struct TimingOptions {
  int warmup = 5;
  int iterations = 20;
  double budget_s = 0;
  int max_algorithms = 0;
};

struct GemmResult {
  double median_s = 0;            // best algorithm
  double p95_s = 0;               // best algorithm
  double heuristic_median_s = 0;  // the heuristic's first choice; 0 when not measured
  int algorithms_tried = 0;
};

// One GEMM run back to back for a while (a power-limited GPU lowers its clock under load).
// Throughputs in FLOP/s: over the first second, and over the last quarter of the run.
struct SustainedResult {
  double burst_flops_per_s = 0;
  double sustained_flops_per_s = 0;
  double seconds = 0;                      // wall time the GEMM ran
  std::vector<double> window_flops_per_s;  // every timed window, in order (raw samples)
};

struct HbmResult {
  double copy_bytes_per_s = 0;   // device-to-device copy, bytes read + written
  double triad_bytes_per_s = 0;  // a[i] = b[i] + s·c[i], 3 arrays moved; 0 when not measured
};

struct CollectiveRequest {
  std::string collective;  // one of collective_names()
  int64_t group_size = 0;  // ranks taking part; REQUIRES: one of collective_group_sizes()
  int64_t bytes = 0;       // nccl-tests "size" (see core/profile.h CollectiveSample)
  bool in_place = false;
  bool graph = false;  // launched through a captured CUDA graph
  TimingOptions timing;
};

struct CollectiveResult {
  double median_s = 0;
  double p95_s = 0;
  std::string algorithm;  // NCCL's algorithm/protocol when it reported one, else empty
};

// The group sizes collectives are measured on among `world` ranks: 2, 4, 8, … dividing it,
// then the whole world (consecutive ranks per group, as ncclCommSplit and MPI_Comm_split
// form them); empty for one rank.
std::vector<int64_t> collective_groups_of(int64_t world);
// Floats in a rank's nccl-tests "size" buffer of `bytes` for `collective` over `group` ranks:
// bytes / 4 for all-reduce and send/recv; for the others a multiple of the group, at least one
// float per rank. REQUIRES: group ≥ 1.
int64_t collective_floats(const std::string& collective, int64_t group, int64_t bytes);
// Whether `collective` has an in-place form (nccl-tests reports all-to-all and send/recv
// in-place as N/A).
bool has_in_place_form(const std::string& collective);

class Benchmarker {
 public:
  virtual ~Benchmarker() = default;

  // Device and software versions for the profile's provenance (how = measured).
  virtual Provenance describe() const = 0;
  // GEMM dtypes this backend can run, in the order to measure them.
  virtual std::vector<std::string> gemm_dtypes() const = 0;
  // Dense peak FLOP/s of `dtype` on this device (for efficiencies); 0 when unknown.
  virtual double peak_flops(const std::string& dtype) const = 0;
  virtual Result<GemmResult> gemm(const GemmShape& shape, const std::string& dtype,
                                  const TimingOptions& timing) = 0;
  // Runs `shape` back to back for about `seconds`; backends without it say so in an error.
  virtual Result<SustainedResult> sustained_gemm(const GemmShape& shape, const std::string& dtype,
                                                 double seconds) {
    (void)shape, (void)dtype, (void)seconds;
    return Diagnostic{{}, "", "", "this backend does not measure sustained throughput"};
  }
  // `bytes`: size of one buffer; the backend may use less when memory is short.
  virtual Result<HbmResult> hbm(int64_t bytes, const TimingOptions& timing) = 0;

  // Group sizes collectives can be measured on; empty when the backend has no collectives.
  virtual std::vector<int64_t> collective_group_sizes() const = 0;
  // Network level a group of `group_size` consecutive ranks spans (cluster YAML names).
  virtual std::string level_for_group(int64_t group_size) const = 0;
  // Largest message the backend can allocate for `collective` (free-memory cap).
  virtual int64_t max_collective_bytes(const std::string& collective) const = 0;
  // Every rank of a multi-process run must make the same sequence of calls.
  virtual Result<CollectiveResult> collective(const CollectiveRequest& request) = 0;
  // Whether collective() takes `graph` requests (launches through a captured CUDA graph).
  virtual bool captures_graphs() const { return false; }

  // False on ranks other than 0 of a multi-process run: only rank 0 writes the profile.
  virtual bool is_reporting_rank() const { return true; }
  // Whether the run stops before its next measurement, given whether this process was asked
  // to (a signal). Every rank of a multi-process run must stop at the same measurement, so
  // there it is one collective answering "did any rank ask?"; alone, `asked_here`.
  virtual bool agree_to_stop(bool asked_here) { return asked_here; }
};

}  // namespace meshplan::calibrate
