// The validity rules of a layout, one named predicate each (true: the rule holds). check_layout
// reports a broken rule with its message; the layout search (planner/layout_search.cc) skips
// the candidates that break one and counts them under the predicate's name. A predicate reads
// only the fields its rule is about, so the search may ask it about a partly built layout.
#pragma once

#include "core/layout.h"
#include "core/model_spec.h"

namespace meshplan {

// Tensor parallelism splits the heads, the KV heads (or replicates them tp/kv_heads times), the
// dense MLP width and the experts' MLP width evenly.
bool tp_splits_heads(const Layout& layout, const ModelSpec& model);
bool tp_splits_kv_heads(const Layout& layout, const ModelSpec& model);
bool tp_splits_ffn(const Layout& layout, const ModelSpec& model);
bool tp_splits_expert_ffn(const Layout& layout, const ModelSpec& model);
// Expert parallelism: ep divides the experts (and is 1 for a dense model) and the ranks the
// expert groups are carved from: dp·cp, or tp/etp·cp·dp with etp < tp.
bool ep_splits_experts(const Layout& layout, const ModelSpec& model);
bool ep_fits_dp_cp(const Layout& layout);
// Expert tensor parallelism (Layout::etp): etp divides tp (Megatron-Core's expert layout of
// TP-rank sub-groups) and an MoE model's expert width; etp < tp needs an MoE model, sequence
// parallelism (each TP rank dispatches its own tokens; Megatron-Core asserts it for MoE with
// TP), the pipeline outermost in the rank order (the experts' etp-ep-dp fold covers each stage's
// ranks, Megatron-Core's expert rank order tp-ep-dp-pp) and no hybrid sharding (shard = 0).
bool etp_divides_tp(const Layout& layout);
bool etp_splits_expert_ffn(const Layout& layout, const ModelSpec& model);
bool etp_needs_moe(const Layout& layout, const ModelSpec& model);
bool etp_fold_fits(const Layout& layout);
// Hybrid sharding: the shard group is the innermost `shard` ranks of the dp·cp group, so shard
// divides the inner of dp and cp (in rank order) or is a multiple of it dividing dp·cp; it
// shards something (zero ≥ 1) and holds whole expert groups (ep divides it).
bool shard_divides_dp_cp(const Layout& layout);
bool shard_needs_zero(const Layout& layout);
bool shard_holds_expert_groups(const Layout& layout);
// The pp·vpp chunks divide the layers (unless uneven) and are no more than the layers plus
// kEmbeddingAndLossChunks: an uneven split's first and last chunks may hold no layer, the
// embedding alone and the loss (final norm, LM head) alone, as Megatron-LM places them under
// --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split (each
// counted as one layer of the split; megatron/core/transformer/transformer_block.py
// get_num_layers_to_build at d98e8a64: "Not enough layers" only below zero) and torchtitan
// under first/last_stage_less_layers (generate_llm_fqn_per_model_part).
inline constexpr int64_t kEmbeddingAndLossChunks = 2;
bool chunks_divide_layers(const Layout& layout, const ModelSpec& model);
bool chunks_within_layers(const Layout& layout, const ModelSpec& model);
// dp·mbs divides the global batch.
bool batch_splits(const Layout& layout, const TrainingSpec& training);
// Interleaving (interleaved and zb-interleaved): the micro-batch count is a multiple of pp
// (Megatron-LM; torch.distributed.pipelining's rounds of pp micro-batches); holds for other
// schedules and when the batch does not split.
bool interleaving_fills_pipeline(const Layout& layout, const TrainingSpec& training);
// The schedule's chunks per rank (core/schedule.h): interleaved and zb-interleaved vpp ≥ 2,
// dualpipev and zb-v vpp = 2, the others vpp = 1.
bool schedule_fits_vpp(const Layout& layout);
// DualPipe and DualPipeV need at least 2·pp micro-batches; DualPipe also an even pp and an even
// micro-batch count (half enter from each end). Holds for other schedules, pp = 1, and when the
// batch does not split.
bool dual_pipe_fits(const Layout& layout, const TrainingSpec& training);
// (The same rule on a micro-batch count is dual_pipe_runs, core/schedule.h.)
// Load-balanced causal CP cuts each sequence into 2·cp chunks; under sequence parallelism
// tp divides each CP rank's sequence.
bool cp_splits_sequence(const Layout& layout, const TrainingSpec& training);
bool sp_splits_sequence(const Layout& layout, const TrainingSpec& training);
// Context-parallel variants (Layout::cp_kind): any but ring needs cp > 1; hybrid's all-to-all
// group cp_a2a lies strictly between 1 and cp and divides it (cp_a2a is 0 for the other kinds);
// the all-to-all splits every TP rank's query and KV heads evenly (TransformerEngine's
// AttnFuncWithCPAndQKVOA2A: "requires num_heads % cp_size == 0 for Q, K, V").
bool cp_kind_needs_cp(const Layout& layout);
bool cp_a2a_splits_cp(const Layout& layout);
bool cp_a2a_splits_heads(const Layout& layout, const ModelSpec& model);
// Selective recompute's modules (Layout::recompute_modules): other than the default they need
// recompute=selective, and each must exist in the model (mla_up_proj: MLA; moe_act and moe:
// routed experts; shared_experts: shared experts; mlp: a dense MLP layer).
bool recompute_modules_need_selective(const Layout& layout);
bool recompute_modules_fit_model(const Layout& layout, const ModelSpec& model);
// Offloading the optimizer states needs them sharded by a ZeRO stage ≥ 1 (DeepSpeed's
// offload_optimizer applies to stages 1-3; Megatron-Core offloads its distributed optimizer).
bool offload_needs_zero(const Layout& layout);
// Activation offload moves at most the layers of a stage.
bool act_offload_within_stage(const Layout& layout, const ModelSpec& model);
// Per-stage recompute counts (Layout::recompute_stage_layers) give one count per pipeline stage
// and go with the block method (recompute none or selective; recompute=full recomputes all).
bool stage_recompute_counts_match_pp(const Layout& layout);
bool stage_recompute_needs_block(const Layout& layout);
// EP communication overlap needs expert parallelism to overlap (an MoE model, ep > 1).
bool ep_overlap_needs_ep(const Layout& layout, const ModelSpec& model);
// A dispatcher other than the default likewise needs expert parallelism to dispatch over.
bool dispatch_needs_ep(const Layout& layout, const ModelSpec& model);
// TP communication overlap needs each tensor-parallel group inside one NVLink domain of
// `domain_gpus` GPUs (the cluster's innermost network level, aligned blocks of ranks): Transformer
// Engine's userbuffers, which Megatron-LM's --tp-comm-overlap and NeMo's ub_tp_comm_overlap run
// on, map the peers' buffers through CUDA IPC ("CUDA IPC supports only up to 8 GPUs in an NVLink
// domain") or a multi-node NVLink fabric (MNNVL), never over the inter-node network
// (transformer_engine/common/comm_gemm_overlap/userbuffers/userbuffers-host.cpp, NVIDIA/
// TransformerEngine at d0067d0); PyTorch's async TP (torchtitan) is held to the same domain.
bool tp_overlap_within_domain(const Layout& layout, int64_t domain_gpus);

}  // namespace meshplan
