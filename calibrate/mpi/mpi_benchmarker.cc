#include "calibrate/mpi/mpi_benchmarker.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "calibrate/timing_stats.h"

namespace meshplan::calibrate {
namespace {

struct MpiError {
  std::string message;
};

// Throws MpiError naming the call and MPI's own text for the code (the world communicator
// returns errors instead of aborting: create() sets MPI_ERRORS_RETURN).
void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::strcpy(text, "unknown MPI error");
  throw MpiError{fmt::format("{} failed: {}", call, text)};
}
#define MP_MPI(call) check((call), #call)

// Runs `f`, turning an MpiError into the error of an `R` (a Result).
template <class R, class F>
R guarded(F&& f) {
  try {
    return f();
  } catch (const MpiError& e) {
    return Diagnostic{{}, "", "", e.message};
  }
}

// Per-rank buffers for one collective of `elems` floats ("size" in nccl-tests' sense) over
// `group` ranks, `per` = elems / group each.
struct Shape {
  std::string kind;
  int64_t group = 0, elems = 0, per = 0, sub_rank = 0;
  bool in_place = false;
};

int count_of(int64_t n) { return static_cast<int>(n); }  // REQUIRES: n ≤ INT_MAX (max bytes cap)

void launch(const Shape& s, MPI_Comm comm, float* send, float* recv) {
  const int n = count_of(s.elems), p = count_of(s.per);
  if (s.kind == "all_reduce") {
    MP_MPI(MPI_Allreduce(s.in_place ? MPI_IN_PLACE : send, s.in_place ? send : recv, n, MPI_FLOAT,
                         MPI_SUM, comm));
  } else if (s.kind == "all_gather") {
    // In place: this rank's part already sits at its offset of the output.
    MP_MPI(MPI_Allgather(s.in_place ? MPI_IN_PLACE : send, p, MPI_FLOAT, recv, p, MPI_FLOAT, comm));
  } else if (s.kind == "reduce_scatter") {
    // In place: the input is the whole send buffer, the result its first `per` floats.
    MP_MPI(MPI_Reduce_scatter_block(s.in_place ? MPI_IN_PLACE : send, s.in_place ? send : recv, p,
                                    MPI_FLOAT, MPI_SUM, comm));
  } else if (s.kind == "all_to_all") {
    MP_MPI(MPI_Alltoall(send, p, MPI_FLOAT, recv, p, MPI_FLOAT, comm));
  } else if (s.kind == "send_recv") {
    const int next = static_cast<int>((s.sub_rank + 1) % s.group);
    const int prev = static_cast<int>((s.sub_rank + s.group - 1) % s.group);
    MP_MPI(MPI_Sendrecv(send, n, MPI_FLOAT, next, 0, recv, n, MPI_FLOAT, prev, 0, comm,
                        MPI_STATUS_IGNORE));
  } else {
    throw MpiError{"no MPI benchmark for " + s.kind};
  }
}

// Wrong values of one run with inputs sub-rank + 1 (nccl-tests' -c 1).
int64_t mismatches(const Shape& s, const float* send, const float* recv) {
  const float sum = static_cast<float>(s.group * (s.group + 1) / 2);
  auto count = [](const float* from, int64_t n, auto expected) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += from[i] != expected(i);
    return bad;
  };
  if (s.kind == "all_reduce")
    return count(s.in_place ? send : recv, s.elems, [&](int64_t) { return sum; });
  if (s.kind == "reduce_scatter")
    return count(s.in_place ? send : recv, s.per, [&](int64_t) { return sum; });
  if (s.kind == "all_gather" || s.kind == "all_to_all")  // block i came from sub-rank i
    return count(recv, s.elems, [&](int64_t i) { return static_cast<float>(i / s.per + 1); });
  const int64_t prev = (s.sub_rank + s.group - 1) % s.group;  // send_recv
  return count(recv, s.elems, [&](int64_t) { return static_cast<float>(prev + 1); });
}

std::string first_line(const char* text) {
  std::string s(text);
  return s.substr(0, s.find_first_of(",\n"));
}

}  // namespace

Result<std::unique_ptr<MpiCpuBenchmarker>> MpiCpuBenchmarker::create(int* argc, char*** argv) {
  using Made = Result<std::unique_ptr<MpiCpuBenchmarker>>;
  return guarded<Made>([&]() -> Made {
    std::unique_ptr<MpiCpuBenchmarker> b(new MpiCpuBenchmarker());
    int already = 0;
    MP_MPI(MPI_Initialized(&already));
    if (!already) {
      MP_MPI(MPI_Init(argc, argv));
      b->initialised_here_ = true;
    }
    MP_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MP_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &b->rank_));
    MP_MPI(MPI_Comm_size(MPI_COMM_WORLD, &b->size_));
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int length = 0;
    MP_MPI(MPI_Get_library_version(version, &length));
    b->library_ = first_line(version);
    // Hosts of every rank: how many, how many ranks each, whether they come in blocks.
    constexpr int kHost = 256;
    char host[kHost] = {0};
    gethostname(host, kHost - 1);
    std::vector<char> all(static_cast<size_t>(b->size_) * kHost);
    MP_MPI(MPI_Allgather(host, kHost, MPI_CHAR, all.data(), kHost, MPI_CHAR, MPI_COMM_WORLD));
    std::vector<std::string> hosts;
    for (int r = 0; r < b->size_; ++r) hosts.emplace_back(&all[static_cast<size_t>(r) * kHost]);
    b->nodes_ = static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size());
    b->ranks_per_node_ = std::max(1, b->size_ / b->nodes_);
    for (int r = 0; r < b->size_; ++r)
      if (hosts[static_cast<size_t>(r)] != hosts[static_cast<size_t>(r - r % b->ranks_per_node_)])
        b->hosts_in_blocks_ = false;
    for (int64_t g : b->collective_group_sizes()) {
      if (g == b->size_) continue;
      MPI_Comm comm = MPI_COMM_NULL;
      MP_MPI(MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(b->rank_ / g),
                            static_cast<int>(b->rank_ % g), &comm));
      b->groups_[g] = comm;
    }
    return b;
  });
}

MpiCpuBenchmarker::~MpiCpuBenchmarker() {
  for (auto& [group, comm] : groups_) MPI_Comm_free(&comm);
  if (initialised_here_) MPI_Finalize();
}

Provenance MpiCpuBenchmarker::describe() const {
  Provenance p = CpuBenchmarker::describe();
  p.gpu_count = size_;
  p.nodes = nodes_;
  p.sources.push_back(fmt::format(
      "MPI collectives ({}; {} ranks on {} host(s)): float sum, each sample one operation after "
      "a barrier, the slowest rank's time; GEMMs and bandwidth are rank 0's, measured while "
      "every rank ran the same",
      library_, size_, nodes_));
  return p;
}

std::vector<int64_t> MpiCpuBenchmarker::collective_group_sizes() const {
  return collective_groups_of(size_);
}

std::string MpiCpuBenchmarker::level_for_group(int64_t group_size) const {
  return hosts_in_blocks_ && group_size <= ranks_per_node_ ? "host" : "network";
}

int64_t MpiCpuBenchmarker::max_collective_bytes(const std::string&) const {
  // Two buffers per rank; a quarter of the host's memory shared by its ranks, at most 256 MiB
  // (and within an int count of floats).
  const int64_t pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const int64_t share = pages > 0 && page > 0 ? pages / 8 * page / ranks_per_node_ : 0;
  return std::clamp<int64_t>(share, 0, int64_t{256} << 20);
}

MPI_Comm MpiCpuBenchmarker::comm_for(int64_t group_size) const {
  auto it = groups_.find(group_size);
  return it == groups_.end() ? MPI_COMM_WORLD : it->second;
}

Result<CollectiveResult> MpiCpuBenchmarker::collective(const CollectiveRequest& req) {
  return guarded<Result<CollectiveResult>>([&]() -> Result<CollectiveResult> {
    if (req.graph) return Diagnostic{{}, "", "", "the MPI backend has no CUDA graphs"};
    if (req.bytes > max_collective_bytes(req.collective))
      return Diagnostic{{}, "", "", "message larger than the benchmark buffers"};
    const auto sizes = collective_group_sizes();
    if (std::find(sizes.begin(), sizes.end(), req.group_size) == sizes.end())
      return Diagnostic{{}, "", "", fmt::format("no group of {} ranks", req.group_size)};
    Shape s{req.collective, req.group_size, 0, 0, rank_ % req.group_size, req.in_place};
    s.elems = collective_floats(s.kind, s.group, req.bytes);
    s.per = s.elems / s.group;
    if (s.in_place && !has_in_place_form(s.kind))
      return Diagnostic{{}, "", "", s.kind + " has no in-place form"};
    const MPI_Comm comm = comm_for(s.group);
    send_.assign(static_cast<size_t>(s.elems), static_cast<float>(s.sub_rank + 1));
    recv_.assign(static_cast<size_t>(s.elems), 0.0f);
    if (s.kind == "all_gather" && s.in_place)
      std::fill_n(recv_.begin() + s.sub_rank * s.per, s.per, static_cast<float>(s.sub_rank + 1));
    launch(s, comm, send_.data(), recv_.data());
    int64_t bad = mismatches(s, send_.data(), recv_.data()), bad_anywhere = 0;
    MP_MPI(MPI_Allreduce(&bad, &bad_anywhere, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    if (bad_anywhere > 0)
      return Diagnostic{
          {}, "", "", fmt::format("{} result check failed: {} wrong values", s.kind, bad_anywhere)};
    for (int i = 0; i < req.timing.warmup; ++i) launch(s, comm, send_.data(), recv_.data());
    std::vector<double> mine, slowest(static_cast<size_t>(req.timing.iterations));
    for (int i = 0; i < req.timing.iterations; ++i) {
      MP_MPI(MPI_Barrier(MPI_COMM_WORLD));
      const double t0 = MPI_Wtime();
      launch(s, comm, send_.data(), recv_.data());
      mine.push_back(MPI_Wtime() - t0);
    }
    MP_MPI(MPI_Allreduce(mine.data(), slowest.data(), req.timing.iterations, MPI_DOUBLE, MPI_MAX,
                         MPI_COMM_WORLD));
    const TimingStats st = summarize(slowest);
    return CollectiveResult{st.median_s, st.p95_s, ""};
  });
}

bool MpiCpuBenchmarker::agree_to_stop(bool asked_here) {
  int mine = asked_here ? 1 : 0, any = 0;
  // A failing agreement stops this rank; the others then fail at the next collective.
  if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD) != MPI_SUCCESS) return true;
  return any != 0;
}

}  // namespace meshplan::calibrate
