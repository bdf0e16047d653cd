// The input of the discrete-event engine: operations on streams, with dependencies.
// The simulator knows stages, operations and streams, not transformers (DESIGN.md §1): the
// caller decides what an operation is and how long it takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshplan::sim {

using OpId = int32_t;      // index into OperationGraph::ops(); -1 means "none"
using StreamId = int32_t;  // index into OperationGraph::streams()

// What an operation stands for. Only reporting (trace, Gantt, statistics) looks at it; the
// engine itself treats every kind alike.
enum class OpKind : uint8_t {
  forward,
  backward,         // full backward (input and weight gradients together)
  backward_input,   // B of a zero-bubble schedule: activation gradient only
  backward_weight,  // W of a zero-bubble schedule: weight gradient only
  recompute,        // activation recomputation, right before the backward that needs it
  p2p,              // pipeline point-to-point send
  dp_comm,          // data-parallel gradient reduction
  zero_gather,      // ZeRO-3 parameter all-gather
  optimizer,
  other,
};
inline constexpr size_t kOpKindCount = static_cast<size_t>(OpKind::other) + 1;
const char* to_string(OpKind k);
// One letter per kind for compact displays: F B B W R P D G O ?.
char kind_letter(OpKind k);
// True for kinds that occupy a compute stream (forward, backward*, recompute, optimizer).
bool is_compute(OpKind k);

struct OpTags {
  OpKind kind = OpKind::other;
  int stage = -1;        // pipeline stage (rank in the pipeline), -1 when not applicable
  int chunk = -1;        // model chunk in model order (0 .. pp·vpp-1), -1 when not applicable
  int micro_batch = -1;  // -1 when not applicable
};

struct Operation {
  std::string name;  // may be empty: display_name() then derives one from the tags
  StreamId stream = 0;
  double duration_s = 0;  // REQUIRES: finite and >= 0
  OpTags tags;
};

struct Stream {
  std::string name;  // e.g. "compute", "send-forward"
  int stage = -1;    // the pipeline stage (trace pid) the stream belongs to
};

struct Dependency {
  OpId op;            // may start only after ...
  OpId prerequisite;  // ... this one has finished
};

// A set of operations. Each stream runs one operation at a time, in the order the operations
// were added to it; an operation starts when its stream reaches it and all its dependencies
// have finished.
class OperationGraph {
 public:
  StreamId add_stream(std::string name, int stage);
  // REQUIRES: `stream` exists; duration_s finite and >= 0.
  OpId add_op(StreamId stream, double duration_s, OpTags tags, std::string name = {});
  // REQUIRES: both exist and differ. Duplicates are allowed (and harmless).
  void add_dependency(OpId op, OpId prerequisite);
  void reserve(int ops, int dependencies);

  int op_count() const { return static_cast<int>(ops_.size()); }
  int stream_count() const { return static_cast<int>(streams_.size()); }
  const Operation& op(OpId id) const { return ops_[id]; }
  const Stream& stream(StreamId id) const { return streams_[id]; }
  const std::vector<Operation>& ops() const { return ops_; }
  const std::vector<Stream>& streams() const { return streams_; }
  const std::vector<Dependency>& dependencies() const { return dependencies_; }

 private:
  std::vector<Operation> ops_;
  std::vector<Stream> streams_;
  std::vector<Dependency> dependencies_;
};

// The operation's name, or one derived from its tags: kind letter, then the micro-batch and
// ".c<chunk>" when set: "F3.c5" (forward, micro-batch 3, chunk 5), "D.c5", "O".
std::string display_name(const Operation& op);

}  // namespace meshplan::sim
