// Runs independent pieces of work on a few threads. Each index runs exactly once, on whichever
// thread takes it next; callers write each result into its own slot and read them in index
// order, so what they produce never depends on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace meshplan {

// Calls work(0) … work(n − 1) on `threads` threads (the calling one among them; at least one,
// never more than n).
template <class Work>
void parallel_for(size_t n, int threads, const Work& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) work(i);
  };
  const size_t wanted = static_cast<size_t>(std::max(1, threads));
  const size_t helpers = n == 0 ? 0 : std::min(n, wanted) - 1;
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (size_t t = 0; t < helpers; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace meshplan
