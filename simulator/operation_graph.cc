#include "simulator/operation_graph.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>

namespace meshplan::sim {

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::forward:
      return "forward";
    case OpKind::backward:
      return "backward";
    case OpKind::backward_input:
      return "backward_input";
    case OpKind::backward_weight:
      return "backward_weight";
    case OpKind::recompute:
      return "recompute";
    case OpKind::p2p:
      return "p2p";
    case OpKind::dp_comm:
      return "dp_comm";
    case OpKind::zero_gather:
      return "zero_gather";
    case OpKind::optimizer:
      return "optimizer";
    case OpKind::other:
      return "other";
  }
  return "other";
}

char kind_letter(OpKind k) {
  switch (k) {
    case OpKind::forward:
      return 'F';
    case OpKind::backward:
      return 'B';
    case OpKind::backward_input:
      return 'B';
    case OpKind::backward_weight:
      return 'W';
    case OpKind::recompute:
      return 'R';
    case OpKind::p2p:
      return 'P';
    case OpKind::dp_comm:
      return 'D';
    case OpKind::zero_gather:
      return 'G';
    case OpKind::optimizer:
      return 'O';
    case OpKind::other:
      return '?';
  }
  return '?';
}

bool is_compute(OpKind k) {
  switch (k) {
    case OpKind::forward:
    case OpKind::backward:
    case OpKind::backward_input:
    case OpKind::backward_weight:
    case OpKind::recompute:
    case OpKind::optimizer:
      return true;
    default:
      return false;
  }
}

StreamId OperationGraph::add_stream(std::string name, int stage) {
  streams_.push_back(Stream{std::move(name), stage});
  return static_cast<StreamId>(streams_.size() - 1);
}

OpId OperationGraph::add_op(StreamId stream, double duration_s, OpTags tags, std::string name) {
  assert(stream >= 0 && stream < stream_count());
  assert(std::isfinite(duration_s) && duration_s >= 0);
  ops_.push_back(Operation{std::move(name), stream, duration_s, tags});
  return static_cast<OpId>(ops_.size() - 1);
}

void OperationGraph::add_dependency(OpId op, OpId prerequisite) {
  assert(op >= 0 && op < op_count() && prerequisite >= 0 && prerequisite < op_count());
  assert(op != prerequisite);
  dependencies_.push_back(Dependency{op, prerequisite});
}

void OperationGraph::reserve(int ops, int dependencies) {
  ops_.reserve(ops);
  dependencies_.reserve(dependencies);
}

std::string display_name(const Operation& op) {
  if (!op.name.empty()) return op.name;
  // Written into one buffer, made a string once (a trace asks for every operation's name).
  std::array<char, 64> text{};  // a letter, two ints of at most 11 characters and ".c"
  char* at = text.data();
  char* const end = text.data() + text.size();
  *at++ = kind_letter(op.tags.kind);
  if (op.tags.micro_batch >= 0) at = std::to_chars(at, end, op.tags.micro_batch).ptr;
  if (op.tags.chunk >= 0) {
    *at++ = '.';
    *at++ = 'c';
    at = std::to_chars(at, end, op.tags.chunk).ptr;
  }
  return std::string(text.data(), at);
}

}  // namespace meshplan::sim
