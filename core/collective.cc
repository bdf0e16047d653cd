#include "core/collective.h"

namespace meshplan {
namespace {

double ring_share(double n) { return (n - 1) / n; }
double twice_ring_share(double n) { return 2.0 * (n - 1) / n; }
double one(double) { return 1.0; }
double ranks_less_one(int64_t n) { return static_cast<double>(n - 1); }
double twice_ranks_less_one(int64_t n) { return 2.0 * static_cast<double>(n - 1); }
double one_step(int64_t) { return 1.0; }

constexpr CollectiveInfo kCollectives[] = {
    {"all_reduce", "allreduce", twice_ring_share, twice_ranks_less_one, true, 2.5},
    {"all_gather", "allgather", ring_share, ranks_less_one, true, 2},
    {"reduce_scatter", "reducescatter", ring_share, ranks_less_one, true, 3},
    {"all_to_all", "alltoall", ring_share, ranks_less_one, true, 2},
    {"send_recv", "sendrecv", one, one_step, true, 2},
    {"broadcast", "broadcast", one, ranks_less_one, false, 2},
    {"reduce", "reduce", one, ranks_less_one, false, 3},
};

}  // namespace

std::span<const CollectiveInfo> collectives() { return kCollectives; }

const CollectiveInfo& collective_info(Collective c) { return kCollectives[static_cast<int>(c)]; }

const CollectiveInfo* find_collective(std::string_view name) {
  for (const CollectiveInfo& c : kCollectives)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace meshplan
