#include "calibrate/cuda/rank_bootstrap.h"

#include <unistd.h>

#include <cstring>
#include <set>

#include "calibrate/cuda/gpu_check.h"
#include "calibrate/launch_env.h"
#ifdef MESHPLAN_HAVE_MPI
#include <mpi.h>
#endif

namespace meshplan::calibrate::gpu {

#ifdef MESHPLAN_HAVE_MPI
#define MP_MPI(call)                                                                \
  do {                                                                              \
    int mp_rc_ = (call);                                                            \
    if (mp_rc_ != MPI_SUCCESS)                                                      \
      throw GpuError{gpu_error_text(__FILE__, __LINE__, #call, "MPI call failed")}; \
  } while (0)

RankLayout bootstrap(int* argc, char*** argv) {
  RankLayout l;
  if (launched_processes() <= 1) return l;
  MP_MPI(MPI_Init(argc, argv));
  l.multi_process = true;
  MP_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &l.rank));
  MP_MPI(MPI_Comm_size(MPI_COMM_WORLD, &l.size));
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::vector<char> all(static_cast<size_t>(l.size) * 256);
  MP_MPI(MPI_Allgather(host, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD));
  std::set<std::string> hosts;
  for (int r = 0; r < l.size; ++r) {
    std::string h(&all[static_cast<size_t>(r) * 256]);
    if (r < l.rank && h == host) ++l.local_rank;
    hosts.insert(h);
  }
  l.nodes = static_cast<int>(hosts.size());
  l.ranks_per_node = l.size / l.nodes;
  return l;
}

ncclUniqueId share_unique_id(const RankLayout& l) {
  ncclUniqueId id;
  if (l.rank == 0) MP_NCCL(ncclGetUniqueId(&id));
  MP_MPI(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
  return id;
}

void barrier(const RankLayout& l) {
  if (l.multi_process) MP_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

void finish(const RankLayout& l) {
  if (l.multi_process) MPI_Finalize();
}
#else
RankLayout bootstrap(int*, char***) {
  if (launched_processes() > 1)
    throw GpuError{
        "launched as several processes, but this meshplan was built without MPI; "
        "install libopenmpi-dev and rebuild, or run one process per node"};
  return RankLayout{};
}

ncclUniqueId share_unique_id(const RankLayout&) {
  ncclUniqueId id;
  MP_NCCL(ncclGetUniqueId(&id));
  return id;
}

void barrier(const RankLayout&) {}
void finish(const RankLayout&) {}
#endif

}  // namespace meshplan::calibrate::gpu
