// Renderings of a scale sweep (planner/scale_sweep.h): a terminal table, CSV, JSON (the stable
// interface) and a Markdown table. Pure functions of the sweep (which records the model,
// cluster and framework names) and its request; no timings, so bytes do not depend on the
// thread count.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "planner/cost_model.h"
#include "planner/scale_sweep.h"

namespace meshplan {

// "gpus" | "seq_len" | "global_batch".
const char* to_string(SweepAxis axis);
// "model_default" | "fixed_sequences" | "tokens_per_step" | "sequences_per_gpu".
const char* to_string(BatchRule rule);

// The heading lines: model, GPU, cluster, batch rule, token budget and price.
std::string sweep_heading(const SweepResult& s, const SweepRequest& request);
// Heading, one row per point, then a line per extended cluster and per point without a layout.
std::string sweep_table(const SweepResult& s, const SweepRequest& request);
// Columns: gpus, seq_len, global_batch, nodes, cluster_extended, layout, step_time_s,
// tokens_per_s, mfu, peak_bytes, capacity_bytes, time_to_train_s, gpu_hours, cost_usd,
// scaling_efficiency, no_layout (the reason's text). Empty cells where a value does not apply.
std::string sweep_csv(const SweepResult& s);
// {model, cluster, gpu, framework, sweep (to_string(SweepAxis)), batch{rule, value}, tokens,
// gpu_hour_cost_usd, rows[]}; each row: gpus, seq_len, global_batch, nodes, cluster_extended,
// search{evaluated, feasible, rejected{}}, then either best (the estimate JSON of `plan`'s
// ranked[0]) with time_to_train_s, gpu_hours, cost_usd, scaling_efficiency (null where they do
// not apply), or no_layout{kind, text, rules[], over_bytes}.
nlohmann::ordered_json sweep_json(const SweepResult& s, const SweepRequest& request);
// The table as GitHub Markdown, then the notes as a list.
std::string sweep_markdown_table(const SweepResult& s, const SweepRequest& request);

}  // namespace meshplan
