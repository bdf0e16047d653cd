// Collectives as table entries: one row per collective with its profile name, its nccl-tests
// name, the nccl-tests bus-bandwidth factor (busbw = algbw · factor, nccl-tests
// doc/PERFORMANCE.md) and the latency steps of its ring algorithm. Profiles, calibration and
// the planner's collective model all read this table.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace meshplan {

// The collectives the planner times, in kCollectives order.
enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
constexpr int kCollectiveCount = 5;

struct CollectiveInfo {
  const char* name;             // profile key ("all_reduce")
  const char* nccl_tests_name;  // as in nccl-tests binaries and logs ("allreduce")
  // Bus bytes moved per algorithm byte over n ranks: 2(n−1)/n for all-reduce, (n−1)/n for
  // all-gather, reduce-scatter and all-to-all, 1 for send/recv, broadcast and reduce.
  double (*bus_factor)(double n);
  // Sequential link latencies of the ring algorithm over n ranks: 2(n−1) for all-reduce
  // (reduce-scatter then all-gather), n−1 for the other ring collectives, 1 for send/recv.
  double (*ring_steps)(int64_t n);
  bool calibrated;  // measured by `meshplan calibrate` by default
  // HBM bytes a rank's NCCL kernels read and write per bus byte (ring algorithm, Simple
  // protocol): all-gather writes what arrives and reads what it forwards (2); reduce-scatter
  // reads what arrives and its own chunk and writes the sum (3); all-reduce is one of each
  // (2.5 per bus byte on average); all-to-all and send/recv read and write each byte (2).
  double hbm_bytes_per_bus_byte;
};

// All collectives profiles may hold: the planner's five (indexed by Collective), then
// broadcast and reduce (imported from nccl-tests logs only).
std::span<const CollectiveInfo> collectives();
const CollectiveInfo& collective_info(Collective c);
// nullptr for a name not in the table.
const CollectiveInfo* find_collective(std::string_view name);

}  // namespace meshplan
