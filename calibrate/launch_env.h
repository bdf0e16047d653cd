// How many processes the launcher started: one home for reading mpirun's and Slurm's
// environment, used by the backend chooser (backend.h) and the CUDA module's rank bootstrap.
#pragma once

namespace meshplan::calibrate {

// The process count a parallel launcher announced to this process: OMPI_COMM_WORLD_SIZE
// (Open MPI's mpirun), PMI_SIZE / PMIX_SIZE (MPICH, Slurm's srun with PMI-2 or PMIx) or
// SLURM_STEP_NUM_TASKS (srun). 1 when none is set or none parses as a positive count.
// SLURM_NTASKS is not read: an sbatch script sees the allocation's task count while it runs
// as one process.
int launched_processes();

}  // namespace meshplan::calibrate
