#include "simulator/event_engine.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace meshplan::sim {
namespace {

struct Event {
  double time_s;
  uint64_t seq;
  OpId op;
};

// Min-heap order on (time, seq): std::push_heap builds a max-heap, so compare "later".
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time_s != b.time_s ? a.time_s > b.time_s : a.seq > b.seq;
  }
};

// Compressed adjacency: the items of row r are items[offset[r] .. offset[r+1]).
struct Csr {
  std::vector<int32_t> offset;
  std::vector<OpId> items;
};

Csr successors(const OperationGraph& g, std::vector<int32_t>& indegree) {
  Csr c;
  c.offset.assign(g.op_count() + 1, 0);
  indegree.assign(g.op_count(), 0);
  for (const Dependency& d : g.dependencies()) {
    ++c.offset[d.prerequisite + 1];
    ++indegree[d.op];
  }
  for (int i = 0; i < g.op_count(); ++i) c.offset[i + 1] += c.offset[i];
  c.items.resize(g.dependencies().size());
  std::vector<int32_t> fill(c.offset.begin(), c.offset.end() - 1);
  for (const Dependency& d : g.dependencies()) c.items[fill[d.prerequisite]++] = d.op;
  return c;
}

Csr stream_queues(const OperationGraph& g) {
  Csr c;
  c.offset.assign(g.stream_count() + 1, 0);
  for (const Operation& op : g.ops()) ++c.offset[op.stream + 1];
  for (int i = 0; i < g.stream_count(); ++i) c.offset[i + 1] += c.offset[i];
  c.items.resize(g.op_count());
  std::vector<int32_t> fill(c.offset.begin(), c.offset.end() - 1);
  for (OpId i = 0; i < g.op_count(); ++i) c.items[fill[g.op(i).stream]++] = i;
  return c;
}

class Engine {
 public:
  explicit Engine(const OperationGraph& g)
      : g_(g), succ_(successors(g, indegree_)), queue_(stream_queues(g)) {
    head_.assign(queue_.offset.begin(), queue_.offset.end() - 1);
    busy_.assign(g.stream_count(), 0);
    started_.assign(g.op_count(), 0);
    t_.start_s.assign(g.op_count(), 0);
    t_.end_s.assign(g.op_count(), 0);
    t_.cause.assign(g.op_count(), -1);
    heap_.reserve(g.stream_count() + 16);
  }

  // Returns the number of operations that completed.
  int run() {
    for (StreamId s = 0; s < g_.stream_count(); ++s) try_start_head(s, -1);
    int done = 0;
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      const Event e = heap_.back();
      heap_.pop_back();
      assert(e.time_s >= now_ && "event time went backwards");
      now_ = e.time_s;
      ++done;
      complete(e.op);
    }
    t_.events = done;
    return done;
  }

  Timeline take() { return std::move(t_); }
  // The first operation (lowest id) that never ran; REQUIRES: run() left some.
  OpId first_stuck() const {
    for (OpId i = 0; i < g_.op_count(); ++i)
      if (!started_[i]) return i;
    return -1;
  }

 private:
  void try_start_head(StreamId s, OpId cause) {
    if (busy_[s] || head_[s] == queue_.offset[s + 1]) return;
    const OpId op = queue_.items[head_[s]];
    if (indegree_[op] != 0) return;
    busy_[s] = 1;
    started_[op] = 1;
    const double end = now_ + g_.op(op).duration_s;
    t_.start_s[op] = now_;
    t_.end_s[op] = end;
    t_.cause[op] = cause;
    t_.makespan_s = std::max(t_.makespan_s, end);
    heap_.push_back(Event{end, seq_++, op});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }

  void complete(OpId op) {
    const StreamId s = g_.op(op).stream;
    busy_[s] = 0;
    ++head_[s];
    for (int32_t k = succ_.offset[op]; k < succ_.offset[op + 1]; ++k) {
      const OpId next = succ_.items[k];
      if (--indegree_[next] == 0) try_start_head(g_.op(next).stream, op);
    }
    try_start_head(s, op);
  }

  const OperationGraph& g_;
  std::vector<int32_t> indegree_;
  Csr succ_;
  Csr queue_;
  std::vector<int32_t> head_;  // per stream: position in queue_.items of the next operation
  std::vector<uint8_t> busy_;
  std::vector<uint8_t> started_;
  std::vector<Event> heap_;
  Timeline t_;
  double now_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace

Result<Timeline> simulate(const OperationGraph& graph) {
  Engine engine(graph);
  const int done = engine.run();
  if (done != graph.op_count()) {
    const OpId stuck = engine.first_stuck();
    const Operation& op = graph.op(stuck);
    return Diagnostic{
        {"simulator", 0, 0, ""},
        "operation graph",
        display_name(op) + " on stream '" + graph.stream(op.stream).name + "' of stage " +
            std::to_string(graph.stream(op.stream).stage),
        "deadlock: " + std::to_string(graph.op_count() - done) + " of " +
            std::to_string(graph.op_count()) +
            " operations never start (a dependency cycle, or a dependency against a stream's "
            "order)"};
  }
  return engine.take();
}

std::vector<OpId> critical_path(const Timeline& timeline) {
  std::vector<OpId> path;
  OpId last = -1;
  for (OpId i = 0; i < static_cast<OpId>(timeline.end_s.size()); ++i)
    if (last < 0 || timeline.end_s[i] > timeline.end_s[last]) last = i;
  for (OpId op = last; op >= 0; op = timeline.cause[op]) path.push_back(op);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace meshplan::sim
