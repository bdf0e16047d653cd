// The CPU backend across processes: Eigen GEMMs and memory bandwidth as CpuBenchmarker measures
// them, plus MPI collectives timed the nccl-tests way, so the multi-process path of calibration
// (mpirun/srun, one process per rank, rank 0 writing the profile) runs end to end on any
// machine. Built as the module libmeshplan_mpi.so when MPI is found at configure time; the
// executable loads it (backend.cc) when `calibrate --backend cpu` is launched as several
// processes, so no other command links MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/cpu_benchmarker.h"
#include "core/result.h"

namespace meshplan::calibrate {

class MpiCpuBenchmarker : public CpuBenchmarker {
 public:
  // MPI_Init (unless the process already did), errors returned rather than fatal, the ranks'
  // hosts, and one communicator per group size (consecutive ranks, as NCCL's split).
  static Result<std::unique_ptr<MpiCpuBenchmarker>> create(int* argc, char*** argv);
  ~MpiCpuBenchmarker() override;  // frees the communicators; MPI_Finalize when it initialised
  MpiCpuBenchmarker(const MpiCpuBenchmarker&) = delete;
  MpiCpuBenchmarker& operator=(const MpiCpuBenchmarker&) = delete;

  Provenance describe() const override;
  // 2, 4, … dividing the world size, then the world (nccl-tests' and the CUDA backend's set).
  std::vector<int64_t> collective_group_sizes() const override;
  // "host" for a group inside one host (shared memory), "network" across hosts.
  std::string level_for_group(int64_t group_size) const override;
  int64_t max_collective_bytes(const std::string& collective) const override;
  // Checked once (inputs rank + 1, outputs counted on every rank, as nccl-tests -c 1), then
  // timed: each sample is one operation started after a barrier, the slowest rank's time.
  // Every rank returns the same numbers. CUDA-graph variants are refused.
  Result<CollectiveResult> collective(const CollectiveRequest& request) override;
  bool is_reporting_rank() const override { return rank_ == 0; }
  bool agree_to_stop(bool asked_here) override;

 private:
  MpiCpuBenchmarker() = default;
  MPI_Comm comm_for(int64_t group_size) const;

  bool initialised_here_ = false;
  int rank_ = 0, size_ = 1, nodes_ = 1, ranks_per_node_ = 1;
  bool hosts_in_blocks_ = true;  // ranks 0..k-1 on one host, k..2k-1 on the next, …
  std::string library_;          // MPI_Get_library_version, first line
  std::map<int64_t, MPI_Comm> groups_;
  std::vector<float> send_, recv_;
};

}  // namespace meshplan::calibrate
