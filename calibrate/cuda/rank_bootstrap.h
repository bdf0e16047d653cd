// Process layout of a calibration run: one process driving every local GPU (single node,
// ncclCommInitAll), or one process per GPU under mpirun/srun (MPI_Init, ncclGetUniqueId on
// rank 0 broadcast with MPI_Bcast, ncclCommInitRank). MPI is optional at build time
// (MESHPLAN_HAVE_MPI); without it a multi-process launch is refused with a clear error.
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

namespace meshplan::calibrate::gpu {

struct RankLayout {
  bool multi_process = false;
  int rank = 0, size = 1;  // process rank and count (1 in single-process mode)
  int local_rank = 0;      // rank among the processes on this host
  int nodes = 1;           // distinct hosts
  int ranks_per_node = 1;  // GPUs (ranks) per host
};

// Reads the launcher's environment (OMPI_COMM_WORLD_*, PMI_*/SLURM_*), calling MPI_Init when
// more than one process is launched. Throws GpuError when that needs MPI and it is absent.
RankLayout bootstrap(int* argc, char*** argv);
// Rank 0's id, broadcast to every process (multi-process only).
ncclUniqueId share_unique_id(const RankLayout& layout);
// MPI_Barrier / MPI_Finalize when multi-process; no-ops otherwise.
void barrier(const RankLayout& layout);
void finish(const RankLayout& layout);

}  // namespace meshplan::calibrate::gpu
