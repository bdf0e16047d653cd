#include "serving/peer_all_reduce.h"

#include <algorithm>

namespace meshplan::serving {

double peer_all_reduce_s(const PeerAllReduceFit& fit, int64_t ranks, double bytes) {
  const double peers = static_cast<double>(ranks - 1);
  const double one_shot = fit.latency_s + peers * bytes / fit.peer_read_bytes_per_s;
  const double two_shot = 2 * fit.latency_s + 2 * peers / static_cast<double>(ranks) * bytes /
                                                  fit.peer_read_bytes_per_s;
  return std::min(one_shot, two_shot);
}

bool peer_all_reduce_serves(int64_t ranks) { return ranks >= 2 && ranks <= 8 && ranks % 2 == 0; }

}  // namespace meshplan::serving
