#include "simulator/pipeline_graph.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace meshplan::sim {
namespace {

Diagnostic problem_error(const std::string& field, const std::string& value,
                         const std::string& rule) {
  return Diagnostic{{"pipeline problem", 0, 0, ""}, field, value, rule};
}

bool valid_cost(double s) { return std::isfinite(s) && s >= 0; }

std::vector<Diagnostic> check_problem(const PipelineProblem& p) {
  std::vector<Diagnostic> errors;
  const PipelineShape shape{std::max(p.pp, 1), std::max(p.vpp, 1), p.schedule};
  const auto want = static_cast<size_t>(pipeline_placement(shape).chunks);
  if (p.chunks.size() != want)
    errors.push_back(problem_error("chunks", std::to_string(p.chunks.size()) + " entries",
                                   "must have one entry per model chunk (" + std::to_string(want) +
                                       ": pp·vpp, or pp for dualpipe)"));
  auto check = [&](const std::string& field, double v) {
    if (!valid_cost(v))
      errors.push_back(problem_error(field, std::to_string(v), "must be finite and >= 0"));
  };
  check("p2p_s", p.p2p_s);
  check("optimizer_s", p.optimizer_s);
  for (size_t c = 0; c < p.chunks.size(); ++c) {
    const ChunkCosts& k = p.chunks[c];
    const std::string at = "chunks[" + std::to_string(c) + "].";
    check(at + "forward_s", k.forward_s);
    check(at + "backward_input_s", k.backward_input_s);
    check(at + "backward_weight_s", k.backward_weight_s);
    check(at + "recompute_s", k.recompute_s);
    check(at + "dp_grad_sync_s", k.dp_grad_sync_s);
    check(at + "zero3_gather_s", k.zero3_gather_s);
  }
  return errors;
}

// Adds the operations of each stage in its schedule order, then links the stages.
class Builder {
 public:
  Builder(const PipelineProblem& p, PipelineGraph& out)
      : p_(p),
        out_(out),
        g_(out.graph),
        m_(p.micro_batches),
        chunks_(static_cast<int>(out.order.placement.chunks)) {
    const size_t n = static_cast<size_t>(chunks_) * m_;
    fwd_.assign(n, -1);
    recv_grad_.assign(n, -1);
    bwd_.assign(n, -1);
    send_fwd_.assign(n, -1);
    send_bwd_.assign(n, -1);
  }

  void build() {
    g_.reserve(chunks_ * m_ * 5 + p_.pp * 2, chunks_ * m_ * 6);
    for (int s = 0; s < p_.pp; ++s)
      for (int k = 0; k < kStreamsPerStage; ++k)
        g_.add_stream(to_string(static_cast<StageStream>(k)), s);
    for (int s = 0; s < p_.pp; ++s) add_stage(s);
    link_stages();
  }

 private:
  int index(int chunk, int mb) const { return chunk * m_ + mb; }
  bool sends() const { return p_.p2p_s > 0 && p_.pp > 1; }
  // Whether chunk `next` of micro-batch `mb` runs on another stage than `stage` (a V's turn
  // stays on one rank: no transfer).
  bool crosses(int stage, int next, int mb) const {
    return out_.order.placement.holder(next, mb, m_) != stage;
  }

  OpId add(int stage, StageStream s, double dur, OpKind kind, int chunk, int mb) {
    return g_.add_op(stream_id(stage, s), dur, OpTags{kind, stage, chunk, mb});
  }

  // ZeRO-3: the gather for the n-th parameter-using operation of a stage may start once the
  // (n-2)-th has finished, i.e. while the (n-1)-th runs (one-ahead prefetch). Returns -1
  // when the chunk needs no gather.
  OpId gather(int stage, int chunk, int mb) {
    const double dur = p_.chunks[chunk].zero3_gather_s;
    if (dur <= 0) return -1;
    const OpId g = add(stage, StageStream::zero3, dur, OpKind::zero_gather, chunk, mb);
    const size_t n = consumers_.size();
    if (n >= 2) g_.add_dependency(g, consumers_[n - 2]);
    return g;
  }
  void consume(OpId op, OpId gather_op) {
    if (gather_op >= 0) g_.add_dependency(op, gather_op);
    consumers_.push_back(op);
  }

  OpId add_forward(int stage, int chunk, int mb) {
    const OpId g = gather(stage, chunk, mb);
    const OpId f =
        add(stage, StageStream::compute, p_.chunks[chunk].forward_s, OpKind::forward, chunk, mb);
    consume(f, g);
    fwd_[index(chunk, mb)] = f;
    if (sends() && chunk + 1 < chunks_ && crosses(stage, chunk + 1, mb)) {
      const OpId s = add(stage, StageStream::send_forward, p_.p2p_s, OpKind::p2p, chunk, mb);
      g_.add_dependency(s, f);
      send_fwd_[index(chunk, mb)] = s;
    }
    return f;
  }

  OpId add_backward(int stage, int chunk, int mb) {
    const ChunkCosts& c = p_.chunks[chunk];
    const OpId g = gather(stage, chunk, mb);
    OpId first = -1;
    if (c.recompute_s > 0)
      first = add(stage, StageStream::compute, c.recompute_s, OpKind::recompute, chunk, mb);
    const bool split = out_.order.splits_backward;
    const OpId b = add(stage, StageStream::compute,
                       split ? c.backward_input_s : c.backward_input_s + c.backward_weight_s,
                       split ? OpKind::backward_input : OpKind::backward, chunk, mb);
    if (first < 0) first = b;
    consume(first, g);
    recv_grad_[index(chunk, mb)] = first;
    bwd_[index(chunk, mb)] = b;
    if (sends() && chunk > 0 && crosses(stage, chunk - 1, mb)) {
      const OpId s = add(stage, StageStream::send_backward, p_.p2p_s, OpKind::p2p, chunk, mb);
      g_.add_dependency(s, b);
      send_bwd_[index(chunk, mb)] = s;
    }
    return b;
  }

  void add_stage(int stage) {
    const std::vector<Pass>& passes = out_.order.passes[stage];
    const PassKind last_kind = out_.order.splits_backward ? PassKind::weight : PassKind::backward;
    std::vector<size_t> last_backward(out_.order.placement.stage_chunks[stage].size(), 0);
    for (size_t i = 0; i < passes.size(); ++i)
      if (passes[i].kind == last_kind) last_backward[passes[i].virtual_chunk] = i;
    consumers_.clear();
    std::vector<OpId> reductions;
    for (size_t i = 0; i < passes.size(); ++i) {
      const Pass& pass = passes[i];
      const auto chunk = static_cast<int>(
          out_.order.placement
              .stage_chunks[static_cast<size_t>(stage)][static_cast<size_t>(pass.virtual_chunk)]);
      OpId op = -1;
      if (pass.kind == PassKind::forward) op = add_forward(stage, chunk, pass.micro_batch);
      if (pass.kind == PassKind::backward) op = add_backward(stage, chunk, pass.micro_batch);
      if (pass.kind == PassKind::weight)
        op = add(stage, StageStream::compute, p_.chunks[chunk].backward_weight_s,
                 OpKind::backward_weight, chunk, pass.micro_batch);
      const double sync = p_.chunks[chunk].dp_grad_sync_s;
      if (i == last_backward[pass.virtual_chunk] && sync > 0) {
        const OpId d = add(stage, StageStream::dp, sync, OpKind::dp_comm, chunk, -1);
        g_.add_dependency(d, op);
        reductions.push_back(d);
      }
    }
    const OpId o = add(stage, StageStream::compute, p_.optimizer_s, OpKind::optimizer, -1, -1);
    for (OpId d : reductions) g_.add_dependency(o, d);
  }

  // Forward of chunk c waits for chunk c-1's activation; the backward (its recompute first)
  // of chunk c waits for chunk c+1's gradient. Through the send when there is one.
  void link_stages() {
    for (int c = 0; c < chunks_; ++c) {
      for (int mb = 0; mb < m_; ++mb) {
        if (c > 0) {
          const int prev = index(c - 1, mb);
          g_.add_dependency(fwd_[index(c, mb)],
                            send_fwd_[prev] >= 0 ? send_fwd_[prev] : fwd_[prev]);
        }
        if (c + 1 < chunks_) {
          const int next = index(c + 1, mb);
          g_.add_dependency(recv_grad_[index(c, mb)],
                            send_bwd_[next] >= 0 ? send_bwd_[next] : bwd_[next]);
        }
      }
    }
  }

  const PipelineProblem& p_;
  PipelineGraph& out_;
  OperationGraph& g_;
  const int m_;
  const int chunks_;
  std::vector<OpId> fwd_, recv_grad_, bwd_, send_fwd_, send_bwd_;  // by index(chunk, mb)
  std::vector<OpId> consumers_;  // this stage's parameter-using operations so far
};

}  // namespace

const char* to_string(StageStream s) {
  switch (s) {
    case StageStream::compute:
      return "compute";
    case StageStream::send_forward:
      return "send-forward";
    case StageStream::send_backward:
      return "send-backward";
    case StageStream::dp:
      return "dp";
    case StageStream::zero3:
      return "zero3-gather";
  }
  return "?";
}

Result<PipelineGraph> build_pipeline_graph(const PipelineProblem& problem) {
  Result<PipelineOrder> order =
      make_pipeline_order(problem.schedule, problem.pp, problem.vpp, problem.micro_batches);
  if (!order.ok()) return order.errors();
  std::vector<Diagnostic> errors = check_problem(problem);
  if (!errors.empty()) return errors;
  PipelineGraph out{std::move(order).value(), {}};
  Builder(problem, out).build();
  return out;
}

}  // namespace meshplan::sim
