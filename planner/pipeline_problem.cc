// Layout → the simulator's PipelineProblem: per-chunk forward, backward (input and weight
// gradients), recompute, gradient-reduction and ZeRO-3 gather times from the same layer costs
// the analytic model uses.
#include <algorithm>

#include "core/pipeline_placement.h"
#include "planner/cost_model.h"
#include "planner/param_count.h"
#include "planner/zero_sharding.h"

namespace meshplan {

sim::PipelineProblem CostModel::pipeline_problem(const Layout& l) {
  const Shape& shape = shape_of(l);
  // The compute of every chunk at the slowest GPU's pace, as stage_timing prices it.
  LayerPair c = shape.costs;
  const double slow = compute_slowdown(l.gpus());
  for (LayerCost* layer : {&c.dense, &c.moe}) {
    layer->forward_s *= slow;
    layer->backward_s *= slow;
    layer->backward_weight_s *= slow;
    layer->attention_forward_s *= slow;
    for (double& t : layer->module_forward_s) t *= slow;
  }
  c.head.forward_s *= slow;
  c.head.backward_s *= slow;
  const std::vector<StageParams>& params = params_of(l);
  const std::vector<int64_t> bounds = chunk_boundaries(model_, l);
  sim::PipelineProblem p;
  p.pp = static_cast<int>(l.pp);
  p.vpp = static_cast<int>(l.vpp);
  p.micro_batches = static_cast<int>(training_.global_batch / (l.dp * l.mbs));
  p.schedule = l.pp == 1 ? Schedule::one_f_one_b : l.schedule;
  Estimate analytic = evaluate(l, /*detail=*/true);
  p.p2p_s = analytic.p2p_s;
  std::vector<int64_t> full_left = full_recompute_budget(model_, l);
  const HeadCost head = c.head;
  // DualPipe's two copies of a chunk cost the same; the first copy's rank stands for both.
  const PipelinePlacement placement = pipeline_placement(l.pipeline());
  for (size_t ch = 0; ch + 1 < bounds.size(); ++ch) {
    const auto stage =
        static_cast<size_t>(placement.holder(static_cast<int64_t>(ch), 0, p.micro_batches));
    const int64_t moe = model_.moe_layers_in(bounds[ch], bounds[ch + 1]);
    const int64_t dense = bounds[ch + 1] - bounds[ch] - moe;
    int64_t& left = full_left[stage];
    const int64_t full_dense = std::min(left, dense);
    const int64_t full_moe = std::min(left - full_dense, moe);
    left -= full_dense + full_moe;
    const double nd = static_cast<double>(dense), nm = static_cast<double>(moe);
    sim::ChunkCosts k;
    k.forward_s =
        nd * (c.dense.forward_s + c.dense.tp_forward_s + c.dense.cp_forward_s) +
        nm * (c.moe.forward_s + c.moe.tp_forward_s + c.moe.cp_forward_s + c.moe.ep_forward_s);
    k.backward_weight_s = nd * c.dense.backward_weight_s + nm * c.moe.backward_weight_s;
    k.backward_input_s = nd * (c.dense.backward_s - c.dense.backward_weight_s +
                               c.dense.tp_backward_s + c.dense.cp_backward_s) +
                         nm * (c.moe.backward_s - c.moe.backward_weight_s + c.moe.tp_backward_s +
                               c.moe.cp_backward_s + c.moe.ep_backward_s);
    k.recompute_s = static_cast<double>(full_dense) *
                        (c.dense.forward_s + c.dense.tp_forward_s + c.dense.cp_forward_s) +
                    static_cast<double>(full_moe) * (c.moe.forward_s + c.moe.tp_forward_s +
                                                     c.moe.cp_forward_s + c.moe.ep_forward_s);
    if (l.recompute == Recompute::selective) {
      k.recompute_s +=
          static_cast<double>(dense - full_dense) *
              c.dense.selective_forward_s(l.recompute_modules) +
          static_cast<double>(moe - full_moe) * c.moe.selective_forward_s(l.recompute_modules);
      if (has(l.recompute_modules, RecomputeModule::moe) || options_.memory.selective_op_sac)
        k.recompute_s += static_cast<double>(moe - full_moe) * c.moe.ep_forward_s;
    }
    if (ch + 2 == bounds.size()) {
      k.forward_s += head.forward_s;
      k.backward_input_s += head.backward_s;
    }
    // The stage's share of exposed gradient sync and of ZeRO-3 gathers, by layers.
    const StageParams& sp = params[stage];
    const double share = sp.layers > 0 ? (nd + nm) / static_cast<double>(sp.layers) : 0;
    const StageClass& cls = shape.classes[shape.class_of_stage[stage]];
    k.dp_grad_sync_s =
        share * dp_exposed_s(l, cls, analytic.stages[stage], /*with_zero3_gathers=*/false);
    if (zero_sharding(l.zero).weights) {
      k.zero3_gather_s =
          collectives_.time_s(Collective::all_gather, dense_shard_groups(l).shard,
                              static_cast<double>(sp.per_gpu()) *
                                  gathered_bytes_per_param(static_cast<double>(sp.per_gpu()),
                                                           static_cast<double>(sp.linear_per_gpu),
                                                           context_.fp8, options_.memory) *
                                  share);
    }
    p.chunks.push_back(k);
  }
  double optimizer = 0;
  for (const StageTiming& st : analytic.stages) optimizer = std::max(optimizer, st.optimizer_s);
  p.optimizer_s = optimizer;
  return p;
}

}  // namespace meshplan
