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
    {"all_reduce", "allreduce", twice_ring_share, twice_ranks_less_one, true},
    {"all_gather", "allgather", ring_share, ranks_less_one, true},
    {"reduce_scatter", "reducescatter", ring_share, ranks_less_one, true},
    {"all_to_all", "alltoall", ring_share, ranks_less_one, true},
    {"send_recv", "sendrecv", one, one_step, true},
    {"broadcast", "broadcast", one, ranks_less_one, false},
    {"reduce", "reduce", one, ranks_less_one, false},
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
